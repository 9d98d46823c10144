"""Recording a `tm ask` as one ledger episode: every round's messages and raw reply, the
proposals of every round (superseded ones too, so the vault keeps what the model first
said), and, when the ledger cannot take it, the exchange saved as files instead.

The gates are re-judged against ETV at commit time: a file the user edited while the model
was talking, in any round, blocks every proposal for it.
"""

from __future__ import annotations

import json
import os
import secrets
from typing import Any

from tinymem.ask import AskOptions, AskResult, Round
from tinymem.edits.gates import etv_gate
from tinymem.errors import HeadMovedError, StaleError, TinymemError
from tinymem.etv import verify
from tinymem.gitobjects import MODE_TREE, ObjectWriter
from tinymem.ledger import Draft, Transition, commit_episode, now_iso, response_attachment
from tinymem.notices import emit
from tinymem.proposalrecords import Proposal, store
from tinymem.records import State, entity_key
from tinymem.redact import redact, redact_url
from tinymem.repository import CACHE_DIRNAME, UNRECORDED, Repo
from tinymem.statemap import PROPOSALS, StateView

__all__ = ["conversation", "record"]


def conversation(result: AskResult) -> list[dict[str, str]]:
    """The messages of the last request sent: each earlier round's request is a prefix."""
    return result.rounds[-1].messages if result.rounds else result.prepared.hydration.messages


def _dump(messages: list[dict[str, str]]) -> bytes:
    return json.dumps(messages, indent=1, ensure_ascii=False).encode()


def record(repo: Repo, opts: AskOptions, result: AskResult, *, ref: str | None = None) -> None:
    """`ref`: the ledger the ask started on (HeadMovedError when HEAD left it meanwhile)."""
    called = any(r.call is not None for r in result.rounds)
    try:
        result.committed = commit_episode(
            repo, lambda view, writer: _draft(repo, opts, result, view, writer), ref=ref
        )
    except BaseException as exc:
        if not called:
            raise
        # The model's reply cost time and money: it is never lost because the ledger was busy.
        where = _save_unrecorded(repo, opts, result)
        if isinstance(exc, HeadMovedError):  # its constructor takes the two branches
            raise StaleError(f"{exc}; the model's reply was saved in {where}") from exc
        if isinstance(exc, TinymemError):
            raise type(exc)(f"{exc}; the model's reply was saved in {where}") from exc
        emit(f"the model's reply was saved in {where}; it was not recorded")
        raise


