"""The State Map as stored in a ledger commit's tree, and its per-file metadata records.

Tree layout of every commit on `refs/tinymem/state` (see docs/formats.md):

    files/<path>               authoritative snapshot of each live tracked file
    entities/<path>/<symbol>   authoritative artifact of each live entity (symbol escaped)
    meta/<path>                JSON FileMeta: every entity of the file with its record
    proposals/<id>/            each pending or rejected proposal: proposal.json and every blob
                               it names, entered under its own id so gc and mirrors keep it
    notes/<id>.json            each of the branch's notes (project notes: refs/tinymem/notes)
    episode/                   this commit's own record (episode.json, prompt, reply, ...)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pygit2

from tinymem.errors import CorruptStateError
from tinymem.gitobjects import MODE_TREE, read_blob, read_tree, walk_blobs
from tinymem.jsontext import BOOL, quoted, quoted_or_null
from tinymem.paths import fsck_wants_blob
from tinymem.records import Confidence, Source, State, entity_key

FILES = "files"
ENTITIES = "entities"
META = "meta"
PROPOSALS = "proposals"
NOTES = "notes"  # the branch's own notes, `notes/<id>.json` (`tinymem.notes.store`)
EPISODE = "episode"

PROPOSAL_RECORD = "proposal.json"


def proposal_record(repo: pygit2.Repository, oid: str) -> bytes:
    """The JSON of a stored proposal: `oid` is its `proposals/<id>` tree (the record and the
    blobs it pins) or, in repositories written before that layout, the record itself."""
    try:
        obj = repo[oid]
        if isinstance(obj, pygit2.Tree):
            return read_blob(repo, obj[PROPOSAL_RECORD].id)
        return read_blob(repo, oid)
    except (KeyError, ValueError) as exc:
        raise CorruptStateError(f"proposal record {oid} is missing from the vault") from exc


_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.@#")


_PLAIN = re.compile(r"[A-Za-z0-9_@#-][A-Za-z0-9_.@#-]*")


def escape_symbol(symbol: str) -> str:
    """A tree entry name for a symbol: survives `/`, operators, unicode and `git fsck --strict`.

    Everything outside a small safe set is %XX-encoded (UTF-8), and so is a leading dot, so
    no name can be `.`, `..` or `.git`.
    """
    if _PLAIN.fullmatch(symbol):
        return symbol  # the common case: nothing to escape
    out = []
    for i, ch in enumerate(symbol):
        if ch in _SAFE and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out) or "%"


def unescape_symbol(name: str) -> str:
    if name == "%":
        return ""
    raw = bytearray()
    i = 0
    while i < len(name):
        if name[i] == "%" and i + 3 <= len(name):
            raw.append(int(name[i + 1 : i + 3], 16))
            i += 3
        else:
            raw += name[i].encode("utf-8")
            i += 1
    return raw.decode("utf-8")


@dataclass(frozen=True)
class EntityRecord:
    symbol: str
    kind: str
    start: int  # byte span in the file snapshot
    end: int
    artifact: str  # blob id of the entity's text (for TOMBSTONED: the last artifact)
    state: State
    confidence: Confidence
    source: Source
    episode: str  # id of the episode that set this record
    time: str  # ISO time of that episode
    reason: str | None = None  # why the confidence is not CONFIRMED, or why tombstoned
    base: str | None = None  # artifact a model proposal was written against
    superseded: tuple[str, ...] = ()  # earlier artifacts, oldest first

    def json_text(self) -> str:
        """The record as stored in a FileMeta: exactly `json.dumps` of the object
        {"artifact", "base", "confidence", "episode", "kind", "reason", "source", "span": [start,
        end], "state", "superseded", "time"} with ensure_ascii=False, keys in this order.
        Written out by hand (`jsontext`): a 50,000-file baseline stores 214,000 of them.
        tests/test_statemap.py holds this to json.dumps."""
        q, qn = quoted, quoted_or_null
        superseded = ", ".join(map(q, self.superseded))
        # The states are StrEnum members, so strings themselves: quoted as they are (`.value`
        # is a Python-level property on 3.11).
        return (
            f'{{"artifact": {q(self.artifact)}, "base": {qn(self.base)}, '
            f'"confidence": {q(self.confidence)}, "episode": {q(self.episode)}, '
            f'"kind": {q(self.kind)}, "reason": {qn(self.reason)}, '
            f'"source": {q(self.source)}, "span": [{self.start:d}, {self.end:d}], '
            f'"state": {q(self.state)}, "superseded": [{superseded}], '
            f'"time": {q(self.time)}}}'
        )

    @classmethod
    def from_json(cls, symbol: str, raw: dict[str, Any]) -> EntityRecord:
        return cls(
            symbol=symbol,
            kind=raw["kind"],
            start=raw["span"][0],
            end=raw["span"][1],
            artifact=raw["artifact"],
            state=State(raw["state"]),
            confidence=Confidence(raw["confidence"]),
            source=Source(raw["source"]),
            episode=raw["episode"],
            time=raw["time"],
            reason=raw.get("reason"),
            base=raw.get("base"),
            superseded=tuple(raw.get("superseded", ())),
        )


@dataclass(frozen=True)
class FileMeta:
    path: str
    snapshot: str  # blob id of the authoritative file text (last one, if deleted)
    kind: str  # "code" | "text" | "binary" | "oversize"
    language: str | None
    method: str  # how entities were found: "tree-sitter" | "regex" | "none"
    clean: bool
    reason: str | None
    deleted: bool = False
    executable: bool = False
    entities: dict[str, EntityRecord] = field(default_factory=dict)

    def live_entities(self) -> Iterator[EntityRecord]:
        for rec in self.entities.values():
            if rec.state is State.AUTHORITATIVE:
                yield rec

    def key(self, symbol: str) -> str:
        return entity_key(self.path, symbol)

    def to_bytes(self) -> bytes:
        """`json.dumps` of the record with sort_keys and ensure_ascii=False, plus a newline
        (see docs/formats.md); written out by hand like `EntityRecord.json_text`. For a file
        git fsck reads as attributes or submodules (`fsck_wants_blob`): indented."""
        q, qn = quoted, quoted_or_null
        entities = ", ".join(
            f"{q(s)}: {self.entities[s].json_text()}" for s in sorted(self.entities)
        )
        text = (
            f'{{"clean": {BOOL[self.clean]}, "deleted": {BOOL[self.deleted]}, '
            f'"entities": {{{entities}}}, "executable": {BOOL[self.executable]}, '
            f'"kind": {q(self.kind)}, "language": {qn(self.language)}, '
            f'"method": {q(self.method)}, "path": {q(self.path)}, '
            f'"reason": {qn(self.reason)}, "snapshot": {q(self.snapshot)}, "version": 1}}'
        )
        if fsck_wants_blob(self.path.rpartition("/")[2]):
            # git fsck reads a blob named .gitattributes as attributes and refuses lines over
            # 2 KiB (a long history of superseded artifacts): one value per line instead.
            text = json.dumps(json.loads(text), indent=1, sort_keys=True, ensure_ascii=False)
        return (text + "\n").encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> FileMeta:
        try:
            raw = json.loads(data)
            return cls(
                path=raw["path"],
                snapshot=raw["snapshot"],
                kind=raw["kind"],
                language=raw["language"],
                method=raw["method"],
                clean=raw["clean"],
                reason=raw["reason"],
                deleted=raw.get("deleted", False),
                executable=raw.get("executable", False),
                entities={
                    s: EntityRecord.from_json(s, r) for s, r in raw.get("entities", {}).items()
                },
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptStateError(f"unreadable file metadata record: {exc}") from exc


class StateView:
    """Read access to the State Map at one ledger commit (None: nothing recorded yet)."""

    def __init__(self, repo: pygit2.Repository, commit_id: str | None) -> None:
        self.repo = repo
        self.commit_id = commit_id
        self.tree_id: str | None = None
        self._subtrees: dict[str, str | None] = {}
        if commit_id is not None:
            try:
                commit = repo[commit_id]
                if not isinstance(commit, pygit2.Commit):
                    raise ValueError("not a commit")
                self.tree_id = str(commit.tree_id)
            except (KeyError, ValueError, pygit2.GitError) as exc:
                raise CorruptStateError(f"ledger commit {commit_id} is unreadable: {exc}") from exc
        self._files: dict[str, str] | None = None
        self._meta_cache: dict[str, FileMeta | None] = {}
        # Top-level subtrees looked into, kept: libgit2 caches no tree over 4 KiB, so a large
        # one (proposals/ with thousands of entries) was parsed again for every lookup.
        self._tree_objects: dict[str, pygit2.Tree] = {}

    def subtree(self, name: str) -> str | None:
        if name not in self._subtrees:
            oid: str | None = None
            if self.tree_id is not None:
                tree = read_tree(self.repo, self.tree_id)
                if name in tree:
                    entry = tree[name]
                    if entry.filemode == MODE_TREE:
                        oid = str(entry.id)
            self._subtrees[name] = oid
        return self._subtrees[name]

    def files(self) -> dict[str, str]:
        """Path -> snapshot blob id of every live tracked file."""
        if self._files is None:
            sub = self.subtree(FILES)
            self._files = dict(walk_blobs(self.repo, sub)) if sub else {}
        return self._files

    def blob(self, oid: str) -> bytes:
        try:
            return read_blob(self.repo, oid)
        except (KeyError, ValueError) as exc:
            raise CorruptStateError(f"artifact {oid} is missing from the vault") from exc

    def _lookup(self, top: str, path: str) -> str | None:
        found = self.entry(top, path)
        return None if found is None else found[1]

    def file_entry(self, top: str, path: str) -> tuple[int, str] | None:
        """`entry` of file `path` under `top` (files/, meta/): None for a directory there. A
        directory of tracked files in the State Map can be something else on disk and in
        git (a symlink committed in its place), and git then names it."""
        found = self.entry(top, path)
        return None if found is None or found[0] == MODE_TREE else found

    def _file_lookup(self, top: str, path: str) -> str | None:
        found = self.file_entry(top, path)
        return None if found is None else found[1]

    def entry(self, top: str, path: str) -> tuple[int, str] | None:
        """(mode, id) of `top/path` in this State Map's tree (`meta`, `proposals`, ...)."""
        sub = self.subtree(top)
        if sub is None:
            return None
        tree = self._tree_objects.get(top)
        if tree is None:
            tree = self._tree_objects[top] = read_tree(self.repo, sub)
        try:
            entry = tree[path]
        except KeyError:
            return None
        return entry.filemode, str(entry.id)

    def snapshot(self, path: str) -> str | None:
        """The snapshot id of one live file, without listing the others."""
        if self._files is not None:
            return self._files.get(path)
        return self._file_lookup(FILES, path)

    def meta(self, path: str) -> FileMeta | None:
        if path not in self._meta_cache:
            oid = self._file_lookup(META, path)
            self._meta_cache[path] = None if oid is None else FileMeta.from_bytes(self.blob(oid))
        return self._meta_cache[path]

    def meta_paths(self) -> list[str]:
        sub = self.subtree(META)
        return [p for p, _ in walk_blobs(self.repo, sub)] if sub else []

    def all_meta(self) -> Iterator[FileMeta]:
        for path in sorted(self.meta_paths()):
            meta = self.meta(path)
            if meta is not None:
                yield meta

    def episode_blob(self, name: str) -> bytes | None:
        sub = self.subtree(EPISODE)
        if sub is None:
            return None
        tree = read_tree(self.repo, sub)
        if name not in tree:
            return None
        return read_blob(self.repo, tree[name].id)

    def proposal_ids(self) -> list[str]:
        sub = self.subtree(PROPOSALS)
        return sorted(entry.name or "" for entry in read_tree(self.repo, sub)) if sub else []

    def proposal_blob(self, pid: str) -> bytes | None:
        oid = self._lookup(PROPOSALS, pid)
        return None if oid is None else proposal_record(self.repo, oid)
