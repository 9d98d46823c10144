"""A note: one remembered decision, constraint, gotcha, dead end, fact, plan or plain note.

Stored as one JSON file per note (`docs/formats.md`, "Notes"), written indented so that
`git show refs/tinymem/notes:<id>.json` reads as text.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from tinymem.errors import CorruptStateError

KINDS: tuple[str, ...] = ("decision", "constraint", "gotcha", "tried", "fact", "plan", "note")
Scope = Literal["project", "branch"]
SCOPES: tuple[Scope, ...] = ("project", "branch")
NOTE_VERSION = 1


def new_note_id() -> str:
    # Random, like episode ids: two clones writing notes at once must not pick the same id
    # (a merge keeps both), and 8 hex digits make that a 1 in 4 billion event per pair.
    return secrets.token_hex(4)


@dataclass(frozen=True)
class Anchor:
    """What a note is about: a file (`path`) or an entity (`path::Qualified.name`), with the
    blob id of its authoritative text when the note was written or last confirmed."""

    target: str
    artifact: str | None

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "artifact": self.artifact}


@dataclass(frozen=True)
class Note:
    id: str
    kind: str
    text: str
    anchors: tuple[Anchor, ...]
    key: str | None
    scope: Scope
    created: str  # ISO times, as episode times
    updated: str
    deleted: str | None  # soft delete time; None while live
    source: str  # "user", "model:<name>", "reject", "mcp:<client>"
    episode: str  # the episode that last wrote it

    @property
    def live(self) -> bool:
        return self.deleted is None

    def with_changes(self, **changes: Any) -> Note:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": NOTE_VERSION,
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "anchors": [a.to_json() for a in self.anchors],
            "key": self.key,
            "scope": self.scope,
            "created": self.created,
            "updated": self.updated,
            "deleted": self.deleted,
            "source": self.source,
            "episode": self.episode,
        }

    def to_bytes(self) -> bytes:
        return (json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Note:
        try:
            scope = raw["scope"]
            if scope not in SCOPES:
                raise ValueError(f"unknown scope {scope!r}")
            return cls(
                id=str(raw["id"]),
                kind=str(raw["kind"]),
                text=str(raw["text"]),
                anchors=tuple(
                    Anchor(str(a["target"]), a.get("artifact")) for a in raw.get("anchors", [])
                ),
                key=raw.get("key"),
                scope=cast(Scope, scope),
                created=str(raw["created"]),
                updated=str(raw["updated"]),
                deleted=raw.get("deleted"),
                source=str(raw.get("source", "user")),
                episode=str(raw.get("episode", "")),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CorruptStateError(f"unreadable note record: {exc}") from exc

    @classmethod
    def from_bytes(cls, data: bytes) -> Note:
        try:
            raw = json.loads(data)
        except ValueError as exc:
            raise CorruptStateError(f"unreadable note record: {exc}") from exc
        if not isinstance(raw, dict):
            raise CorruptStateError("unreadable note record: not a JSON object")
        return cls.from_json(raw)
