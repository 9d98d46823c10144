"""`tm mcp`'s project-memory tools: the notes of `tm note` (`tinymem/notes/`), read with
their drift and written as one note episode each, the client named as the note's source."""

from __future__ import annotations

import re
from typing import Any

from tinymem.mcp.tools import repo_at
from tinymem.records import KEY_SEPARATOR
from tinymem.repository import Repo

__all__ = ["note_write", "notes"]

_WORD = re.compile(r"\w+")


def _target(repo: Repo, text: str) -> str:
    """An entity or file as the repository names it (`tm note --on` reads it alike)."""
    path, sep, symbol = text.strip().partition(KEY_SEPARATOR)
    return repo.rel(path) + sep + symbol if path else text


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def notes(workdir: str, query: str | None, on: str | None) -> dict[str, Any]:
    """The live notes of both scopes with their drift: about `on` (an entity or file) when
    given; with `query`, those sharing a word with it, most shared first (then oldest)."""
    from tinymem.notes.listing import note_statuses

    repo = repo_at(workdir)
    statuses = note_statuses(repo, on=None if on is None else _target(repo, on))
    wanted = _words(query or "")
    if wanted:
        scored = []
        for s in statuses:
            n = s.note
            have = _words(" ".join([n.kind, n.text, n.key or "", *(a.target for a in n.anchors)]))
            if hits := len(wanted & have):
                scored.append((hits, s))
        scored.sort(key=lambda pair: -pair[0])  # stable: oldest first among equals
        statuses = [s for _, s in scored]
    return {"notes": [s.to_json() for s in statuses]}


def note_write(
    workdir: str, kind: str, text: str, on: list[str], key: str | None, source: str
) -> dict[str, Any]:
    """A project note (with `key`: the note of that key updated), as `tm note add`."""
    from tinymem.notes.listing import note_statuses
    from tinymem.notes.store import add_note

    repo = repo_at(workdir)
    targets = [_target(repo, t) for t in on]
    note = add_note(repo, kind, text, on=targets, key=key, source=source)
    [status] = [s for s in note_statuses(repo, include_deleted=True) if s.note.id == note.id]
    return {"note": status.to_json(), "episode": note.episode}
