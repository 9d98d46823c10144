"""The notes a `tm ask` may recall, each with what its anchors are now (`hydration/memory.py`)."""

from __future__ import annotations

from tinymem import config as cfg
from tinymem.hydration.memory import Mark, Recall
from tinymem.notes.model import Note
from tinymem.notes.store import current_artifact, read_notes
from tinymem.repository import Repo
from tinymem.statemap import StateView

__all__ = ["mark_of", "memory_for"]


def mark_of(view: StateView, note: Note) -> Mark:
    """ANCHOR_DELETED when an anchor names nothing live now, DRIFTED when an anchored text is
    not the one the note was written (or confirmed) against, else CURRENT."""
    mark = Mark.CURRENT
    for anchor in note.anchors:
        now = current_artifact(view, anchor.target)
        if now is None:
            return Mark.ANCHOR_DELETED
        if anchor.artifact is not None and now != anchor.artifact:
            mark = Mark.DRIFTED
    return mark


def memory_for(repo: Repo, view: StateView, values: dict[str, cfg.Value]) -> Recall | None:
    """None when notes are turned off (`memoryShare` 0) or there are none."""
    share = cfg.memory_share(values)
    if share <= 0:
        return None
    notes = read_notes(repo, view=view)
    if not notes:
        return None
    return Recall(notes, {n.id: mark_of(view, n) for n in notes}, share)
