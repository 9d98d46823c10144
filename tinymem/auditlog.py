"""The core of `tm log` and `tm show`: the ledger read back as an audit trail.

Everything here is read-only. Episodes are read from the ledger commits of the current
branch's `refs/tinymem/heads/<branch>` (first-parent chain, newest first); proposals are read
from the commit that recorded or resolved them. The dictionaries built here are the stable
`--json` schemas documented in docs/formats.md: add keys, never rename or remove them.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pygit2

from tinymem.branches.refs import ledger_refs
from tinymem.errors import CorruptStateError, UsageError
from tinymem.ledger import Episode, history, read_episode, resolve_episode, response_attachment
from tinymem.records import KEY_SEPARATOR, State, split_key
from tinymem.repository import Repo
from tinymem.statemap import EPISODE, StateView, proposal_record
from tinymem.undohistory import undid, with_undone

# Attachments `tm show` can print verbatim, by option name.
ATTACHMENTS = {"messages": "messages.json", "response": "response.txt", "prompt": "prompt.txt"}
# A proposal's gates as recorded at ask time that block a promotion (B is never a block there).
_BLOCKING_GATES = ("A", "ETV")


@dataclass(frozen=True)
class Origin:
    """Who stands behind an episode's changes: the label `tm blame` and `tm log` print."""

    author: str  # "import" | "user" | a model name | "model" | the episode kind
    model: str | None
    summary: str  # the prompt summary for model work, else the episode's own summary
    ask_episode: str | None = None  # the ask episode an accepted proposal came from


class Ledger:
    """Cached read access to ledger commits, episodes and proposals."""

    def __init__(self, repo: Repo, tips: Sequence[str] = ()) -> None:
        """The current branch's ledger (with what ledger merges brought in), or the ledgers
        whose tips are given."""
        self.repo = repo
        self.tips = tips
        self._episodes: dict[str, Episode] = {}
        self._by_id: dict[str, str] | None = None  # episode id -> commit id

    def episode(self, commit: str) -> Episode:
        ep = self._episodes.get(commit)
        if ep is None:
            ep = read_episode(self.repo.git, commit)
            self._episodes[commit] = ep
        return ep

    def walk(self) -> Iterator[tuple[str, Episode]]:
        for commit, ep in history(self.repo, first_parent=False, tips=self.tips):
            self._episodes.setdefault(commit, ep)
            yield commit, ep

    def commit_of(self, episode_id: str) -> str | None:
        if self._by_id is None:
            self._by_id = {ep.id: commit for commit, ep in self.walk()}
        return self._by_id.get(episode_id)

    def parent(self, commit: str) -> str | None:
        obj = self.repo.git[commit]
        assert isinstance(obj, pygit2.Commit)
        parents = obj.parent_ids
        return str(parents[0]) if parents else None

    def proposals(self, commit: str, ep: Episode) -> list[dict[str, Any]]:
        """Every proposal this episode recorded, updated or resolved, as stored JSON.

        A proposal that left the pending set in this episode (accepted: its id maps to None)
        is read from the parent commit, where it was still stored.
        """
        out: list[dict[str, Any]] = []
        parent_view: StateView | None = None
        for pid in sorted(ep.proposals):
            oid = ep.proposals[pid]
            raw: dict[str, Any] | None = None
            if oid is not None:
                raw = _json_blob(self.repo.git, oid)
                state = "recorded"
            else:
                state = "resolved"
                parent = self.parent(commit)
                if parent is not None:
                    if parent_view is None:
                        parent_view = StateView(self.repo.git, parent)
                    data = parent_view.proposal_blob(pid)
                    raw = None if data is None else _json_loads(data)
            doc = dict(raw) if raw is not None else {"id": pid, "missing": True}
            doc.setdefault("id", pid)
            doc["record"] = oid
            doc["change"] = state
            out.append(doc)
        return out

    def origin(self, commit: str, ep: Episode, path: str | None = None) -> Origin:
        if ep.kind == "init":
            return Origin("import", None, ep.summary)
        if ep.kind in ("adopt", "reject"):
            return Origin("user", None, ep.summary)
        if ep.kind == "ask":
            model = _str(ep.details.get("model"))
            return Origin(model or "model", model, ep.summary, ep.id)
        if ep.kind == "accept":
            return self._accept_origin(commit, ep, path)
        model = _str(ep.details.get("model"))
        return Origin(model or ep.kind, model, ep.summary)

    def _accept_origin(self, commit: str, ep: Episode, path: str | None) -> Origin:
        # The accept episode names proposal ids; each proposal names the ask episode that
        # produced it, and that episode holds the model and the user's prompt.
        models: list[str] = []
        summary: str | None = None
        ask_id: str | None = None
        for prop in self.proposals(commit, ep):
            if path is not None and prop.get("path") not in (path, None):
                continue
            source = _str(prop.get("episode"))
            if source is None:
                continue
            ask_commit = self.commit_of(source)
            if ask_commit is None:
                continue
            ask = self.episode(ask_commit)
            model = _str(ask.details.get("model"))
            if model and model not in models:
                models.append(model)
            if summary is None:
                summary, ask_id = ask.summary, ask.id
        model = ", ".join(models) or _str(ep.details.get("model"))
        return Origin(model or "model", model, summary or ep.summary, ask_id)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _json_loads(data: bytes) -> dict[str, Any] | None:
    try:
        raw = json.loads(data)
    except ValueError:
        return None
    return raw if isinstance(raw, dict) else None


