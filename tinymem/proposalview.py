"""What `tm diff --json` and `tm accept --json` print, as data: the same documents answer
`tm mcp`'s tm_propose and tm_accept. The gates are run at the time of asking."""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tinymem.accept import AcceptResult
    from tinymem.proposalrecords import Proposal
    from tinymem.repository import Repo
    from tinymem.statemap import StateView

__all__ = ["accept_doc", "proposal_doc"]


def proposal_doc(repo: Repo, view: StateView, p: Proposal) -> dict[str, Any]:
    """One proposal with its gates run now and the unified diff accepting it would write."""
    from tinymem.accept import plan, unified_diff
    from tinymem.acceptadvice import blocked_line, confirmable

    single = plan(repo, view, [p])
    check = single.checks[0]
    fp = single.files.get(p.path or "")
    diff = unified_diff(fp) if fp is not None and check.ok else ""
    preview = None  # the command whose writing `diff` shows, when accepting as is writes nothing
    if not check.ok and confirmable(p) and p.path is not None:
        # What `tm accept ID --path FILE` would write: the user decides on seeing it.
        placed = plan(repo, view, [p], placed={p.path})
        would = placed.files.get(p.path)
        if placed.checks[0].ok and would is not None:
            diff = unified_diff(would)
            preview = f"tm accept {p.id} --path {shlex.quote(p.path)}"
    elif check.blocked is not None and check.blocked.gate == "ETV" and p.path is not None:
        # What `--overwrite-stale` would write over the user's text: seen before it is named.
        names = _overwrite_names(check.blocked.detail)
        if names:
            forced = plan(repo, view, [p], overwrite_stale=set(names))
            would = forced.files.get(p.path)
            if forced.checks[0].ok and would is not None:
                diff = unified_diff(would)
                preview = f"tm accept {p.id} " + " ".join(
                    f"--overwrite-stale {shlex.quote(n)}" for n in names
                )
    lines = diff.splitlines()
    return {
        "id": p.id,
        "path": p.path,
        "kind": p.kind,
        "confidence": p.confidence,
        "entities": [{"symbol": e.symbol, "op": e.op} for e in p.entities],
        "gates": [{"gate": g.gate, "ok": g.ok, "detail": g.detail} for g in check.gates],
        "blocked": None if check.ok or check.blocked is None else blocked_line(check),
        "notes": check.notes,
        "note": p.note,
        "diff": diff,
        "preview": preview,
        "added": sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++")),
        "removed": sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---")),
    }


def _overwrite_names(detail: str) -> list[str]:
    """The names a STALE gate's reason tells the user to give `--overwrite-stale`."""
    names: list[str] = []
    for quoted in re.findall(r"--overwrite-stale ('[^']*'|[^ `]+)", detail):
        names.extend(shlex.split(quoted))
    return list(dict.fromkeys(names))


def accept_doc(result: AcceptResult) -> dict[str, Any]:
    """What an accept promoted, blocked (gate and detail) and wrote."""
    from tinymem.gitobjects import blob_id

    checks = result.plan.checks
    c = result.committed
    return {
        "episode": c.episode.id if c else None,
        "commit": c.commit if c else None,
        "promoted": [k.proposal.id for k in checks if k.ok],
        "blocked": [
            {"id": k.proposal.id, "gate": g.gate, "detail": g.detail}
            for k in checks
            if not k.ok and (g := k.blocked) is not None
        ],
        "files": sorted({k.proposal.path for k in checks if k.ok and k.proposal.path}),
        "overwritten": {
            key: blob_id(text) for key, text in sorted(result.plan.overwritten.items())
        },
    }
