"""Which episodes of a branch's ledger an `undo` episode reversed, read from the episode
records alone (`details.undid` of each undo), newest first so a walk can stop early."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from tinymem.ledger import Episode

__all__ = ["UNDOABLE", "undid", "with_undone"]

# Episodes that change files: what they wrote can be written back.
UNDOABLE = ("accept", "adopt", "undo")


def undid(ep: Episode) -> str | None:
    """The episode an undo episode undid (None: not an undo)."""
    target = ep.details.get("undid") if ep.kind == "undo" else None
    return target if isinstance(target, str) else None


def with_undone(
    newest_first: Iterable[tuple[str, Episode]],
) -> Iterator[tuple[str, Episode, str | None]]:
    """Each (commit, episode) with the id of the undo in force that reversed it (None: not
    undone).

    Walked newest first, an undo is seen before the episode it undid and after any undo of
    itself: an undo that was undone is not in force (its episode is redone), and the undo
    that undid it is."""
    undone: dict[str, str] = {}
    for commit, ep in newest_first:
        by = undone.get(ep.id)
        target = undid(ep)
        if target is not None and by is None:
            undone[target] = ep.id
        yield commit, ep, by
