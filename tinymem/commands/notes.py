"""`tm note add | list | show | edit | rm | restore | confirm | gc | merge`: the project's memory
of decisions, constraints, gotchas and dead ends (core: `tinymem/notes/`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from tinymem.commands import completers
from tinymem.commands.output import emit_json, stdout_styled, write_rows

if TYPE_CHECKING:
    from tinymem.notes.drift import NoteDrift
    from tinymem.notes.model import Note
    from tinymem.repository import Repo

note_app = typer.Typer(
    help=(
        "Notes: decisions, constraints, gotchas, dead ends (tried), facts and plans, kept in git"
        " and anchored to the entities or files they are about. Project notes"
        " (refs/tinymem/notes) are shared by every branch; --branch notes live with the"
        " branch's State Map. Every change is an episode (`tm log`)."
    ),
    no_args_is_help=True,
)

_JSON = typer.Option(False, "--json", help="Machine-readable output.")
_ID = typer.Argument(
    ...,
    help="The note's id (or a unique prefix of it).",
    metavar="ID",
    autocompletion=completers.notes,
)


def register(app: typer.Typer) -> None:
    if not any(g.name == "note" for g in app.registered_groups):
        app.add_typer(note_app, name="note")


def _target(repo: Repo, text: str) -> str:
    """`--on` as typed (a path relative to the current directory, `::NAME` after it) as the
    repository's name of it."""
    from tinymem.records import KEY_SEPARATOR

    path, sep, symbol = text.strip().partition(KEY_SEPARATOR)
    return repo.rel(path) + sep + symbol if path else text


def _status(repo: Repo, note: Note) -> NoteDrift:
    from tinymem.notes.listing import note_statuses

    for status in note_statuses(repo, include_deleted=True):
        if status.note.id == note.id:
            return status
    from tinymem.ledger import current
    from tinymem.notes.drift import note_drift

    return note_drift(current(repo), note)  # removed for good meanwhile


def _line(status: NoteDrift, styled: bool) -> list[str]:
    from tinymem.commands.output import escape
    from tinymem.notes.drift import Drift

    note = status.note

    def lit(text: str) -> str:
        return escape(text) if styled else text

    def mark(text: str, style: str) -> str:
        return f"[{style}]{text}[/]" if styled else text

    tags = [note.kind]
    if note.scope == "branch":
        tags.append("branch")
    if note.key:
        tags.append(f"key {note.key}")
    if not note.live:
        tags.append("deleted")
    if status.drift is Drift.DRIFTED:
        tags.append("DRIFTED")
    elif status.drift is Drift.ANCHOR_DELETED:
        tags.append("ANCHOR DELETED")
    first, *more = note.text.splitlines() or [""]
    rows = [f"{mark(note.id, 'bold')}  {mark(lit(', '.join(tags)), 'dim')}  {lit(first)}"]
    rows += [f"    {lit(line)}" for line in more]
    for a in status.anchors:
        why = "" if a.why is None else f"  {mark(lit(a.why), 'yellow')}"
        rows.append(f"    on {lit(a.anchor.target)}{why}")
    return rows


def _written(repo: Repo, note: Note, changed: bool, as_json: bool, said: str) -> None:
    status = _status(repo, note)
    if as_json:
        emit_json({"note": status.to_json(), "changed": changed, "episode": note.episode})
        return
    styled = stdout_styled()
    write_rows([said if changed else "Nothing to change.", *_line(status, styled)], styled)


