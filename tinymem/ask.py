"""`tm ask`: ETV, hydration, one model call, and the reply recorded as gated proposals.

Every call is an episode, including failed and aborted ones: the exact messages sent, the raw
reply, model, timings, token counts and hydrated entity keys are stored in its ledger commit.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from tinymem import config as cfg
from tinymem.edits.proposals import Outcome, build
from tinymem.edits.reply import parse_reply
from tinymem.errors import ModelError, TinymemError, UsageError
from tinymem.etv import EtvReport, verify
from tinymem.gitobjects import MODE_TREE, ObjectWriter
from tinymem.hydration.hydrate import Hydration, hydrate
from tinymem.hydration.relevance import Request
from tinymem.ledger import (
    Committed,
    Draft,
    Episode,
    Transition,
    commit_episode,
    current,
    history,
    now_iso,
)
from tinymem.llm import CallResult, OnText, call
from tinymem.notices import emit
from tinymem.proposalrecords import store
from tinymem.records import State, entity_key
from tinymem.redact import redact, redact_url
from tinymem.repository import CACHE_DIRNAME, UNRECORDED, Repo
from tinymem.statemap import PROPOSALS, StateView


@dataclass
class AskOptions:
    prompt: str
    files: list[str] = field(default_factory=list)
    flags: dict[str, str | None] = field(default_factory=dict)  # model, apiBase, budget, ...


@dataclass
class Prepared:
    view: StateView
    etv: EtvReport
    hydration: Hydration
    model: str
    api_base: str | None
    context: int
    timeout: float
    max_reply: int


@dataclass
class AskResult:
    prepared: Prepared
    call: CallResult | None
    outcome: Outcome | None
    committed: Committed | None
    error: ModelError | None = None


def prepare(repo: Repo, opts: AskOptions) -> Prepared:
    view = current(repo)
    values = cfg.resolve(repo.git, opts.flags)
    context = cfg.as_int(values, "context") or 8192
    budget = cfg.as_int(values, "budget") or max(512, context - max(1024, context // 4))
    etv = verify(repo, view)
    recent = list(islice(history(repo), 6))
    files = [repo.rel(f) for f in opts.files]
    hyd = hydrate(view, etv, opts.prompt, files=files, budget=budget, recent=recent)
    return Prepared(
        view=view,
        etv=etv,
        hydration=hyd,
        model=values["model"].value or cfg.DEFAULT_MODEL,
        api_base=values["apiBase"].value,
        context=context,
        timeout=float(cfg.as_int(values, "timeout") or 120),
        max_reply=_max_reply(values),
    )


# Memory grows with the reply in litellm's stream handling and in reading the reply (a 3.7 MB
# reply: 0.85 GB peak RSS, see docs/architecture.md); no small model writes more than this.
MAX_REPLY_CEILING = 1_000_000


def _max_reply(values: dict[str, cfg.Value]) -> int:
    wanted = cfg.as_int(values, "maxReply") or 200_000
    if wanted > MAX_REPLY_CEILING:
        raise UsageError(
            f"maxReply {wanted} is above tm's ceiling of {MAX_REPLY_CEILING} characters"
            " (memory grows with the reply); set a smaller TM_MAX_REPLY / tinymem.maxReply"
        )
    return wanted


def ask(repo: Repo, opts: AskOptions, on_text: OnText | None = None) -> AskResult:
    prep = prepare(repo, opts)
    hyd = prep.hydration
    result = AskResult(prep, None, None, None)
    try:
        result.call = call(
            prep.model,
            hyd.messages,
            api_base=prep.api_base,
            timeout=prep.timeout,
            context=prep.context,
            max_reply_chars=prep.max_reply,
            on_text=on_text,
        )
    except ModelError as exc:
        result.error = exc
    try:
        result.committed = commit_episode(
            repo, lambda view, writer: _record(repo, opts, result, view, writer)
        )
    except BaseException as exc:
        if result.call is None:
            raise
        # The model's reply cost time and money: it is never lost because the ledger was busy.
        where = _save_unrecorded(repo, opts, result)
        if isinstance(exc, TinymemError):
            raise type(exc)(f"{exc}; the model's reply was saved in {where}") from exc
        emit(f"the model's reply was saved in {where}; it was not recorded")
        raise
    return result


def _save_unrecorded(repo: Repo, opts: AskOptions, result: AskResult) -> str:
    """The exchange as files under `.git/tinymem/unrecorded/<time>/` (prompt, messages,
    reply): what `tm ask` would have recorded."""
    assert result.call is not None
    stamp = now_iso().replace(":", "").replace(".", "-")
    where = os.path.join(repo.git.path, CACHE_DIRNAME, UNRECORDED, stamp)
    os.makedirs(where, exist_ok=True)
    messages = json.dumps(result.prepared.hydration.messages, indent=1, ensure_ascii=False)
    for name, data in (
        ("prompt.txt", opts.prompt.encode()),
        ("messages.json", messages.encode()),
        ("response.txt", result.call.text.encode()),
    ):
        with open(os.path.join(where, name), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    return where


def _record(
    repo: Repo, opts: AskOptions, result: AskResult, view: StateView, writer: ObjectWriter
) -> Draft:
    prep = result.prepared
    hyd = prep.hydration
    episode = Episode(kind="ask", summary=" ".join(opts.prompt.split())[:120])
    details: dict[str, Any] = {
        "model": prep.model,
        "api_base": redact_url(prep.api_base),
        "budget": hyd.budget,
        "prompt_tokens_estimate": hyd.tokens,
        "hydrated": hyd.hydrated,
        "mapped": len(hyd.mapped),
        "stale": hyd.stale,
    }
    attachments = {
        "prompt.txt": opts.prompt.encode(),
        "messages.json": json.dumps(hyd.messages, indent=1, ensure_ascii=False).encode(),
    }
    edits: dict[str, tuple[int, str] | None] = {}
    if result.error is not None:
        episode.outcome = "failed"
        details["error"] = redact(str(result.error), prep.api_base)
        details["exit_code"] = result.error.exit_code
    elif result.call is not None:
        c = result.call
        attachments["response.txt"] = c.text.encode()
        details.update(
            seconds=round(c.seconds, 3),
            first_token_seconds=None
            if c.first_token_seconds is None
            else round(c.first_token_seconds, 3),
            usage={"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens},
        )
        if c.aborted:
            episode.outcome = "aborted"
        # ETV again now: a file the user edited while the model was talking must block.
        etv_now = verify(repo, view)
        hydrated = {h["entity"]: h["artifact"] for h in hyd.hydrated}
        outcome = build(
            view,
            writer,
            repo.workdir,
            parse_reply(c.text),
            etv_now,
            hydrated,
            episode.id,
            qualified=Request.parse(opts.prompt).qualified,
        )
        result.outcome = outcome
        for p in outcome.proposals:
            oid = store(writer, p)
            edits[f"{PROPOSALS}/{p.id}"] = (MODE_TREE, oid)
            episode.proposals[p.id] = oid
            for e in p.entities:
                if e.artifact is not None and p.path is not None:
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
            }
            for p in outcome.proposals
        ]
        details["refused"] = outcome.refused
        if not c.aborted:
            blocked = sum(1 for p in outcome.proposals if p.blocked)
            episode.outcome = (
                f"{len(outcome.proposals)} proposal(s), {blocked} blocked"
                if outcome.proposals
                else "no proposals"
            )
    episode.details = details
    return Draft(episode=episode, changes=edits, attachments=attachments)