def _save_unrecorded(repo: Repo, opts: AskOptions, result: AskResult) -> str:
    """The exchange as files under `.git/tinymem/unrecorded/<time>/` (prompt, messages,
    replies): what `tm ask` would have recorded."""
    stamp = now_iso().replace(":", "").replace(".", "-")
    where = os.path.join(repo.git.path, CACHE_DIRNAME, UNRECORDED, stamp)
    os.makedirs(where, exist_ok=True)
    files = [("prompt.txt", opts.prompt.encode()), ("messages.json", _dump(conversation(result)))]
    files += [
        (response_attachment(r.number), r.call.text.encode()) for r in result.rounds if r.call
    ]
    for name, data in files:
        with open(os.path.join(where, name), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    return where


def _fresh_ids(proposals: list[Proposal], taken: set[str], writer: ObjectWriter) -> None:
    """Another tm may have recorded a proposal with one of these ids since they were drawn:
    draw again, and keep the repair links pointing at the right records."""
    ours = {p.id for p in proposals}
    for p in proposals:
        if p.id not in taken:
            continue
        new = p.id
        while new in taken or new in ours:
            new = secrets.token_hex(3)
        for q in proposals:
            q.repairs = new if q.repairs == p.id else q.repairs
            q.superseded_by = [new if s == p.id else s for s in q.superseded_by]
        ours.add(new)
        p.id = new


def _round_details(r: Round, api_base: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"round": r.number, "proposals": [p.id for p in r.proposals]}
    if r.error is not None:
        out["error"] = redact(str(r.error), api_base)
    if r.call is not None:
        c = r.call
        out.update(
            seconds=round(c.seconds, 3),
            first_token_seconds=None
            if c.first_token_seconds is None
            else round(c.first_token_seconds, 3),
            usage={"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens},
            aborted=c.aborted,
        )
    if r.follow_up is not None:
        out["sent_back"] = [item.summary() for item in r.sent_back]
        out["follow_up_tokens"] = r.follow_up.tokens
    return out


def _total(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _draft(
    repo: Repo, opts: AskOptions, result: AskResult, view: StateView, writer: ObjectWriter
) -> Draft:
    prep = result.prepared
    hyd = prep.hydration
    episode = result.episode
    episode.transitions = []
    episode.proposals = {}
    details: dict[str, Any] = {
        "model": prep.model,
        "api_base": redact_url(prep.api_base),
        "budget": hyd.budget,
        "prompt_tokens_estimate": hyd.tokens,
        "hydrated": hyd.hydrated,
        "mapped": len(hyd.mapped),
        "stale": hyd.stale,
    }
    if hyd.memory:
        details["notes"] = hyd.memory  # the notes the prompt recalled (PROJECT MEMORY)
    if opts.continues:
        details["continues"] = opts.continues
    attachments = {"prompt.txt": opts.prompt.encode(), "messages.json": _dump(conversation(result))}
    edits: dict[str, tuple[int, str] | None] = {}
    if result.error is not None:
        episode.outcome = "failed"
        details["error"] = redact(str(result.error), prep.api_base)
        details["exit_code"] = result.error.exit_code
    calls = [r.call for r in result.rounds if r.call is not None]
    for r in result.rounds:
        if r.call is not None:
            attachments[response_attachment(r.number)] = r.call.text.encode()
    if calls:
        first = calls[0].first_token_seconds
        details.update(
            seconds=round(sum(c.seconds for c in calls), 3),
            first_token_seconds=None if first is None else round(first, 3),
            usage={
                "prompt_tokens": _total([c.prompt_tokens for c in calls]),
                "completion_tokens": _total([c.completion_tokens for c in calls]),
            },
        )
    if len(result.rounds) > 1 or prep.repair:
        details["rounds"] = [_round_details(r, prep.api_base) for r in result.rounds]
        details["repair"] = {"limit": prep.repair, "stopped": result.stopped}
    if result.outcome is not None:
        proposals = result.outcome.proposals
        _fresh_ids(proposals, set(view.proposal_ids()), writer)
        etv_now = verify(repo, view)
        stale, drifted = etv_now.stale_keys(), {d.path for d in etv_now.drift}
        for p in proposals:
            if p.note is not None:
                p.note["source"] = f"model:{prep.model}"
            p.gates["ETV"] = etv_gate(p, stale, drifted)
            oid = store(writer, p)
            edits[f"{PROPOSALS}/{p.id}"] = (MODE_TREE, oid)
            episode.proposals[p.id] = oid
            if p.status == "superseded" or p.path is None:
                continue
            for e in p.entities:
                if e.artifact is not None:
                    episode.transitions.append(
                        Transition(
                            entity_key(p.path, e.symbol),
                            None,
                            State.PROPOSED,
                            e.artifact,
                            f"proposed by {prep.model} ({p.id})",
                        )
                    )
        details["proposals"] = [
            {
                "id": p.id,
                "path": p.path,
                "kind": p.kind,
                "confidence": p.confidence,
                "gates": p.gates,
                "round": p.round,
                "repairs": p.repairs,
                "status": p.status,
            }
            for p in proposals
        ]
        details["refused"] = result.outcome.refused
        live = result.live
        if result.aborted:
            episode.outcome = "aborted"
        else:
            blocked = sum(1 for p in live if p.blocked)
            episode.outcome = (
                f"{len(live)} proposal(s), {blocked} blocked" if live else "no proposals"
            )
            repairs = len(result.rounds) - 1
            if repairs:
                episode.outcome += f", {repairs} repair round(s)"
    episode.details = details
    return Draft(episode=episode, changes=edits, attachments=attachments)
