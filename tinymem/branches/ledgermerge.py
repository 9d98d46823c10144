"""`tm merge-ledger REV`: two ledgers of one branch (two people's, fetched) made one.

A fast-forward when one contains the other. Otherwise a new ledger commit with both tips as
parents, whose State Map is re-derived file by file against their merge base, as git merges
trees: a file only one side changed takes that side's records; a file both changed takes the
side whose text the work tree holds, or, when the work tree holds a committed merge of them
(HEAD's text), that text; anything else is refused, nothing written, so no side is ever taken
blindly. A record theirs took out of its State Map (a path of the other kind took its place,
`displacing`) leaves ours too, recorded deleted first; where ours changed what such a path
displaces, the work tree decides (`_displaced`). Proposals merge the same way (one resolved
on either side stays resolved); branch notes by id, the one updated last winning
(`tinymem.notes.merge`). The merge
episode records every file it changed against the first parent, with the transitions that
turn our records into the merged ones, so replaying the first-parent chain reproduces it: the
result is proved by `tm rebuild` before the command returns, and the ref is put back if not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pygit2

from tinymem.branches.refs import resolve_commit
from tinymem.displacing import live_displaced, regular_file
from tinymem.errors import CorruptStateError, UsageError
from tinymem.gitobjects import ObjectWriter, diff_blobs, read_blob, read_tree, walk_blobs
from tinymem.ledger import (
    Draft,
    Episode,
    Transition,
    commit_episode,
    current,
    message_trailer,
)
from tinymem.notes.merge import merge_notes
from tinymem.notes.store import branch_notes, note_edits
from tinymem.records import Source, State, entity_key
from tinymem.reflock import swap_ref, updating
from tinymem.repository import Repo
from tinymem.statemap import META, PROPOSALS, FileMeta, StateView
from tinymem.symcache import SymbolCache, extraction_for
from tinymem.textlist import shortened
from tinymem.transitions import (
    FileUpdate,
    TreeEdits,
    apply_update,
    record_deletion,
    record_file,
)
from tinymem.worktree import read_file

__all__ = ["LedgerMerge", "merge_ledger"]


@dataclass
class LedgerMerge:
    outcome: str  # "up to date", "fast-forward", "merged"
    ours: str
    theirs: str
    commit: str | None = None  # the ledger tip after
    episodes: int = 0  # episodes of theirs that were not ours
    taken: list[str] = field(default_factory=list)  # files whose records came from theirs
    resolved: list[str] = field(default_factory=list)  # both changed: HEAD's merge of them
    kept: list[str] = field(default_factory=list)  # both changed: the work tree holds ours
    proposals: list[str] = field(default_factory=list)  # proposal entries changed
    notes: list[str] = field(default_factory=list)  # branch notes taken from theirs
    proved: int = 0  # episodes `tm rebuild` replayed to prove the result

    def to_json(self) -> dict[str, Any]:
        """`tm merge-ledger --json`."""
        return {
            "outcome": self.outcome,
            "ours": self.ours,
            "theirs": self.theirs,
            "commit": self.commit,
            "episodes": self.episodes,
            "taken": self.taken,
            "resolved": self.resolved,
            "kept": self.kept,
            "proposals": self.proposals,
            "notes": self.notes,
            "proved_episodes": self.proved,
        }


def _ledger_commit(repo: Repo, rev: str) -> str:
    obj = resolve_commit(repo.git, rev)
    if obj is None:
        raise UsageError(f"{rev}: no such commit (fetch the other ledger first)")
    commit = str(obj.id)
    if StateView(repo.git, commit).episode_blob("episode.json") is None:
        raise UsageError(f"{rev} ({commit[:12]}) is not a tm ledger commit")
    theirs = message_trailer(obj.message, "Tinymem-Branch")
    if theirs is not None and theirs != repo.branch:
        raise UsageError(
            f"{rev} is branch {theirs}'s ledger, not {repo.branch}'s: branches have their own"
            f" State Maps (merge the code with git; `tm adopt --merged` records what it wrote)"
        )
    return commit


def _meta(view: StateView, oid: str | None) -> FileMeta | None:
    return None if oid is None else FileMeta.from_bytes(read_blob(view.repo, oid))


def _changed(repo: Repo, base: StateView, other: StateView, top: str) -> list[str]:
    old, new = base.subtree(top), other.subtree(top)
    if new is None or old == new:
        return []
    if old is None:
        return [p for p, _ in walk_blobs(repo.git, new)]
    return [p for p, _ in diff_blobs(repo.git, old, new)]


def _proposals(view: StateView) -> dict[str, tuple[int, str]]:
    """Proposal id -> (mode, id) of its entry: the `proposals/` tree read once."""
    sub = view.subtree(PROPOSALS)
    if sub is None:
        return {}
    return {e.name or "": (e.filemode, str(e.id)) for e in read_tree(view.repo, sub)}


def _transitions(
    path: str, ours: FileMeta | None, theirs: FileMeta, reason: str
) -> list[Transition]:
    """What turns our records of `path` into theirs, as a replay folds transitions."""
    out: list[Transition] = []
    mine = {} if ours is None else ours.entities
    for name in sorted(mine.keys() | theirs.entities.keys()):
        o, t = mine.get(name), theirs.entities.get(name)
        if t is None or (o is not None and (o.state, o.artifact) == (t.state, t.artifact)):
            continue
        key = entity_key(path, name)
        if o is not None and o.state is State.AUTHORITATIVE and t.state is State.AUTHORITATIVE:
            out.append(Transition(key, State.AUTHORITATIVE, State.SUPERSEDED, o.artifact, reason))
        out.append(Transition(key, None if o is None else o.state, t.state, t.artifact, reason))
    return out


def merge_ledger(repo: Repo, rev: str) -> LedgerMerge:
    ours = current(repo).commit_id
    assert ours is not None
    theirs = _ledger_commit(repo, rev)
    git = repo.git
    result = LedgerMerge("up to date", ours, theirs, commit=ours)
    if theirs == ours or git.descendant_of(pygit2.Oid(hex=ours), pygit2.Oid(hex=theirs)):
        return result
    base_oid = git.merge_base(pygit2.Oid(hex=ours), pygit2.Oid(hex=theirs))
    if base_oid is None:
        raise UsageError(
            f"{rev} shares no episode with branch {repo.branch}'s ledger: it is another"
            " repository's or another branch's, not a copy of this one"
        )
    base = str(base_oid)
    # Their episodes that ours lacks, named by the commits' trailers (an `init` record can
    # run to tens of MB; it is never read here).
    walker = git.walk(pygit2.Oid(hex=theirs))
    walker.hide(base_oid)
    brought = [message_trailer(c.message, "Tinymem-Episode") or str(c.id) for c in walker]
    result.episodes = len(brought)
    ref = repo.state_ref
    if base == ours:
        _move(repo, ref, ours, theirs)
        result.outcome, result.commit = "fast-forward", theirs
        result.proved = _prove(repo, ref, theirs, ours)
        return result

    def operation(view: StateView, writer: ObjectWriter) -> Draft | None:
        result.taken.clear()
        result.resolved.clear()
        result.kept.clear()
        result.proposals.clear()
        result.notes.clear()
        b, t = StateView(git, base), StateView(git, theirs)
        episode = Episode(kind="merge", summary="")
        reason = f"merged from ledger {theirs[:12]}"
        edits: TreeEdits = {}
        conflicts: list[str] = []
        # Decided first, applied once every path is decided: a file taken from theirs can
        # displace one of ours of the other kind (`displacing`), which is decided with it.
        updates: dict[str, FileUpdate] = {}
        for path in _changed(repo, b, t, META):
            # Records only (a directory of records of the other kind is no record of `path`).
            o_id, b_id, t_id = (v.file_entry(META, path) for v in (view, b, t))
            if o_id == t_id:
                continue
            o_meta = _meta(view, o_id and o_id[1])
            if t_id is None:
                # Their record left their State Map: a path of the other kind took its place
                # (recorded deleted first). Ours unchanged: deleted here too, and it leaves
                # with theirs (`_displaced`); ours changed it: `_displaced` decides.
                if o_id == b_id and o_meta is not None and not o_meta.deleted:
                    updates[path] = record_deletion(o_meta, episode=episode, reason=reason)
                    result.taken.append(path)
                continue
            t_meta = _meta(t, t_id[1])
            assert t_meta is not None
            if o_id == b_id:
                updates[path] = FileUpdate(t_meta, _transitions(path, o_meta, t_meta, reason))
                result.taken.append(path)
                continue
            same = o_meta is not None and (o_meta.snapshot, o_meta.deleted) == (
                t_meta.snapshot,
                t_meta.deleted,
            )
            if same:
                continue  # both arrived at the same text: our records of it stand
            chosen = _resolve(repo, path, o_meta, t_meta, writer, episode)
            if chosen is None:
                conflicts.append(path)
            elif chosen == "ours":
                result.kept.append(path)
            elif chosen == "theirs":
                updates[path] = FileUpdate(t_meta, _transitions(path, o_meta, t_meta, reason))
                result.taken.append(path)
            elif isinstance(chosen, FileUpdate):
                updates[path] = chosen
                result.resolved.append(path)
        conflicts += _displaced(repo, view, updates, result, episode, reason)
        for update in updates.values():
            apply_update(writer, update, episode, edits)
        if conflicts:
            raise UsageError(
                f"both ledgers changed {shortened(conflicts)}, and the work tree holds neither"
                " version nor a committed merge of them: merge the code first (git pull,"
                " resolve, commit), then run tm merge-ledger again; nothing was written"
            )
        o_p, b_p, t_p = _proposals(view), _proposals(b), _proposals(t)
        for pid in sorted(p for p in b_p.keys() | t_p.keys() if b_p.get(p) != t_p.get(p)):
            o_e, b_e, t_e = o_p.get(pid), b_p.get(pid), t_p.get(pid)
            if o_e == t_e or (o_e != b_e and t_e is not None):
                continue  # ours changed it: ours stands, unless theirs resolved it
            edits[f"{PROPOSALS}/{pid}"] = t_e
            episode.proposals[pid] = None if t_e is None else t_e[1]
            result.proposals.append(pid)
        merged_notes = merge_notes(
            branch_notes(b), branch_notes(view), branch_notes(t), episode.time
        )
        noted = note_edits(repo, writer, episode, merged_notes.written, merged_notes.removed)
        edits.update(noted.changes)
        episode.notes.update(noted.records)
        result.notes[:] = sorted(noted.records)
        parts = [f"merged ledger {theirs[:12]} ({result.episodes} episode(s))"]
        if result.taken:
            parts.append(f"took {len(result.taken)} file(s)")
        if result.resolved:
            parts.append(f"{len(result.resolved)} from the work tree")
        episode.summary = "; ".join(parts)
        episode.details = {
            "theirs": theirs,
            "base": base,
            "taken": result.taken,
            "resolved": result.resolved,
            "kept": result.kept,
            "proposals": result.proposals,
            "notes": result.notes,
            "episodes": brought,
        }
        return Draft(episode=episode, changes=edits)

    committed = commit_episode(repo, operation, merged=theirs)
    assert committed is not None
    result.outcome, result.commit = "merged", committed.commit
    first = repo.git[committed.commit]
    assert isinstance(first, pygit2.Commit)
    # Back to the first parent if the proof fails: another tm may have recorded an episode
    # after `ours` that the merge was redone on.
    result.proved = _prove(repo, ref, committed.commit, str(first.parent_ids[0]))
    return result


def _displaced(
    repo: Repo,
    view: StateView,
    updates: dict[str, FileUpdate],
    result: LedgerMerge,
    episode: Episode,
    reason: str,
) -> list[str]:
    """A file the merge makes live where ours holds live records of the other kind (theirs
    turned `lib/` into a file `lib`, or the reverse): those records can stay only if the file
    does not come. Ours changed them (or the merge took them), so the work tree decides, as
    for a file both changed: a regular file at the path taken means the others are gone
    (recorded deleted, then they leave the State Map); one of the others as a regular file on
    disk keeps ours, and the path taken is not; anything else is a conflict (returned)."""
    conflicts: list[str] = []
    for path in [p for p, u in updates.items() if not u.meta.deleted]:
        for other in live_displaced(view, path):
            planned = updates.get(other)
            if planned is not None and planned.meta.deleted:
                continue  # recorded deleted by this merge: it leaves
            if planned is None and regular_file(repo.abspath(path)):
                old = view.meta(other)
                assert old is not None
                updates[other] = record_deletion(old, episode=episode, reason=reason)
                result.taken.append(other)
            elif planned is None and regular_file(repo.abspath(other)):
                del updates[path]  # the work tree holds ours: ours stands
                for names in (result.taken, result.resolved):
                    if path in names:
                        names.remove(path)
                result.kept.append(path)
                break
            else:
                conflicts.append(path)
                break
    return conflicts


def _resolve(
    repo: Repo,
    path: str,
    ours: FileMeta | None,
    theirs: FileMeta,
    writer: ObjectWriter,
    episode: Episode,
) -> str | FileUpdate | None:
    """Both ledgers changed `path`: "ours", "theirs", the work tree's committed merge as an
    update, or None (a conflict the user must settle in the code first)."""
    try:
        wf = read_file(repo, path)
        disk: str | None = wf.oid
    except FileNotFoundError:
        wf, disk = None, None
    except OSError:
        return None
    ours_text = None if ours is None or ours.deleted else ours.snapshot
    theirs_text = None if theirs.deleted else theirs.snapshot
    if disk == ours_text:
        return "ours"
    if disk == theirs_text:
        return "theirs"
    if wf is None:
        return None
    try:
        head = repo.git.revparse_single(f"HEAD:{path}")
    except (KeyError, ValueError, pygit2.GitError):
        return None
    if str(head.id) != wf.oid:
        return None  # a merge in progress, or an edit: the user settles it first
    cache = SymbolCache(repo.cache_dir)
    try:
        ex = extraction_for(cache, wf.path, wf.oid, wf.data, wf.kind)
    finally:
        cache.close()
    return record_file(
        writer,
        ours,
        wf,
        ex,
        source=Source.USER,
        episode=episode,
        reason="merged ledgers: both changed it; the work tree holds HEAD's merge of them",
    )


def _move(repo: Repo, ref: str, old: str, new: str) -> None:
    with updating(repo):
        done = swap_ref(repo, ref, new, old, "merge-ledger")
    if not done:
        raise UsageError(f"{ref} moved while merging (another tm process?); run it again")


def _prove(repo: Repo, ref: str, tip: str, previous: str) -> int:
    from tinymem.rebuild import rebuild

    report = rebuild(repo, tip)
    if report.ok:
        return report.episodes
    _move(repo, ref, tip, previous)
    raise CorruptStateError(
        f"the merged ledger does not replay to its State Map ({report.differences[0]});"
        f" {ref} was put back at {previous[:12]}"
    )
