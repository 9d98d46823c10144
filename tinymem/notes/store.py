"""Where notes live in git, and the episodes that write them.

- **Project notes** (shared by every branch): `refs/tinymem/notes`, a commit chain of its own
  whose tree holds one `<id>.json` per note. Every branch reads the same tip.
- **Branch notes**: `notes/<id>.json` in the branch's ledger tree, beside the State Map they
  are about; `tm merge-ledger` carries them and `tm rebuild` replays them.

Every change is one ledger episode of the current branch (`Episode.notes` names each note
written and the blob of its record), so `tm log` shows it; a project note's commit moves
`refs/tinymem/notes` in the same locked step as the ledger ref (`Draft.refs`), and neither
lands without the other. Both live under `refs/tinymem/`, so `git push/fetch
'refs/tinymem/*:refs/tinymem/*'` carries them and `git gc` keeps them.

`note_edits` gives another episode (an accept promoting a note proposal, a reject recording
why) the same edits, to include in its own draft instead of making a second episode.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pygit2

from tinymem.errors import CorruptStateError, UsageError
from tinymem.gitobjects import MODE_BLOB, ObjectWriter, edit_tree, read_blob, read_tree
from tinymem.ledger import Draft, Episode, commit_episode, current
from tinymem.notes.model import KINDS, Anchor, Note, Scope, new_note_id
from tinymem.records import FILE_SYMBOL, KEY_SEPARATOR, split_key
from tinymem.repository import Repo
from tinymem.statemap import NOTES, StateView

NOTES_REF = "refs/tinymem/notes"
NOTE_EPISODE = "note"


def _name(note_id: str) -> str:
    return f"{note_id}.json"


def notes_tip(repo: Repo) -> str | None:
    """The tip of the project notes' commit chain; None before the first project note."""
    try:
        found = repo.git.references.get(NOTES_REF)
    except (pygit2.GitError, ValueError) as exc:
        raise CorruptStateError(f"{NOTES_REF} is unreadable ({exc})") from exc
    return None if found is None else str(found.target)


def _tree_of(git: pygit2.Repository, commit: str | None) -> pygit2.Tree | None:
    if commit is None:
        return None
    try:
        obj = git[commit]
        if not isinstance(obj, pygit2.Commit):
            raise ValueError("not a commit")
        return obj.tree
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise CorruptStateError(f"notes commit {commit} is unreadable: {exc}") from exc


def _notes_in(git: pygit2.Repository, tree: pygit2.Tree | None) -> dict[str, Note]:
    out: dict[str, Note] = {}
    if tree is None:
        return out
    for entry in tree:
        name = entry.name or ""
        if not name.endswith(".json") or entry.filemode == pygit2.enums.FileMode.TREE:
            continue
        note = Note.from_bytes(read_blob(git, entry.id))
        out[note.id] = note
    return out


def project_notes(repo: Repo, tip: str | None = None) -> dict[str, Note]:
    """id -> note, of the project notes at `tip` (default: the ref's)."""
    return _notes_in(repo.git, _tree_of(repo.git, tip if tip is not None else notes_tip(repo)))


def branch_notes(view: StateView) -> dict[str, Note]:
    """id -> note, of the branch notes in one ledger commit's tree."""
    sub = view.subtree(NOTES)
    return _notes_in(view.repo, None if sub is None else read_tree(view.repo, sub))


def read_notes(
    repo: Repo, *, view: StateView | None = None, include_deleted: bool = False
) -> list[Note]:
    """Both scopes' notes (the branch's at `view`, default the current ledger tip), oldest
    first; soft-deleted ones only with `include_deleted`."""
    view = view if view is not None else current(repo)
    every = [*project_notes(repo).values(), *branch_notes(view).values()]
    every.sort(key=lambda n: (n.created, n.id))
    return [n for n in every if include_deleted or n.live]


def find_note(notes: Iterable[Note], ident: str) -> Note:
    """The note an id (or a unique prefix of one) names; UsageError otherwise."""
    ident = ident.strip().lower()
    if not ident:
        raise UsageError("an empty note id was given")
    found = [n for n in notes if n.id == ident] or [n for n in notes if n.id.startswith(ident)]
    if not found:
        raise UsageError(f"no note has the id {ident!r}; `tm note list --all` lists them")
    if len(found) > 1:
        raise UsageError(f"{ident!r} is ambiguous: it starts {len(found)} note ids")
    return found[0]


