"""What each `tm mcp` tool does, as plain calls into the core: the answers are the documents
the matching `--json` commands print (`tm status`, `tm state`, `tm log`, `tm blame`, `tm show`,
`tm diff`, `tm accept`, `tm reject`), computed by the same functions.

Every call opens the repository again and reads the ledger tip then: between two calls
another tm may have recorded an episode, or `git switch` may have chosen another branch's
ledger. Paths are relative to the repository's root (`tm mcp` runs there). Errors are the
core's `TinymemError`s; `server.py` turns them into tool errors."""

from __future__ import annotations

from typing import Any

from tinymem.errors import UsageError
from tinymem.repository import Repo
from tinymem.sync import open_synced

__all__ = [
    "accept",
    "blame",
    "context",
    "log",
    "propose",
    "reject",
    "repo_at",
    "show",
    "state",
    "status",
]

LOG_DEFAULT = 20


def repo_at(workdir: str) -> Repo:
    from tinymem.ledger import current

    repo = open_synced(workdir)
    current(repo)  # a repository without tm, or a detached HEAD: one sentence, at once
    return repo


def context(workdir: str, query: str, paths: list[str], budget: int | None) -> str:
    """What `tm ask` would show the model for this request (no model is called, nothing is
    recorded): tm's context section, then what it would have said before calling."""
    from tinymem.ask import AskOptions, prepare

    if not query.strip():
        raise UsageError("query is empty; say what you are about to change")
    if budget is not None and budget < 1:
        raise UsageError(f"budget must be a positive number of tokens, got {budget}")
    flags: dict[str, str | None] = {"repair": "0"}  # no repair reserve: all of it is shown
    if budget is not None:
        flags["budget"] = str(budget)
    prep = prepare(repo_at(workdir), AskOptions(prompt=query, files=paths, flags=flags))
    text = prep.hydration.context
    if prep.notices:
        text += "\n[TM NOTICES]\n" + "\n".join(prep.notices) + "\n"
    return text or "(tm holds nothing relevant to this request)\n"


def status(workdir: str) -> dict[str, Any]:
    from tinymem.etv import verify
    from tinymem.ledger import current
    from tinymem.pendingids import pending_ids
    from tinymem.statusview import drifted_notes, merged_drift, status_doc

    repo = repo_at(workdir)
    view = current(repo)
    report = verify(repo, view)
    proposals = pending_ids(repo, view)
    drifted = drifted_notes(repo, view, report)
    return status_doc(repo, report, proposals, merged_drift(repo, report), drifted)


def state(workdir: str, paths: list[str]) -> dict[str, Any]:
    from tinymem.statelist import selection, state_rows

    repo = repo_at(workdir)
    return {"entities": state_rows(repo, selection(repo, paths))}


def log(workdir: str, n: int | None, entity: str | None) -> dict[str, Any]:
    from tinymem.auditlog import log as entries
    from tinymem.auditlog import parse_target

    if n is not None and n < 0:
        raise UsageError(f"n must be zero or more, got {n}")
    repo = repo_at(workdir)
    target = parse_target(repo, entity) if entity else None
    return {"episodes": entries(repo, target, limit=LOG_DEFAULT if n is None else n)}


def blame(workdir: str, path: str, lines: str | None) -> dict[str, Any]:
    from tinymem.blame import blame as attribute
    from tinymem.blame import parse_range

    repo = repo_at(workdir)
    start, end = parse_range(lines) if lines else (1, None)
    return attribute(repo, repo.rel(path), start, end).to_json()


def show(workdir: str, episode: str) -> dict[str, Any]:
    from tinymem.serve.chat import ServeSettings
    from tinymem.serve.views import episode as episode_view

    repo_at(workdir)
    return episode_view(ServeSettings(workdir), episode)


def propose(workdir: str, text: str, source: str) -> dict[str, Any]:
    """The edits in `text` as proposals of one episode, each with its gates run as
    `tm accept` would run them now and the diff it would write."""
    from tinymem.ledger import current
    from tinymem.mcp.propose import propose as record
    from tinymem.proposalview import proposal_doc

    repo = repo_at(workdir)
    made = record(repo, text, source)
    view = current(repo)  # the tip that holds them (or a later one: they are pending there)
    pending = set(view.proposal_ids())
    c = made.committed
    return {
        "episode": c.episode.id if c else None,
        "outcome": c.episode.outcome if c else None,
        "proposals": [
            proposal_doc(repo, view, p) if p.id in pending else {"id": p.id, "gone": True}
            for p in made.proposals
        ],
        "refused": made.refused,
    }


def accept(workdir: str, ids: list[str], allow_delete: bool, via: str) -> dict[str, Any]:
    from tinymem.accept import accept as promote
    from tinymem.acceptadvice import blocked_line
    from tinymem.proposalview import accept_doc

    if not ids:
        raise UsageError("ids is empty; give the proposal ids tm_propose returned")
    result = promote(repo_at(workdir), ids, allow_delete=allow_delete, via=via)
    doc = accept_doc(result)
    why = {c.proposal.id: blocked_line(c) for c in result.plan.checks if not c.ok}
    for entry in doc["blocked"]:
        entry["why"] = why.get(entry["id"])
    return doc


def reject(workdir: str, ids: list[str], why: str | None, via: str) -> dict[str, Any]:
    from tinymem.accept import reject as drop
    from tinymem.accept import select
    from tinymem.ledger import current

    if not ids:
        raise UsageError("ids is empty; give the proposal ids to reject")
    repo = repo_at(workdir)
    chosen = [p.id for p in select(current(repo), ids, every=False)]
    reason = why.strip() if why is not None and why.strip() else None
    committed = drop(repo, ids, why=reason, via=via)
    return {"episode": committed.episode.id, "commit": committed.commit, "rejected": chosen}
