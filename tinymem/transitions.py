"""How a file's new authoritative text turns into entity records, transitions and tree changes.

Shared by every episode that makes text authoritative: the baseline import (source disk), the
user write-head (source user) and accepted proposals (source model).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace

from tinymem.gitobjects import MODE_BLOB, MODE_EXEC, MODE_TREE, ObjectWriter
from tinymem.ledger import Episode, Transition
from tinymem.paths import fsck_wants_blob
from tinymem.records import FILE_SYMBOL, Confidence, Source, State, entity_key
from tinymem.statemap import ENTITIES, FILES, META, EntityRecord, FileMeta, escape_symbol
from tinymem.symbols import Extraction, Symbol
from tinymem.worktree import WorktreeFile

TreeEdits = dict[str, "tuple[int, str] | None"]


@dataclass
class FileUpdate:
    meta: FileMeta
    transitions: list[Transition] = field(default_factory=list)
    tombstoned: list[str] = field(default_factory=list)  # symbols that left the file


def confidence_of(ex: Extraction | None) -> tuple[Confidence, str | None]:
    if ex is None or ex.method == "none" or (ex.method == "tree-sitter" and ex.clean):
        return Confidence.CONFIRMED, None
    return Confidence.INFERRED, ex.reason or "entities found without a clean parse"


def entity_spans(wf: WorktreeFile, ex: Extraction | None) -> list[Symbol]:
    """The entities a file's text is made of; a text file without symbols is one entity."""
    if ex is None:
        return []  # binary or over-size: a snapshot only
    if ex.symbols:
        return list(ex.symbols)
    return [Symbol(FILE_SYMBOL, "file", 0, len(wf.data), None)]


def record_file(
    writer: ObjectWriter,
    old: FileMeta | None,
    wf: WorktreeFile,
    ex: Extraction | None,
    *,
    source: Source,
    episode: Episode,
    reason: str,
    new_from: State | None = None,
    base: str | None = None,
) -> FileUpdate:
    """Make `wf` the authoritative text of its file; every entity in it becomes AUTHORITATIVE.

    Entities whose text did not change keep their record (and its episode and source); changed
    ones supersede their previous artifact; entities that left the file are TOMBSTONED.
    """
    confidence, why = confidence_of(ex)
    # The snapshot may be text git never stored (an edit not yet staged): the vault needs it.
    writer.blob(wf.data, known=True, oid=wf.oid)
    old_entities = {} if old is None else old.entities
    entities: dict[str, EntityRecord] = {}
    transitions: list[Transition] = []
    for sym in entity_spans(wf, ex):
        text = wf.data[sym.start : sym.end]
        artifact = wf.oid if sym.name == FILE_SYMBOL else writer.blob(text)
        prev = old_entities.get(sym.name)
        key = entity_key(wf.path, sym.name)
        if prev is not None and prev.state is State.AUTHORITATIVE and prev.artifact == artifact:
            entities[sym.name] = replace(prev, kind=sym.kind, start=sym.start, end=sym.end)
            continue
        superseded = () if prev is None else prev.superseded
        if prev is not None and prev.state is State.AUTHORITATIVE:
            transitions.append(
                Transition(key, State.AUTHORITATIVE, State.SUPERSEDED, prev.artifact, reason)
            )
            superseded = (*superseded, prev.artifact)
        from_state = new_from
        if from_state is None and prev is not None and prev.state is State.TOMBSTONED:
            from_state = State.TOMBSTONED
        transitions.append(Transition(key, from_state, State.AUTHORITATIVE, artifact, reason))
        entities[sym.name] = EntityRecord(
            symbol=sym.name,
            kind=sym.kind,
            start=sym.start,
            end=sym.end,
            artifact=artifact,
            state=State.AUTHORITATIVE,
            confidence=confidence,
            source=source,
            episode=episode.id,
            time=episode.time,
            reason=why,
            base=base,
            superseded=superseded,
        )
    tombstoned = _tombstone(
        wf.path,
        {n: r for n, r in old_entities.items() if n not in entities},
        entities,
        transitions,
        episode=episode,
        reason=reason,
    )
    meta = FileMeta(
        path=wf.path,
        snapshot=wf.oid,
        kind=wf.kind if ex is None else ("text" if ex.method == "none" else "code"),
        language=None if ex is None else ex.language,
        method="none" if ex is None else ex.method,
        clean=True if ex is None else ex.clean,
        reason=None if ex is None else ex.reason,
        deleted=False,
        executable=wf.executable,
        entities=entities,
    )
    return FileUpdate(meta, transitions, tombstoned)


def record_deletion(old: FileMeta, *, episode: Episode, reason: str) -> FileUpdate:
    """The file is gone: every live entity is TOMBSTONED; artifacts stay in the vault."""
    entities: dict[str, EntityRecord] = {}
    transitions: list[Transition] = []
    tombstoned = _tombstone(
        old.path, old.entities, entities, transitions, episode=episode, reason=reason
    )
    meta = replace(old, deleted=True, entities=entities)
    return FileUpdate(meta, transitions, tombstoned)


def _tombstone(
    path: str,
    leaving: dict[str, EntityRecord],
    entities: dict[str, EntityRecord],
    transitions: list[Transition],
    *,
    episode: Episode,
    reason: str,
) -> list[str]:
    """Live entities in `leaving` become TOMBSTONED (their records stay, for the audit)."""
    tombstoned: list[str] = []
    for name, prev in leaving.items():
        if prev.state is State.AUTHORITATIVE:
            tombstoned.append(name)
            transitions.append(
                Transition(
                    entity_key(path, name),
                    State.AUTHORITATIVE,
                    State.TOMBSTONED,
                    prev.artifact,
                    reason,
                )
            )
            entities[name] = replace(
                prev, state=State.TOMBSTONED, episode=episode.id, time=episode.time, reason=reason
            )
        else:
            entities[name] = prev  # already tombstoned
    return tombstoned


def entity_tree(writer: ObjectWriter, meta: FileMeta) -> str | None:
    """The tree `entities/<path>` of a file's live entities (None: no such tree)."""
    entries = [(escape_symbol(rec.symbol), MODE_BLOB, rec.artifact) for rec in meta.live_entities()]
    if not entries:
        return None
    if (
        fsck_wants_blob(posixpath.basename(meta.path))
        and len(entries) == 1
        and entries[0][2] == meta.snapshot
    ):
        # `git fsck --strict` refuses a tree named .gitattributes or .gitmodules. Such a file
        # has no symbols: its one entity is the whole file, whose blob files/<path> holds, so
        # leaving the tree out keeps every artifact reachable.
        return None
    return writer.tree(entries)


def apply_update(
    writer: ObjectWriter, update: FileUpdate, episode: Episode, edits: TreeEdits
) -> None:
    """Stage the update's tree changes into `edits` and its record into `episode`."""
    meta = update.meta
    meta_oid = writer.blob(meta.to_bytes())
    ents = entity_tree(writer, meta)
    if meta.deleted:
        edits[f"{FILES}/{meta.path}"] = None
    else:
        mode = MODE_EXEC if meta.executable else MODE_BLOB
        edits[f"{FILES}/{meta.path}"] = (mode, meta.snapshot)
    edits[f"{ENTITIES}/{meta.path}"] = None if ents is None else (MODE_TREE, ents)
    edits[f"{META}/{meta.path}"] = (MODE_BLOB, meta_oid)
    episode.files[meta.path] = {
        "snapshot": None if meta.deleted else meta.snapshot,
        "meta": meta_oid,
    }
    episode.transitions.extend(update.transitions)