def resolve_anchor(view: StateView, target: str) -> Anchor:
    """An anchor on a live entity (`path::Qualified.name`) or file (`path`) of the State Map,
    with its current authoritative artifact; UsageError when it names neither."""
    target = target.strip()
    path, sep, symbol = target.partition(KEY_SEPARATOR)
    if not path or (sep and not symbol):
        raise UsageError(f"--on {target!r} names no entity or file: give PATH or PATH::NAME")
    if not sep:
        snapshot = view.snapshot(path)
        if snapshot is None:
            raise UsageError(f"--on {target!r} names no file tm records; `tm state` lists them")
        return Anchor(path, snapshot)
    artifact = current_artifact(view, target)
    if artifact is None:
        raise UsageError(f"--on {target!r} names no entity tm records; `tm state` lists them")
    return Anchor(target, artifact)


def current_artifact(view: StateView, target: str) -> str | None:
    """The authoritative text's blob of an anchor target now (the file's snapshot for a bare
    path), or None when the State Map has no live entity or file of that name."""
    if KEY_SEPARATOR not in target:
        return view.snapshot(target)
    path, symbol = split_key(target)
    meta = view.meta(path)
    if meta is None or meta.deleted:
        return None
    for rec in meta.live_entities():
        if rec.symbol == symbol:
            return rec.artifact
    if symbol == FILE_SYMBOL:
        return view.snapshot(path)
    return None


@dataclass
class NoteEdits:
    """What writing some notes adds to an episode's draft (`include`)."""

    changes: dict[str, tuple[int, str] | None] = field(default_factory=dict)  # ledger tree
    refs: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # refs/tinymem/notes
    records: dict[str, dict[str, str | None]] = field(default_factory=dict)  # Episode.notes

    def include(self, draft: Draft) -> None:
        draft.changes.update(self.changes)
        draft.refs.update(self.refs)
        draft.episode.notes.update(self.records)


def note_edits(
    repo: Repo,
    writer: ObjectWriter,
    episode: Episode,
    written: Sequence[Note] = (),
    removed: Sequence[Note] = (),
) -> NoteEdits:
    """The edits that store `written` notes (new or changed) and remove `removed` ones for
    good, as part of `episode` (built inside its operation, so a retried operation reads the
    project notes' tip again). Project notes become one commit on `refs/tinymem/notes`, moved
    with the ledger ref; branch notes are entries of the ledger tree."""
    edits = NoteEdits()
    project: dict[str, tuple[int, str] | None] = {}
    for note in written:
        oid = writer.blob(note.to_bytes())
        edits.records[note.id] = {"scope": note.scope, "record": oid}
        if note.scope == "project":
            project[_name(note.id)] = (MODE_BLOB, oid)
        else:
            edits.changes[f"{NOTES}/{_name(note.id)}"] = (MODE_BLOB, oid)
    for note in removed:
        edits.records[note.id] = {"scope": note.scope, "record": None}
        if note.scope == "project":
            project[_name(note.id)] = None
        else:
            edits.changes[f"{NOTES}/{_name(note.id)}"] = None
    if project:
        tip = notes_tip(repo)
        tree = _tree_of(repo.git, tip)
        new_tree = edit_tree(writer, None if tree is None else str(tree.id), project)
        parents = [] if tip is None else [tip]
        edits.refs[NOTES_REF] = (tip, notes_commit(repo, writer, new_tree, parents, episode))
    return edits


def notes_commit(
    repo: Repo, writer: ObjectWriter, tree: str, parents: Sequence[str], episode: Episode
) -> str:
    """A commit on the project notes' chain, written through `writer` (its tree is not in the
    object database yet, and libgit2 refuses a commit whose tree it cannot find)."""
    sig = repo.signature()
    stamp = f"{sig.name} <{sig.email}> {int(time.time())} +0000"
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines += [f"author {stamp}", f"committer {stamp}", ""]
    message = f"tm note: {episode.summary}\n\nTinymem-Episode: {episode.id}\n"
    return writer.add("commit", ("\n".join(lines) + "\n" + message).encode())


Change = Callable[[StateView, list[Note], str], "tuple[list[Note], list[Note], str] | None"]