@note_app.command("add")
def add_cmd(
    kind: str = typer.Argument(
        ...,
        help="decision, constraint, gotcha, tried (a dead end and why), fact, plan or note.",
        metavar="KIND",
    ),
    text: str = typer.Argument(..., help="What to remember.", metavar="TEXT"),
    on: list[str] = typer.Option(
        None,
        "--on",
        help="An entity (src/app.py::Client.get) or file it is about; repeatable. The note"
        " records the version it was written against and shows as drifted when it changes.",
        metavar="ENTITY_OR_FILE",
        autocompletion=completers.entities,
    ),
    key: str | None = typer.Option(
        None,
        "--key",
        help="A name for the note: writing the same key again updates that note (an upsert).",
    ),
    branch: bool = typer.Option(
        False, "--branch", help="A note of this branch only (default: shared by every branch)."
    ),
    as_json: bool = _JSON,
) -> None:
    """Remember something, in one episode.

    Example: tm note add constraint "no network calls in tests" --on tests/conftest.py
    """
    from tinymem.notes.store import add_note
    from tinymem.repository import open_repo

    repo = open_repo()
    targets = [_target(repo, t) for t in on or []]
    note = add_note(repo, kind, text, on=targets, key=key, scope="branch" if branch else "project")
    created = note.created == note.updated
    _written(repo, note, True, as_json, f"{'Added' if created else 'Updated'} note {note.id}.")


@note_app.command("list")
def list_cmd(
    kind: str | None = typer.Option(None, "--kind", help="Only notes of this kind."),
    on: str | None = typer.Option(
        None,
        "--on",
        help="Only notes about this entity or file (or an entity inside it, or holding it).",
        metavar="ENTITY_OR_FILE",
        autocompletion=completers.entities,
    ),
    include_all: bool = typer.Option(False, "--all", help="Include removed (soft-deleted) notes."),
    as_json: bool = _JSON,
) -> None:
    """List the notes of both scopes, oldest first, drifted ones marked."""
    from tinymem.notes.listing import note_statuses
    from tinymem.notes.store import check_kind
    from tinymem.repository import open_repo

    repo = open_repo()
    if kind is not None:
        check_kind(kind)
    target = None if on is None else _target(repo, on)
    statuses = note_statuses(repo, kind=kind, on=target, include_deleted=include_all)
    if as_json:
        emit_json({"notes": [s.to_json() for s in statuses]})
        return
    styled = stdout_styled()
    if not statuses:
        write_rows(
            ["No notes." + ("" if include_all else " (`--all` shows removed ones.)")], styled
        )
        return
    rows: list[str] = []
    for status in statuses:
        rows += _line(status, styled)
    write_rows(rows, styled)


@note_app.command("show")
def show_cmd(note_id: str = _ID, as_json: bool = _JSON) -> None:
    """Show one note: its text, anchors and their drift, scope, key, times and source."""
    from tinymem.notes.listing import note_statuses
    from tinymem.notes.store import find_note
    from tinymem.repository import open_repo

    repo = open_repo()
    statuses = note_statuses(repo, include_deleted=True)
    note = find_note([s.note for s in statuses], note_id)
    status = next(s for s in statuses if s.note.id == note.id)
    if as_json:
        emit_json(status.to_json())
        return
    styled = stdout_styled()
    rows = _line(status, styled)
    rows += [
        "",
        f"scope    {note.scope}",
        f"created  {note.created}",
        f"updated  {note.updated} (episode {note.episode})",
        f"source   {note.source}",
    ]
    if note.deleted:
        rows.append(f"removed  {note.deleted} (`tm note restore {note.id}` brings it back)")
    write_rows(rows, styled)


@note_app.command("edit")
def edit_cmd(
    note_id: str = _ID,
    text: str | None = typer.Option(
        None, "--text", help="The new text (without it, your editor opens, as for git commit)."
    ),
    kind: str | None = typer.Option(None, "--kind", help="A new kind."),
    as_json: bool = _JSON,
) -> None:
    """Change a note's text (or kind), in one episode."""
    from tinymem.notes.store import edit_note, find_note, read_notes
    from tinymem.repository import open_repo

    repo = open_repo()
    before = find_note(read_notes(repo, include_deleted=True), note_id)
    if text is None and kind is None:
        from tinymem.commands.editor import edit_text

        text = edit_text(repo, before.text, f"the text of {before.kind} note {before.id}")
    note = edit_note(repo, before.id, text=text, kind=kind)
    _written(repo, note, note.updated != before.updated, as_json, f"Edited note {note.id}.")


