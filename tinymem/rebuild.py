"""`tm rebuild`: re-derive the State Map from the ledger alone and prove it equals the stored one.

Two independent derivations are checked against the stored tip:
1. replaying every episode's file records (snapshot and metadata ids) from the root commit
   reproduces the stored State Map tree exactly (same tree id: files/, entities/, meta/,
   proposals/, notes/);
2. folding every episode's entity transitions reproduces each entity's state and artifact as
   the stored metadata records them, and every SUPERSEDED transition leaves the artifact that
   was AUTHORITATIVE just before.
Nothing is written: object ids are computed in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from tinymem.errors import CorruptStateError
from tinymem.gitobjects import (
    MODE_BLOB,
    MODE_EXEC,
    MODE_TREE,
    ObjectWriter,
    UnnamedEntriesError,
    edit_tree,
    read_blob,
)
from tinymem.ledger import current, history
from tinymem.records import State, entity_key
from tinymem.repository import Repo
from tinymem.statemap import (
    ENTITIES,
    EPISODE,
    FILES,
    META,
    NOTES,
    PROPOSALS,
    FileMeta,
    StateView,
)
from tinymem.transitions import TreeEdits, entity_tree


@dataclass
class RebuildReport:
    episodes: int
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences


def rebuild(repo: Repo, tip: str | None = None) -> RebuildReport:
    """Replay the ledger at `tip` (default: the current branch's) along its first parents:
    each episode, a ledger merge's too, records every file it changed against its first
    parent, so that chain alone must reproduce the State Map."""
    view = current(repo) if tip is None else StateView(repo.git, tip)
    assert view.commit_id is not None
    writer = ObjectWriter(repo.git)  # never flushed
    tree: str | None = None
    states: dict[str, tuple[State, str]] = {}
    report = RebuildReport(episodes=0)
    for commit, ep in history(repo, newest_first=False, tips=[view.commit_id]):
        report.episodes += 1
        edits: TreeEdits = {}
        left: list[str] = []  # records that left the State Map (`displacing`)
        for path, record in ep.files.items():
            meta_oid = record.get("meta")
            if meta_oid is None and record.get("snapshot") is None:
                for top in (FILES, META, ENTITIES):
                    edits[f"{top}/{path}"] = None
                left.append(path)
                continue
            if meta_oid is None or meta_oid not in repo.git.odb:
                report.differences.append(
                    f"episode {ep.id} ({commit[:12]}): metadata of {path} is missing"
                )
                continue
            meta = FileMeta.from_bytes(read_blob(repo.git, meta_oid))
            snapshot = record.get("snapshot")
            mode = MODE_EXEC if meta.executable else MODE_BLOB
            edits[f"{FILES}/{path}"] = None if snapshot is None else (mode, snapshot)
            edits[f"{META}/{path}"] = (MODE_BLOB, meta_oid)
            ents = entity_tree(writer, meta)
            edits[f"{ENTITIES}/{path}"] = None if ents is None else (MODE_TREE, ents)
        for pid, oid in ep.proposals.items():
            # A tree (the record and the blobs it pins), or a record alone in repositories
            # written before proposals were pinned: replayed as stored.
            pinned = oid is not None and isinstance(repo.git.get(oid), pygit2.Tree)
            mode = MODE_TREE if pinned else MODE_BLOB
            edits[f"{PROPOSALS}/{pid}"] = None if oid is None else (mode, oid)
        for nid, entry in ep.notes.items():
            if entry.get("scope") == "branch":  # project notes live on refs/tinymem/notes
                blob = entry.get("record")
                edits[f"{NOTES}/{nid}.json"] = None if blob is None else (MODE_BLOB, blob)
        try:
            tree = edit_tree(writer, tree, edits)
        except UnnamedEntriesError as exc:
            # A ledger written before #29's fix: a file took a directory's place (or the
            # reverse) and dropped the records of the other kind. No replay goes further.
            report.differences.append(
                f"episode {ep.id} ({commit[:12]}): its files cannot be replayed ({exc}):"
                " a path that changed between a file and a directory, recorded by an older tm"
            )
            return report
        for t in ep.transitions:
            if t.to_state is State.SUPERSEDED:
                before = states.get(t.entity)
                if before != (State.AUTHORITATIVE, t.artifact):
                    report.differences.append(
                        f"episode {ep.id}: {t.entity} superseded {t.artifact[:12]}, which was not"
                        " its authoritative artifact"
                    )
            elif t.to_state in (State.AUTHORITATIVE, State.TOMBSTONED):
                states[t.entity] = (t.to_state, t.artifact)
        for path in left:
            prefix = entity_key(path, "")
            for key in [k for k in states if k.startswith(prefix)]:
                del states[key]
    if view.tree_id is None:
        raise CorruptStateError("the state tip has no tree")
    stored = edit_tree(writer, view.tree_id, {EPISODE: None})
    rebuilt = tree if tree is not None else writer.tree([])
    if stored != rebuilt:
        report.differences.extend(_tree_diff(repo, writer, stored, rebuilt))
    for stored_meta in view.all_meta():
        for rec in stored_meta.entities.values():
            key = entity_key(stored_meta.path, rec.symbol)
            folded = states.pop(key, None)
            if folded != (rec.state, rec.artifact):
                said = "nothing" if folded is None else f"{folded[0].value} {folded[1][:12]}"
                report.differences.append(
                    f"{key}: the ledger's transitions give {said}, the State Map records"
                    f" {rec.state.value} {rec.artifact[:12]}"
                )
    for key, (state, artifact) in sorted(states.items()):
        report.differences.append(
            f"{key}: the ledger's transitions give {state.value} {artifact[:12]},"
            " the State Map has no record"
        )
    return report


def _flatten(repo: Repo, writer: ObjectWriter, tree: str) -> dict[str, str]:
    out: dict[str, str] = {}
    stack = [("", tree)]
    while stack:
        prefix, oid = stack.pop()
        for name, mode, child in writer.tree_entries(oid):
            if mode == MODE_TREE:
                stack.append((prefix + name + "/", child))
            else:
                out[prefix + name] = child
    return out


def _tree_diff(repo: Repo, writer: ObjectWriter, stored: str, rebuilt: str) -> list[str]:
    a = _flatten(repo, writer, stored)
    b = _flatten(repo, writer, rebuilt)
    lines = []
    for path in sorted(set(a) | set(b)):
        if a.get(path) != b.get(path):
            lines.append(
                f"{path}: stored {(a.get(path) or 'nothing')[:12]},"
                f" rebuilt from the ledger {(b.get(path) or 'nothing')[:12]}"
            )
    return lines
