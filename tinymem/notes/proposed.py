"""Notes that other episodes write: a note proposal accepted (`tm accept`), a rejection with
its reason (`tm reject --why`). Built inside that episode's operation, so the note is written
by `note_edits` in the same episode instead of a second one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tinymem.notes.model import KINDS, Anchor, Note, new_note_id
from tinymem.notes.store import current_artifact, read_notes
from tinymem.proposalrecords import Proposal
from tinymem.records import FILE_SYMBOL, KEY_SEPARATOR, State, entity_key
from tinymem.repository import Repo
from tinymem.statemap import FileMeta, StateView

__all__ = [
    "artifact_after",
    "fresh_id",
    "live_anchors",
    "proposal_note",
    "rejection_note",
    "rejection_targets",
    "summary_of",
]


def fresh_id(repo: Repo, view: StateView, taken: set[str]) -> str:
    """A note id no stored note (deleted ones too) nor `taken` has; added to `taken`."""
    used = taken | {n.id for n in read_notes(repo, view=view, include_deleted=True)}
    note_id = new_note_id()
    while note_id in used:
        note_id = new_note_id()
    taken.add(note_id)
    return note_id


def artifact_after(
    view: StateView, changed: Mapping[str, FileMeta | None], target: str
) -> str | None:
    """An anchor target's artifact once the file records `changed` (by path; None: the file
    is gone) replace the view's: what an episode that writes files anchors to."""
    path, sep, symbol = target.partition(KEY_SEPARATOR)
    if path not in changed:
        return current_artifact(view, target)
    meta = changed[path]
    if meta is None or meta.deleted:
        return None
    if not sep or symbol == FILE_SYMBOL:
        return meta.snapshot
    rec = meta.entities.get(symbol)
    return rec.artifact if rec is not None and rec.state is State.AUTHORITATIVE else None


def live_anchors(
    view: StateView, targets: Iterable[str], changed: Mapping[str, FileMeta | None] | None = None
) -> tuple[Anchor, ...]:
    """Anchors on the targets that name a live entity or file (after `changed`), with their
    artifact; the others are left out (a new function whose proposal was not accepted is
    nothing to anchor to)."""
    out: dict[str, Anchor] = {}
    for target in targets:
        artifact = artifact_after(view, changed or {}, target)
        if artifact is not None:
            out.setdefault(target, Anchor(target, artifact))
    return tuple(out.values())


def _note(
    note_id: str,
    kind: str,
    text: str,
    anchors: tuple[Anchor, ...],
    stamp: str,
    source: str,
    episode: str,
) -> Note:
    return Note(
        id=note_id,
        kind=kind,
        text=text,
        anchors=anchors,
        key=None,
        scope="project",
        created=stamp,
        updated=stamp,
        deleted=None,
        source=source,
        episode=episode,
    )


def proposal_note(
    view: StateView,
    p: Proposal,
    note_id: str,
    stamp: str,
    episode: str,
    changed: Mapping[str, FileMeta | None] | None = None,
) -> Note:
    """The note a note proposal (`Proposal.note`) asks for, anchored to what of the reply's
    changes is live now."""
    raw = p.note or {}
    kind = str(raw.get("kind", "note"))
    return _note(
        note_id,
        kind if kind in KINDS else "note",
        str(raw.get("text", "")),
        live_anchors(view, [str(t) for t in raw.get("anchors", [])], changed),
        stamp,
        str(raw.get("source", "model")),
        episode,
    )


def rejection_targets(p: Proposal) -> list[str]:
    """What a rejected proposal was about: its entities (the file for a whole file), else its
    file; a note proposal's own anchors."""
    if p.note is not None:
        return [str(t) for t in p.note.get("anchors", [])]
    if p.path is None:
        return []
    keys = [p.path if e.symbol == FILE_SYMBOL else entity_key(p.path, e.symbol) for e in p.entities]
    return list(dict.fromkeys(keys)) or [p.path]


def summary_of(p: Proposal) -> str:
    """What a rejected proposal changed, as its `tried` note says it. Its path only when it
    names no entity (the note's anchors hold the path; the prompt repeated it), and no
    proposal id: the model never sees one, and the note's episode lists it (`rejected`)."""
    if p.note is not None:
        return f"the {p.note.get('kind', 'note')} note {p.note.get('text', '')!r}"
    ops = ", ".join(f"{e.op} {e.symbol}" for e in p.entities)
    return ops or f"{p.kind} in {p.path or '(no file)'}"


def rejection_note(
    view: StateView, p: Proposal, why: str, note_id: str, stamp: str, episode: str
) -> Note:
    """A `tried` note: what was rejected and why, on the rejected proposal's targets."""
    text = f"rejected: {summary_of(p)}: {why}"
    return _note(
        note_id, "tried", text, live_anchors(view, rejection_targets(p)), stamp, "reject", episode
    )
