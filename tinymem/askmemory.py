"""The notes a `tm ask` may recall, each with what its anchors are now (`hydration/memory.py`)."""

from __future__ import annotations

from tinymem import config as cfg
from tinymem.etv import EtvReport
from tinymem.hydration.memory import Mark, Recall, by_words
from tinymem.notes.drift import Drift, drift_of
from tinymem.notes.listing import disk_changes
from tinymem.notes.store import read_notes
from tinymem.notesimilar import similar
from tinymem.repository import Repo
from tinymem.statemap import StateView

__all__ = ["memory_for"]

_MARKS = {
    Drift.CURRENT: Mark.CURRENT,
    Drift.DRIFTED: Mark.DRIFTED,
    Drift.ANCHOR_DELETED: Mark.ANCHOR_DELETED,
}


def memory_for(
    repo: Repo, view: StateView, etv: EtvReport, values: dict[str, cfg.Value], prompt: str
) -> tuple[Recall | None, str | None]:
    """The notes to recall (None when notes are turned off, `memoryShare` 0, or there are
    none) and a notice when the embedding model failed. A note is marked as `tm note list`
    shows it (`notes/drift.py`): its anchored text changed in the State Map or, unadopted,
    on disk (ETV's findings), or is gone. With `embedModel` set, the notes recalled by
    their words are also scored by closeness to `prompt` (`notesimilar.py`)."""
    share = cfg.memory_share(values)
    if share <= 0:
        return None, None
    notes = read_notes(repo, view=view)
    if not notes:
        return None, None
    on_disk = disk_changes(etv)
    marks = {n.id: _MARKS[drift_of(view, n, on_disk)] for n in notes}
    setting = cfg.embedding(values)
    if setting is None:
        return Recall(notes, marks, share), None
    close = similar([n for n in notes if by_words(n)], prompt, setting, repo.cache_dir)
    return Recall(notes, marks, share, close.scores), close.notice