def write_notes(repo: Repo, change: Change, *, kind: str = NOTE_EPISODE) -> tuple[str, list[Note]]:
    """Run `change(view, every note, episode time)` against the current ledger tip and record
    what it returns, (notes written, notes removed for good, summary), as one episode; None
    from it: nothing to record. Returns (episode id, the notes written) — ("", []) when
    nothing was recorded."""
    current(repo)  # a branch's first use starts its ledger; "not initialized" is said
    result: list[Note] = []

    def operation(view: StateView, writer: ObjectWriter) -> Draft | None:
        episode = Episode(kind=kind, summary="")
        every = [*project_notes(repo).values(), *branch_notes(view).values()]
        done = change(view, every, episode.time)
        if done is None:
            return None
        written, removed, summary = done
        written = [n.with_changes(episode=episode.id) for n in written]
        episode.summary = summary
        draft = Draft(episode=episode)
        note_edits(repo, writer, episode, written, removed).include(draft)
        result[:] = written
        return draft

    committed = commit_episode(repo, operation)
    return ("", []) if committed is None else (committed.episode.id, list(result))


def check_text(text: str) -> str:
    text = text.strip()
    if not text:
        raise UsageError("a note needs text: it was empty")
    return text


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise UsageError(f"unknown note kind {kind!r}; the kinds are {', '.join(KINDS)}")
    return kind


def _summary(verb: str, note: Note) -> str:
    first = note.text.splitlines()[0] if note.text else ""
    text = first if len(first) <= 80 else first[:79] + "…"
    return f"{verb} {note.kind} {note.id}: {text}"


def add_note(
    repo: Repo,
    kind: str,
    text: str,
    *,
    on: Sequence[str] = (),
    key: str | None = None,
    scope: Scope = "project",
    source: str = "user",
) -> Note:
    """Write a note in one episode. With `key`, an upsert: the note of that key in `scope`
    (soft-deleted too, which comes back) gets the new kind, text and anchors."""
    check_kind(kind)
    text = check_text(text)
    if key is not None:
        key = key.strip()
        if not key:
            raise UsageError("--key was empty")

    def change(
        view: StateView, every: list[Note], stamp: str
    ) -> tuple[list[Note], list[Note], str]:
        anchors = tuple(dict.fromkeys(resolve_anchor(view, t) for t in on))
        same = None
        if key is not None:
            for note in every:
                if note.key == key and note.scope != scope:
                    raise UsageError(
                        f"the key {key!r} belongs to {note.scope} note {note.id}; use that"
                        f" scope{'' if note.scope == 'branch' else ' (no --branch)'} or another key"
                    )
                if note.key == key:
                    same = note
        if same is not None:
            note = same.with_changes(
                kind=kind, text=text, anchors=anchors, updated=stamp, deleted=None, source=source
            )
            return [note], [], _summary("updated", note)
        ids = {n.id for n in every}
        note_id = new_note_id()
        while note_id in ids:
            note_id = new_note_id()
        note = Note(
            id=note_id,
            kind=kind,
            text=text,
            anchors=anchors,
            key=key,
            scope=scope,
            created=stamp,
            updated=stamp,
            deleted=None,
            source=source,
            episode="",
        )
        return [note], [], _summary("added", note)

    _, written = write_notes(repo, change)
    return written[0]


def _one(
    repo: Repo,
    ident: str,
    verb: str,
    update: Callable[[StateView, Note, str], Note | None],
    *,
    include_deleted: bool = True,
) -> Note:
    """Change the note `ident` names in one episode; `update` returns None when there is
    nothing to change (no episode then). Returns the note as it now stands."""
    found: list[Note] = []

    def change(
        view: StateView, every: list[Note], stamp: str
    ) -> tuple[list[Note], list[Note], str] | None:
        note = find_note([n for n in every if include_deleted or n.live], ident)
        found[:] = [note]
        new = update(view, note, stamp)
        if new is None:
            return None
        found[:] = [new]
        return [new], [], _summary(verb, new)

    _, written = write_notes(repo, change)
    return written[0] if written else found[0]


def edit_note(repo: Repo, ident: str, *, text: str | None = None, kind: str | None = None) -> Note:
    if text is not None:
        text = check_text(text)
    if kind is not None:
        check_kind(kind)

    def update(view: StateView, note: Note, stamp: str) -> Note | None:
        new_text = note.text if text is None else text
        new_kind = note.kind if kind is None else kind
        if (new_text, new_kind) == (note.text, note.kind):
            return None
        return note.with_changes(text=new_text, kind=new_kind, updated=stamp)

    return _one(repo, ident, "edited", update)