def _json_blob(repo: pygit2.Repository, oid: str) -> dict[str, Any] | None:
    """A stored proposal's JSON (`oid`: its tree or, in older repositories, its record)."""
    try:
        return _json_loads(proposal_record(repo, oid))
    except CorruptStateError:
        return None


def _text_blob(repo: pygit2.Repository, oid: str | None) -> str | None:
    if oid is None:
        return ""
    obj = repo.get(oid)
    if not isinstance(obj, pygit2.Blob):
        return None
    return bytes(obj.data).decode("utf-8", "replace")


# ---------------------------------------------------------------------------------- tm log


@dataclass(frozen=True)
class Target:
    """What `tm log` is filtered to: a repository path (file or directory) or one entity."""

    path: str
    symbol: str | None  # None: the path and everything below it

    def matches_path(self, path: str | None) -> bool:
        if path is None:
            return False
        if not self.path:
            return True
        return path == self.path or path.startswith(self.path.rstrip("/") + "/")

    def matches_entity(self, key: str) -> bool:
        path, symbol = split_key(key)
        if self.symbol is None:
            return self.matches_path(path)
        return path == self.path and symbol == self.symbol


def parse_target(repo: Repo, raw: str) -> Target:
    """`PATH` or `PATH::Symbol`, the path relative to the current directory."""
    if KEY_SEPARATOR in raw:
        path, symbol = split_key(raw)
        if not symbol:
            raise UsageError(f"{raw!r} names no symbol after {KEY_SEPARATOR}")
        return Target(repo.rel(path), symbol)
    return Target(repo.rel(raw), None)


def touches(ledger: Ledger, commit: str, ep: Episode, target: Target) -> bool:
    if any(target.matches_entity(t.entity) for t in ep.transitions):
        return True
    if target.symbol is None:
        if any(target.matches_path(p) for p in ep.files):
            return True
        # Proposals that never produced a transition (a delete, a blocked add) still name
        # their file in the ask episode's details.
        for p in ep.details.get("proposals") or []:
            if isinstance(p, dict) and target.matches_path(_str(p.get("path"))):
                return True
    # A proposal updated here without any transition (a reject) belongs to the history of
    # what it proposed.
    for oid in ep.proposals.values():
        raw = None if oid is None else _json_blob(ledger.repo.git, oid)
        if raw is None:
            continue
        path = _str(raw.get("path"))
        if target.symbol is None and target.matches_path(path):
            return True
        for e in raw.get("entities") or []:
            if (
                isinstance(e, dict)
                and path
                and target.matches_entity(f"{path}{KEY_SEPARATOR}{e.get('symbol')}")
            ):
                return True
    return False


def blocked_reasons(ep: Episode) -> list[dict[str, str]]:
    """Proposals of an ask episode that a gate blocked, with the first blocking gate."""
    out: list[dict[str, str]] = []
    for p in ep.details.get("proposals") or []:
        if not isinstance(p, dict):
            continue
        gates = p.get("gates") or {}
        for gate in _BLOCKING_GATES:
            result = gates.get(gate, "pass")
            if result != "pass":
                out.append({"proposal": str(p.get("id")), "reason": f"{gate}: {result}"})
                break
    return out


def changed_entities(ep: Episode) -> tuple[int, int]:
    """(entities whose authoritative state changed, entities proposed) in this episode."""
    changed = {t.entity for t in ep.transitions if t.to_state is not State.PROPOSED}
    proposed = {t.entity for t in ep.transitions if t.to_state is State.PROPOSED}
    return len(changed), len(proposed)