def _simple(verb: str, done: str) -> Any:
    def command(note_id: str = _ID, as_json: bool = _JSON) -> None:
        from tinymem.notes import store
        from tinymem.repository import open_repo

        repo = open_repo()
        before = store.find_note(store.read_notes(repo, include_deleted=True), note_id)
        note = getattr(store, f"{verb}_note")(repo, before.id)
        _written(repo, note, note.updated != before.updated, as_json, f"{done} note {note.id}.")

    return command


rm_cmd = _simple("remove", "Removed")
rm_cmd.__doc__ = (
    "Remove a note (a soft delete: `tm note restore` brings it back until `tm note gc`)."
)
note_app.command("rm")(rm_cmd)
restore_cmd = _simple("restore", "Restored")
restore_cmd.__doc__ = "Bring back a removed note."
note_app.command("restore")(restore_cmd)


@note_app.command("confirm")
def confirm_cmd(note_id: str = _ID, as_json: bool = _JSON) -> None:
    """Say a drifted note still holds: re-anchor it to the current version of what it is
    about (a hand edit must be adopted first)."""
    from tinymem.etv import verify
    from tinymem.ledger import current
    from tinymem.notes.drift import anchored_paths
    from tinymem.notes.listing import disk_changes
    from tinymem.notes.store import confirm_note, find_note, read_notes
    from tinymem.repository import open_repo

    repo = open_repo()
    view = current(repo)
    before = find_note(read_notes(repo, view=view), note_id)
    paths = [p for p in anchored_paths([before]) if view.snapshot(p) is not None]
    on_disk = disk_changes(verify(repo, view, paths)) if paths else {}
    note = confirm_note(repo, before.id, on_disk=on_disk)
    _written(repo, note, note.updated != before.updated, as_json, f"Confirmed note {note.id}.")


@note_app.command("gc")
def gc_cmd(
    older_than: str = typer.Option(
        "30d",
        "--older-than",
        help="Remove for good the notes removed longer ago than this (30d, 12h, 2w).",
        metavar="AGE",
    ),
    as_json: bool = _JSON,
) -> None:
    """Remove for good the notes soft-deleted more than AGE ago (one episode)."""
    from tinymem.notes.store import gc_notes, parse_age
    from tinymem.repository import open_repo

    gone = gc_notes(open_repo(), parse_age(older_than))
    if as_json:
        emit_json({"removed": [n.to_json() for n in gone]})
        return
    rows = [f"Removed {len(gone)} note(s) for good."] + [f"  {n.id}  {n.kind}" for n in gone]
    write_rows(rows, False)


@note_app.command("merge")
def merge_cmd(
    rev: str = typer.Argument(
        ...,
        help="Another clone's project notes, fetched: git fetch origin refs/tinymem/notes,"
        " then tm note merge FETCH_HEAD.",
        metavar="REV",
    ),
    as_json: bool = _JSON,
) -> None:
    """Merge another clone's project notes into ours (one episode): per note, the version
    updated last wins; notes only one side has are kept. Then push them back
    (git push origin refs/tinymem/notes). Branch notes merge with `tm merge-ledger`."""
    from tinymem.notes.merge import merge_project_notes
    from tinymem.repository import open_repo

    doc = merge_project_notes(open_repo(), rev)
    if as_json:
        emit_json(doc)
        return
    if doc["outcome"] == "up to date":
        write_rows(["Already up to date."], False)
        return
    rows = [
        f"Notes {doc['outcome']}: took {len(doc['taken'])} note(s) from {doc['theirs'][:12]},"
        f" removed {len(doc['removed'])}."
    ]
    if doc["displaced"]:
        rows.append(
            "Removed for a key the other side's newer note holds: " + ", ".join(doc["displaced"])
        )
    write_rows(rows, False)
