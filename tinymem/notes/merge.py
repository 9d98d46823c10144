"""Two people's notes, merged: per note id, three-way against the merge base.

A note only one side changed (written, removed, or removed for good by `tm note gc`) takes
that side's version; a note both sides changed takes the one updated last (equal times: the
larger record, so both clones decide alike). Notes only one side has are kept. Then, per
scope, a key held by several live notes stays with the one updated last and the others are
removed (soft: `tm note show` still has them, `tm note restore` refuses while the key is
taken). Used by `tm note merge` (project notes, `refs/tinymem/notes`) and `tm merge-ledger`
(branch notes, in the ledger tree).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pygit2

from tinymem.errors import UsageError
from tinymem.gitobjects import MODE_BLOB, ObjectWriter, edit_tree
from tinymem.ledger import Draft, Episode, commit_episode, current
from tinymem.notes.model import Note
from tinymem.notes.store import NOTES_REF, notes_commit, notes_tip, project_notes
from tinymem.repository import Repo
from tinymem.statemap import StateView


@dataclass
class NotesMerge:
    written: list[Note] = field(default_factory=list)  # taken from theirs, or moved off a key
    removed: list[Note] = field(default_factory=list)  # gone for good on their side
    taken: list[str] = field(default_factory=list)  # ids whose version came from theirs
    displaced: list[str] = field(default_factory=list)  # ids removed for a key clash


def _newer(a: Note, b: Note) -> Note:
    if a.updated != b.updated:
        return a if a.updated > b.updated else b
    return a if a.to_bytes() >= b.to_bytes() else b


def merge_notes(
    base: Mapping[str, Note], ours: Mapping[str, Note], theirs: Mapping[str, Note], stamp: str
) -> NotesMerge:
    """What turns `ours` into the merge of `ours` and `theirs` (one scope's notes)."""
    out = NotesMerge()
    merged = dict(ours)
    for nid in sorted(base.keys() | theirs.keys()):
        b, o, t = base.get(nid), ours.get(nid), theirs.get(nid)
        if t in (b, o):
            continue  # theirs did not change it, or both arrived at the same note
        if t is None:
            if o == b and o is not None:  # removed for good there, untouched here
                out.removed.append(o)
                del merged[nid]
            continue
        chosen = t if o is None or o == b else _newer(o, t)
        if chosen is t:
            merged[nid] = t
            out.written.append(t)
            out.taken.append(nid)
    holders: dict[tuple[str, str], list[Note]] = {}
    for note in merged.values():
        if note.key is not None and note.live:
            holders.setdefault((note.scope, note.key), []).append(note)
    for notes in holders.values():
        if len(notes) < 2:
            continue
        keeper = notes[0]
        for n in notes[1:]:
            keeper = _newer(keeper, n)
        for n in notes:
            if n is keeper:
                continue
            moved = n.with_changes(deleted=stamp, updated=stamp)
            out.written = [w for w in out.written if w.id != n.id] + [moved]
            out.displaced.append(n.id)
    return out


def _commit_of(repo: Repo, rev: str) -> str:
    try:
        obj = repo.git.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        raise UsageError(f"{rev}: no such commit (fetch the other notes first)") from None
    return str(obj.id)


def merge_project_notes(repo: Repo, rev: str) -> dict[str, Any]:
    """Merge another clone's project notes (a commit of its `refs/tinymem/notes`, e.g.
    FETCH_HEAD) into ours, as one `note` episode: `up to date`, `fast-forward` or `merged`."""
    theirs = _commit_of(repo, rev)
    git = repo.git
    current(repo)
    doc: dict[str, Any] = {"outcome": "up to date", "theirs": theirs, "episode": None}

    def operation(view: StateView, writer: ObjectWriter) -> Draft | None:
        ours = notes_tip(repo)
        doc.update(ours=ours, taken=[], removed=[], displaced=[])
        if ours == theirs or (
            ours is not None and git.descendant_of(pygit2.Oid(hex=ours), pygit2.Oid(hex=theirs))
        ):
            doc["outcome"], doc["commit"] = "up to date", ours
            return None
        base = (
            None if ours is None else git.merge_base(pygit2.Oid(hex=ours), pygit2.Oid(hex=theirs))
        )
        if ours is not None and base is None:
            raise UsageError(
                f"{rev} shares no history with {NOTES_REF}: it is not another clone's notes"
            )
        episode = Episode(kind="note", summary="")
        mine = project_notes(repo, ours) if ours is not None else {}
        before = project_notes(repo, str(base)) if base is not None else {}
        result = merge_notes(before, mine, project_notes(repo, theirs), episode.time)
        if ours is None or str(base) == ours:
            doc["outcome"], new = "fast-forward", theirs
        else:
            doc["outcome"] = "merged"
            edits: dict[str, tuple[int, str] | None] = {
                f"{n.id}.json": (MODE_BLOB, writer.blob(n.to_bytes())) for n in result.written
            }
            edits.update({f"{n.id}.json": None for n in result.removed})
            tree_of = git[ours]
            assert isinstance(tree_of, pygit2.Commit)
            tree = edit_tree(writer, str(tree_of.tree_id), edits)
            new = notes_commit(repo, writer, tree, [ours, theirs], episode)
        for n in result.written:
            episode.notes[n.id] = {"scope": "project", "record": writer.blob(n.to_bytes())}
        for n in result.removed:
            episode.notes[n.id] = {"scope": "project", "record": None}
        doc.update(
            taken=result.taken,
            removed=[n.id for n in result.removed],
            displaced=result.displaced,
            commit=new,
        )
        episode.summary = (
            f"merged project notes {theirs[:12]}: took {len(result.taken)},"
            f" removed {len(result.removed)}"
        )
        episode.details = {k: doc[k] for k in ("theirs", "ours", "outcome", "taken", "removed")}
        episode.details["displaced"] = result.displaced
        draft = Draft(episode=episode)
        draft.refs[NOTES_REF] = (ours, new)
        return draft

    committed = commit_episode(repo, operation)
    if committed is not None:
        doc["episode"] = committed.episode.id
    return doc