def log_entry(
    ledger: Ledger, commit: str, ep: Episode, undone_by: str | None = None
) -> dict[str, Any]:
    """`undone_by`: the undo episode in force that reversed this one."""
    origin = ledger.origin(commit, ep)
    changed, proposed = changed_entities(ep)
    error = ep.details.get("error")
    return {
        "commit": commit,
        "episode": ep.id,
        "branch": ep.branch or None,
        "time": ep.time,
        "kind": ep.kind,
        "who": ep.who,
        "author": origin.author,
        "model": origin.model,
        "summary": ep.summary,
        "prompt_summary": origin.summary if origin.model else None,
        "outcome": ep.outcome,
        "error": error if isinstance(error, str) else None,
        "blocked": blocked_reasons(ep),
        "entities_changed": changed,
        "entities_proposed": proposed,
        "files": sorted(ep.files),
        "proposals": sorted(ep.proposals),
        "undid": undid(ep),
        "undone_by": undone_by,
    }


def log(
    repo: Repo,
    target: Target | None = None,
    *,
    limit: int | None = None,
    kind: str | None = None,
    branches: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Episodes newest first, filtered to a path or entity and a kind, at most `limit`; of the
    current branch's ledger, or of the named branches' together (each entry then says in
    `branches` which of them hold it)."""
    if limit is not None and limit < 0:
        raise UsageError("-n must be zero or more")
    ledgers = ledger_refs(repo.git)
    unknown = [b for b in branches if b not in ledgers]
    if unknown:
        have = ", ".join(ledgers) or "none"
        raise UsageError(f"branch {unknown[0]} has no State Map (branches with one: {have})")
    holders = _holders(repo, {b: ledgers[b] for b in branches}) if branches else {}
    ledger = Ledger(repo, [ledgers[b] for b in branches])
    out: list[dict[str, Any]] = []
    # Newest first, an undo comes before what it undid: past the limit nothing is marked.
    for commit, ep, by in with_undone(ledger.walk()):
        if limit is not None and len(out) >= limit:
            break
        if kind is not None and ep.kind != kind:
            continue
        if target is not None and not touches(ledger, commit, ep, target):
            continue
        entry = log_entry(ledger, commit, ep, by)
        if branches:
            entry["branches"] = holders.get(commit, [])
        out.append(entry)
    return out


def _holders(repo: Repo, tips: dict[str, str]) -> dict[str, list[str]]:
    """Ledger commit -> the branches whose ledger holds it."""
    out: dict[str, list[str]] = {}
    for branch, tip in tips.items():
        for commit in repo.git.walk(pygit2.Oid(hex=tip)):
            out.setdefault(str(commit.id), []).append(branch)
    return out


# --------------------------------------------------------------------------------- tm show


def proposal_diff(repo: pygit2.Repository, prop: dict[str, Any]) -> str:
    """Unified diff of each proposed entity against the artifact it was written against."""
    path = prop.get("path") or "?"
    entities = prop.get("entities") or []
    chunks: list[str] = []
    if not entities and prop.get("block"):
        # An unresolved block names no entity: show what the model wrote.
        text = _text_blob(repo, prop["block"])
        entities = [{"symbol": "(block)", "op": "add", "artifact": prop["block"], "base": None}]
        if text is None:
            return f"(the block {prop['block'][:12]} is missing from the vault)\n"
    for ent in entities:
        symbol = ent.get("symbol", "?")
        base, artifact = ent.get("base"), ent.get("artifact")
        before = _text_blob(repo, base)
        after = _text_blob(repo, artifact)
        name = f"{path}{KEY_SEPARATOR}{symbol}"
        if before is None or after is None:
            gone = base if before is None else artifact
            chunks.append(f"({name}: artifact {str(gone)[:12]} is missing from the vault)\n")
            continue
        a = before.splitlines(keepends=True)
        b = after.splitlines(keepends=True)
        # Without a final newline difflib glues the next header onto the last line.
        for lines in (a, b):
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n\\ No newline at end of file\n"
        chunks.append(
            "".join(
                difflib.unified_diff(
                    a,
                    b,
                    f"a/{name}" if base is not None else "/dev/null",
                    f"b/{name}" if artifact is not None else "/dev/null",
                )
            )
        )
    return "".join(chunks)


def _blocked_of(prop: dict[str, Any]) -> str | None:
    gates = prop.get("gates") or {}
    for gate in _BLOCKING_GATES:
        result = gates.get(gate, "pass")
        if result != "pass":
            return f"{gate}: {result}"
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _num(value: Any) -> int | float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def show(repo: Repo, ref: str) -> dict[str, Any]:
    """Everything one episode recorded, with its proposals' diffs."""
    commit = resolve_episode(repo, ref)
    ledger = Ledger(repo)
    ep = ledger.episode(commit)
    origin = ledger.origin(commit, ep)
    view = StateView(repo.git, commit)
    d = ep.details
    usage = _dict(d.get("usage"))
    accept_gates = _dict(d.get("gates"))
    proposals = []
    for prop in ledger.proposals(commit, ep):
        entry = {
            "id": prop.get("id"),
            "change": prop.get("change"),
            "record": prop.get("record"),
            "missing": bool(prop.get("missing")),
            "from_episode": prop.get("episode"),
            "path": prop.get("path"),
            "kind": prop.get("kind"),
            # An accept removes the proposal from proposals/: its stored status still says
            # pending, but in this episode it was accepted.
            "status": "accepted"
            if ep.kind == "accept" and prop.get("change") == "resolved"
            else prop.get("status", "pending"),
            "confidence": prop.get("confidence"),
            "reason": prop.get("reason"),
            "hydrated": prop.get("hydrated"),
            "elisions": prop.get("elisions") or [],
            "entities": [
                {
                    "symbol": e.get("symbol"),
                    "op": e.get("op"),
                    "artifact": e.get("artifact"),
                    "base": e.get("base"),
                }
                for e in prop.get("entities") or []
            ],
            "gates": prop.get("gates") or {},
            "blocked": _blocked_of(prop),
            "round": prop.get("round", 0),
            "repairs": prop.get("repairs"),
            "superseded_by": prop.get("superseded_by") or [],
            # Gate results as run again in this episode (accept), when it recorded them.
            "gates_now": accept_gates.get(str(prop.get("id"))),
            "diff": "" if prop.get("missing") else proposal_diff(repo.git, prop),
        }
        proposals.append(entry)
    attachments = []
    sub = view.subtree(EPISODE)
    if sub is not None:
        tree = repo.git[sub]
        assert isinstance(tree, pygit2.Tree)
        attachments = sorted(e.name or "" for e in tree)
    return {
        "commit": commit,
        "parent": ledger.parent(commit),
        "episode": ep.id,
        "kind": ep.kind,
        "time": ep.time,
        "who": ep.who,
        "author": origin.author,
        "model": origin.model,
        "api_base": _str(d.get("api_base")),
        "summary": ep.summary,
        "prompt_summary": origin.summary if origin.model else None,
        "outcome": ep.outcome,
        "error": _str(d.get("error")),
        "files": [
            {
                "path": p,
                "snapshot": rec.get("snapshot"),
                "meta": rec.get("meta"),
                "deleted": rec.get("snapshot") is None,
                # The record left the State Map: a path of the other kind took its place.
                "left": rec.get("snapshot") is None and rec.get("meta") is None,
            }
            for p, rec in sorted(ep.files.items())
        ],
        "transitions": [t.to_json() for t in ep.transitions],
        "proposals": proposals,
        "refused": d.get("refused") or [],
        "tokens": {
            "prompt": _num(usage.get("prompt_tokens")),
            "completion": _num(usage.get("completion_tokens")),
            "prompt_estimate": _num(d.get("prompt_tokens_estimate")),
            "budget": _num(d.get("budget")),
        },
        "timings": {
            "seconds": _num(d.get("seconds")),
            "first_token_seconds": _num(d.get("first_token_seconds")),
        },
        "hydrated": d.get("hydrated") or [],
        "notes": [
            {"id": nid, "scope": rec.get("scope"), "record": rec.get("record")}
            for nid, rec in sorted(ep.notes.items())
        ],
        "undid": undid(ep),
        "undone_by": _undone_by(ledger, ep),
        "attachments": attachments,
        "details": d,
    }


def _undone_by(ledger: Ledger, ep: Episode) -> str | None:
    """The undo in force that reversed `ep` (None: it stands)."""
    for _commit, later, by in with_undone(ledger.walk()):
        if later.id == ep.id:
            return by
    return None


def attachment(repo: Repo, ref: str, which: str, round_number: int | None = None) -> bytes:
    """The exact bytes of an episode attachment (`messages`, `response` or `prompt`).

    With `round_number` (an ask with repair rounds): `response` is that round's reply and
    `messages` the messages that round sent (a prefix of the stored conversation).
    """
    name = ATTACHMENTS[which]
    if which == "response" and round_number is not None:
        name = response_attachment(round_number)
    commit = resolve_episode(repo, ref)
    data = StateView(repo.git, commit).episode_blob(name)
    if data is None:
        ep = read_episode(repo.git, commit)
        if round_number:
            raise UsageError(f"episode {ep.id} has no round {round_number}")
        raise UsageError(
            f"episode {ep.id} ({ep.kind}) has no {name}: only episodes that called a model"
            " store one"
        )
    if which == "messages" and round_number is not None:
        messages = json.loads(data)
        # Round N sent the request, then N replies each followed by its follow-up.
        wanted = 2 + 2 * round_number
        if round_number < 0 or wanted > len(messages):
            ep = read_episode(repo.git, commit)
            raise UsageError(f"episode {ep.id} has no round {round_number}")
        data = json.dumps(messages[:wanted], indent=1, ensure_ascii=False).encode()
    return data
