"""What `tm state` lists (and `tm serve`'s `/state`): every entity of the State Map with its
state, confidence, artifact, last change and whether the work tree has made it STALE."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tinymem.etv import verify
from tinymem.ledger import current
from tinymem.records import State, entity_key
from tinymem.repository import Repo

__all__ = ["selection", "state_rows"]


def selection(repo: Repo, paths: list[str] | None) -> Callable[[str], bool] | None:
    """Whether a repository path is at or below one of the files or directories the user
    named; None when nothing was named (everything is selected)."""
    if not paths:
        return None
    prefixes = [repo.rel(p).rstrip("/") for p in paths]
    return lambda path: any(
        not pre or path == pre or path.startswith(pre + "/") for pre in prefixes
    )


def state_rows(
    repo: Repo, selected: Callable[[str], bool] | None = None, *, every: bool = False
) -> list[dict[str, Any]]:
    """One row per entity of the selected files (all when `selected` is None), in file order;
    TOMBSTONED entities only with `every`."""
    view = current(repo)
    metas = [m for m in view.all_meta() if selected is None or selected(m.path)]
    stale = verify(repo, view, [m.path for m in metas if not m.deleted]).stale_keys()
    rows: list[dict[str, Any]] = []
    for meta in metas:
        for rec in sorted(meta.entities.values(), key=lambda r: (r.start, r.symbol)):
            if rec.state is State.TOMBSTONED and not every:
                continue
            key = entity_key(meta.path, rec.symbol)
            rows.append(
                {
                    "entity": key,
                    "path": meta.path,
                    "symbol": rec.symbol,
                    "kind": rec.kind,
                    "state": rec.state.value,
                    "confidence": rec.confidence.value,
                    "source": rec.source.value,
                    "artifact": rec.artifact,
                    "episode": rec.episode,
                    "time": rec.time,
                    "stale": key in stale,
                    "reason": rec.reason,
                    "base": rec.base,
                    "span": [rec.start, rec.end],
                }
            )
    return rows
