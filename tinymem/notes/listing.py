"""The notes as `tm note list`, `tm status` and `tm serve` show them: filtered, each with its
drift, the work tree checked (ETV) only for the files the notes are anchored in."""

from __future__ import annotations

from tinymem.etv import EtvReport, verify
from tinymem.ledger import current
from tinymem.notes.drift import NoteDrift, anchored_paths, note_drift
from tinymem.notes.model import Note
from tinymem.notes.store import read_notes
from tinymem.records import KEY_SEPARATOR, nested
from tinymem.repository import Repo
from tinymem.statemap import StateView


def disk_changes(report: EtvReport) -> dict[str, str]:
    """ETV's findings as `anchor_drift` reads them: file path or entity key -> why."""
    out: dict[str, str] = {}
    for d in report.drift:
        out[d.path] = d.why
        for e in d.stale:
            out[e.key] = e.why
    return out


def about(target: str, on: str) -> bool:
    """Whether an anchor on `target` is about `on` (a file, or an entity or what it holds or
    is held by: `--on app.py::Client` finds notes on `Client.get`); a note on a whole file is
    about every entity in it."""
    t_path, t_sep, t_symbol = target.partition(KEY_SEPARATOR)
    o_path, o_sep, o_symbol = on.partition(KEY_SEPARATOR)
    if t_path != o_path:
        return False
    if not t_sep or not o_sep:
        return True
    return nested(t_symbol, o_symbol)


def note_statuses(
    repo: Repo,
    *,
    view: StateView | None = None,
    kind: str | None = None,
    on: str | None = None,
    include_deleted: bool = False,
    report: EtvReport | None = None,
) -> list[NoteDrift]:
    """The notes (both scopes, oldest first) with their drift. `report`: an ETV report the
    caller has already (`tm status`); otherwise the anchored files are verified here."""
    view = view if view is not None else current(repo)
    notes: list[Note] = read_notes(repo, view=view, include_deleted=include_deleted)
    if kind is not None:
        notes = [n for n in notes if n.kind == kind]
    if on is not None:
        notes = [n for n in notes if any(about(a.target, on) for a in n.anchors)]
    if report is None:
        paths = [p for p in anchored_paths(notes) if view.snapshot(p) is not None]
        report = verify(repo, view, paths) if paths else None
    on_disk = disk_changes(report) if report is not None else {}
    return [note_drift(view, n, on_disk) for n in notes]
