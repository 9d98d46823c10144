"""Whether a note still speaks of the text it was written against.

An anchor records the artifact (blob id) of its entity or file when the note was written or
last confirmed. The note has drifted when the State Map's artifact is another one now (an
accept, an adopt, a merged ledger) or when the work tree's text differs from the State Map
(a hand edit, committed or not, that ETV sees and nobody adopted yet); its anchor is deleted
when the State Map has no live entity or file of that name any more, or the work tree lost it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from tinymem.notes.model import Anchor, Note
from tinymem.notes.store import current_artifact
from tinymem.records import KEY_SEPARATOR
from tinymem.statemap import StateView


class Drift(Enum):
    CURRENT = "current"
    DRIFTED = "drifted"
    ANCHOR_DELETED = "anchor deleted"


_ORDER = (Drift.CURRENT, Drift.DRIFTED, Drift.ANCHOR_DELETED)
# What ETV says of a file or entity that is gone from the work tree.
_GONE = ("missing", "missing from the file")


@dataclass(frozen=True)
class AnchorDrift:
    anchor: Anchor
    drift: Drift
    now: str | None  # the State Map's artifact of the target now (None: no live one)
    why: str | None  # None when current

    def to_json(self) -> dict[str, Any]:
        return {
            **self.anchor.to_json(),
            "now": self.now,
            "drift": self.drift.value,
            "why": self.why,
        }


@dataclass(frozen=True)
class NoteDrift:
    note: Note
    drift: Drift  # the worst of its anchors'
    anchors: tuple[AnchorDrift, ...]

    def to_json(self) -> dict[str, Any]:
        doc = self.note.to_json()
        doc["anchors"] = [a.to_json() for a in self.anchors]
        doc["drift"] = self.drift.value
        return doc


def anchor_drift(
    view: StateView, anchor: Anchor, on_disk: Mapping[str, str] | None = None
) -> AnchorDrift:
    """`on_disk`: what ETV found changed in the work tree, entity key or file path -> why
    (`disk_changes`); None or empty when the work tree was not looked at."""
    now = current_artifact(view, anchor.target)
    if now is None:
        return AnchorDrift(anchor, Drift.ANCHOR_DELETED, None, "deleted from the State Map")
    disk = (on_disk or {}).get(anchor.target)
    if disk in _GONE:
        return AnchorDrift(anchor, Drift.ANCHOR_DELETED, now, "deleted on disk")
    if now != anchor.artifact:
        return AnchorDrift(anchor, Drift.DRIFTED, now, "changed since the note was written")
    if disk is not None:
        return AnchorDrift(anchor, Drift.DRIFTED, now, f"{disk} (not adopted yet)")
    return AnchorDrift(anchor, Drift.CURRENT, now, None)


def note_drift(view: StateView, note: Note, on_disk: Mapping[str, str] | None = None) -> NoteDrift:
    anchors = tuple(anchor_drift(view, a, on_disk) for a in note.anchors)
    worst = max((a.drift for a in anchors), key=_ORDER.index, default=Drift.CURRENT)
    return NoteDrift(note, worst, anchors)


def drift_of(view: StateView, note: Note, on_disk: Mapping[str, str] | None = None) -> Drift:
    return note_drift(view, note, on_disk).drift


def anchored_paths(notes: list[Note]) -> list[str]:
    """The files the anchors of `notes` are in: all ETV needs to look at for them."""
    return sorted({a.target.partition(KEY_SEPARATOR)[0] for n in notes for a in n.anchors})
