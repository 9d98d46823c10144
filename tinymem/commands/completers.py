"""What the shell completes after `tm accept`, `tm diff`, `tm reject` (pending proposal ids,
then `path::Symbol` entities) and `tm show` (episode ids), read from the State Map.

Run on every TAB: they only read (never `ledger.current`, which may create a branch's State
Map), import no more than the State Map's readers, and answer nothing rather than fail."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import TYPE_CHECKING

from tinymem.errors import TinymemError

if TYPE_CHECKING:
    from tinymem.statemap import StateView

__all__ = ["entities", "entities_and_proposals", "episodes", "notes", "proposals"]

MAX_EPISODES = 50  # the newest ones: what anyone picks from a completion menu


def _view() -> StateView | None:
    from tinymem.repository import open_repo
    from tinymem.statemap import StateView

    repo = open_repo()
    tip = repo.state_tip()
    return None if tip is None else StateView(repo.git, tip)


def _pending(incomplete: str) -> Iterator[tuple[str, str]]:
    from tinymem.proposalrecords import pending

    view = _view()
    if view is None:
        return
    for pid, p in sorted(pending(view).items()):
        if pid.startswith(incomplete):
            what = ", ".join(f"{e.op} {e.symbol}" for e in p.entities) or p.kind
            yield pid, f"{p.path or '?'}: {what}"


def proposals(incomplete: str) -> list[tuple[str, str]]:
    """Pending proposal ids, each with its file and entities as the menu's help."""
    try:
        return list(_pending(incomplete))
    except (TinymemError, OSError):
        return []


def notes(incomplete: str) -> list[tuple[str, str]]:
    """Note ids (both scopes, removed ones too), each with its kind and first line."""
    try:
        from tinymem.notes.store import branch_notes, project_notes
        from tinymem.repository import open_repo

        view = _view()
        found = {**project_notes(open_repo()), **({} if view is None else branch_notes(view))}
        return [
            (nid, f"{n.kind}: {(n.text.splitlines() or [''])[0][:60]}")
            for nid, n in sorted(found.items())
            if nid.startswith(incomplete)
        ]
    except (TinymemError, OSError):
        return []


def entities(incomplete: str) -> list[tuple[str, str]]:
    """Files, then after `::` a file's live entities (`--on`)."""
    try:
        return list(_entities(incomplete)) if incomplete else []
    except (TinymemError, OSError):
        return []


def entities_and_proposals(incomplete: str) -> list[tuple[str, str]]:
    """Pending proposal ids; once something is typed, the files it starts (`src/a` offers
    `src/app.py::`), and after `::` that file's live entities."""
    try:
        found = list(_pending(incomplete))
        # Files only once something is typed: a bare TAB lists the ids, not the whole tree.
        return [*found, *_entities(incomplete)] if incomplete else found
    except (TinymemError, OSError):
        return []


def _entities(incomplete: str) -> list[tuple[str, str]]:
    from tinymem.records import entity_key

    view = _view()
    if view is None:
        return []
    path, sep, _ = incomplete.partition("::")
    if not sep:
        return [(f"{p}::", "file") for p in sorted(view.files()) if p.startswith(incomplete)]
    meta = view.meta(path)
    if meta is None:
        return []
    keys = [(entity_key(path, r.symbol), r.kind) for r in meta.live_entities()]
    return [(k, kind) for k, kind in keys if k.startswith(incomplete)]


def episodes(incomplete: str) -> list[tuple[str, str]]:
    """The newest episode ids, each with its kind and summary."""
    try:
        from tinymem.ledger import history, never
        from tinymem.repository import open_repo

        repo = open_repo()
        if repo.state_tip() is None:
            return []
        return [
            (ep.id, f"{ep.kind}: {ep.summary}"[:80])
            for _, ep in islice(history(repo, read=never), MAX_EPISODES)
            if ep.id.startswith(incomplete)
        ]
    except (TinymemError, OSError):
        return []