def remove_note(repo: Repo, ident: str) -> Note:
    """Soft delete: the note stays stored, marked deleted, until `gc_notes`."""

    def update(view: StateView, note: Note, stamp: str) -> Note | None:
        if not note.live:
            return None
        return note.with_changes(deleted=stamp, updated=stamp)

    return _one(repo, ident, "removed", update)


def restore_note(repo: Repo, ident: str) -> Note:
    """Bring back a removed note; refused while another live note of its scope holds its key
    (a merge gave the key to the note updated last)."""

    def update(view: StateView, note: Note, stamp: str) -> Note | None:
        if note.live:
            return None
        if note.key is not None:
            every = [*project_notes(repo).values(), *branch_notes(view).values()]
            for other in every:
                if other.live and other.key == note.key and other.scope == note.scope:
                    raise UsageError(
                        f"the key {note.key!r} is now note {other.id}'s; edit that one instead"
                    )
        return note.with_changes(deleted=None, updated=stamp)

    return _one(repo, ident, "restored", update)


def confirm_note(repo: Repo, ident: str, *, on_disk: Mapping[str, str] | None = None) -> Note:
    """Re-anchor a note to the current version of what it is about. An anchor whose entity or
    file is gone cannot be confirmed: UsageError (remove the note, or write it again); nor
    one that `on_disk` (ETV's findings, `listing.disk_changes`) says differs in the work
    tree: the State Map's version is not the one the user is looking at."""

    def update(view: StateView, note: Note, stamp: str) -> Note | None:
        anchors = []
        for anchor in note.anchors:
            why = (on_disk or {}).get(anchor.target)
            if why is not None:
                path = anchor.target.partition(KEY_SEPARATOR)[0]
                raise UsageError(
                    f"{anchor.target} differs on disk ({why}): `tm adopt {path}` first (or"
                    " restore it), then confirm the note"
                )
            now = current_artifact(view, anchor.target)
            if now is None:
                raise UsageError(
                    f"note {note.id} is anchored to {anchor.target}, which no longer exists;"
                    " `tm note rm` it or write it again with another --on"
                )
            anchors.append(Anchor(anchor.target, now))
        if tuple(anchors) == note.anchors:
            return None
        return note.with_changes(anchors=tuple(anchors), updated=stamp)

    return _one(repo, ident, "confirmed", update, include_deleted=False)


def parse_age(text: str) -> timedelta:
    """`30d`, `12h`, `90m`, `2w` (a bare number: days)."""
    raw = text.strip().lower()
    units = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
    unit = raw[-1:] if raw[-1:] in units else "d"
    number = raw[:-1] if raw[-1:] in units else raw
    try:
        value = float(number)
    except ValueError:
        raise UsageError(f"--older-than {text!r} is no age: give e.g. 30d, 12h or 2w") from None
    if value < 0:
        raise UsageError(f"--older-than {text!r} is negative")
    return timedelta(seconds=value * units[unit])


def parse_time(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def gc_notes(repo: Repo, older_than: timedelta, *, now: datetime | None = None) -> list[Note]:
    """Remove for good the notes soft-deleted more than `older_than` ago (one episode);
    the notes removed."""
    moment = now if now is not None else datetime.now(UTC)
    gone: list[Note] = []

    def change(
        view: StateView, every: list[Note], stamp: str
    ) -> tuple[list[Note], list[Note], str] | None:
        old = [
            n
            for n in every
            if n.deleted is not None and moment - parse_time(n.deleted) > older_than
        ]
        gone[:] = sorted(old, key=lambda n: n.id)
        if not old:
            return None
        return [], gone, f"removed {len(gone)} deleted note(s) for good"

    write_notes(repo, change)
    return gone


__all__ = [
    "NOTES_REF",
    "NoteEdits",
    "add_note",
    "branch_notes",
    "check_kind",
    "check_text",
    "confirm_note",
    "current_artifact",
    "edit_note",
    "find_note",
    "gc_notes",
    "note_edits",
    "notes_commit",
    "notes_tip",
    "parse_age",
    "project_notes",
    "read_notes",
    "remove_note",
    "resolve_anchor",
    "restore_note",
    "write_notes",
]
