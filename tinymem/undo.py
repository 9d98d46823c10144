"""`tm undo [EPISODE]`: every file an accept, adopt or undo episode changed gets back the text
that was authoritative before it, written as an accept writes (intent record, ETV check right
before each rename, rollback or recovery after a crash) and recorded as an `undo` episode that
names the episode undone (`details.undid`). Undoing an undo redoes.

The unit is the file: the State Map snapshot of each file before the episode is written back
whole. A file changed since the episode (a later episode recorded other text for it, or the
work tree holds a hand edit) is refused, its entities named, unless `force`: then its current
text is kept in the vault first (an attachment of the undo episode, named in its record).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from tinymem.accept import file_changes
from tinymem.acceptplan import FilePlan
from tinymem.branches.refs import branch_of_ref, ledger_refs
from tinymem.errors import HeadMovedError, StaleError, UsageError
from tinymem.gitobjects import ObjectWriter, blob_id, read_blob
from tinymem.ledger import (
    Committed,
    Draft,
    Episode,
    commit_episode,
    current,
    history,
    new_episode_id,
)
from tinymem.records import Source, State, entity_key
from tinymem.repository import Repo
from tinymem.statemap import FileMeta, StateView
from tinymem.symbols import extract
from tinymem.symcache import SymbolCache, extraction_for
from tinymem.transitions import TreeEdits, apply_update, record_deletion, record_file
from tinymem.undohistory import UNDOABLE, with_undone
from tinymem.writing.ondisk import as_written, disk_text
from tinymem.writing.transaction import write_all

__all__ = ["UndoPlan", "UndoResult", "plan_undo", "undo"]


@dataclass
class UndoPlan:
    target: Episode
    target_commit: str
    ref: str  # the ledger it was planned on
    files: list[FilePlan]  # before: the work-tree text now; after: the text written back
    # path -> the State Map snapshot it has now (checked again when the undo is recorded)
    expected: dict[str, str | None] = field(default_factory=dict)
    # What changed since the episode, per file: "path::Symbol (episode X)", "path (by hand)"
    changed: dict[str, list[str]] = field(default_factory=dict)
    kept: dict[str, bytes] = field(default_factory=dict)  # --force: path -> text kept


@dataclass
class UndoResult:
    plan: UndoPlan
    committed: Committed | None  # None: a dry run


def _snapshot(meta: FileMeta | None) -> str | None:
    return None if meta is None or meta.deleted else meta.snapshot


def _live(meta: FileMeta | None) -> dict[str, str]:
    if meta is None or meta.deleted:
        return {}
    return {r.symbol: r.artifact for r in meta.live_entities() if r.state is State.AUTHORITATIVE}


def _find(repo: Repo, wanted: str | None) -> tuple[str, Episode]:
    """The episode to undo on the current branch's ledger: `wanted` (an episode id or ledger
    commit prefix), or the latest accept not undone. Refused when it is undone already."""
    needle = None if wanted is None else wanted.strip().lower()
    if needle == "":
        raise UsageError("an empty episode id was given")
    hits: list[tuple[str, Episode, str | None]] = []
    for cid, ep, by in with_undone(history(repo)):
        if needle is None:
            if ep.kind == "accept" and by is None:
                return cid, ep
            continue
        if ep.id.startswith(needle) or cid.startswith(needle):
            hits.append((cid, ep, by))
    branch = branch_of_ref(repo.state_ref) or repo.state_ref
    if needle is None:
        raise UsageError(f"branch {branch} has no accept to undo; `tm log` lists its episodes")
    if not hits:
        raise UsageError(_not_here(repo, needle, branch))
    if len(hits) > 1:
        raise UsageError(f"{needle!r} is ambiguous: it matches {len(hits)} episodes")
    cid, ep, by = hits[0]
    if ep.kind not in UNDOABLE:
        raise UsageError(
            f"episode {ep.id} is a {ep.kind}, which wrote no file; tm undoes accept, adopt and"
            " undo episodes"
        )
    if by is not None:
        raise UsageError(f"episode {ep.id} was undone already by {by}; `tm undo {by}` redoes it")
    return cid, ep


def _not_here(repo: Repo, needle: str, branch: str) -> str:
    for other, tip in ledger_refs(repo.git).items():
        if other == branch:
            continue
        for cid, ep in history(repo, tips=[tip]):
            if ep.id.startswith(needle) or cid.startswith(needle):
                return (
                    f"episode {ep.id} is on branch {other}'s ledger, not on {branch}'s;"
                    f" `git switch {other}` to undo it there"
                )
    return f"no episode of branch {branch} matches {needle!r}; `tm log` lists them"


def _later(path: str, then: FileMeta | None, now: FileMeta | None) -> list[str]:
    """The entities a later episode changed, each with that episode."""
    a, b = _live(then), _live(now)
    names = sorted(n for n in a.keys() | b.keys() if a.get(n) != b.get(n))
    out = []
    for n in names:
        rec = None if now is None else now.entities.get(n)
        by = f" (episode {rec.episode})" if rec is not None and rec.episode else ""
        out.append(entity_key(path, n) + by)
    return out or [f"{path} (a later episode)"]


def _by_hand(path: str, now: FileMeta | None, disk: bytes | None) -> list[str]:
    """The entities whose work-tree text differs from the State Map's."""
    if disk is None:
        return [f"{path} (deleted by hand)"]
    if now is None or now.deleted:
        return [f"{path} (exists on disk)"]
    on_disk = {s.name: blob_id(disk[s.start : s.end]) for s in extract(path, disk).symbols}
    known = _live(now)
    names = sorted(n for n in known if n in on_disk and on_disk[n] != known[n])
    names += sorted(n for n in on_disk if n not in known)
    return [entity_key(path, n) + " (edited by hand)" for n in names] or [
        f"{path} (edited by hand)"
    ]


def _mode_back(
    kind: str, was: FileMeta | None, then: FileMeta | None, disk: bytes | None
) -> bool | None:
    """The executable bit undo gives a file back (None: the file keeps the one it has). A
    file re-created gets the mode it had. An adopt (or undo) records the mode the user chose,
    so one it changed goes back; an accept writes no mode, so a different one it recorded is
    a chmod by hand taken in with its text, and stays."""
    if was is None or was.deleted:
        return None
    if disk is None:
        return was.executable
    if kind == "accept" or then is None or then.deleted:
        return None
    return was.executable if then.executable != was.executable else None


def plan_undo(repo: Repo, wanted: str | None = None, *, force: bool = False) -> UndoPlan:
    """What undoing would write; refuses (StaleError) what changed since, unless `force`."""
    ref = repo.state_ref
    view = current(repo)
    commit, target = _find(repo, wanted)
    ledger_commit = repo.git[commit]
    assert isinstance(ledger_commit, pygit2.Commit)
    parents = ledger_commit.parent_ids
    before = StateView(repo.git, str(parents[0]) if parents else None)
    after = StateView(repo.git, commit)
    result = UndoPlan(target, commit, ref, [])
    for path in sorted(target.files):
        was, then, now = before.meta(path), after.meta(path), view.meta(path)
        if _snapshot(was) == _snapshot(then):
            continue  # recorded, not written (already applied): nothing to take back
        data, oid = disk_text(repo, path)
        changed = [] if _snapshot(now) == _snapshot(then) else _later(path, then, now)
        if oid != _snapshot(now):
            changed += _by_hand(path, now, data)
        restored = _snapshot(was)
        text = None if restored is None else read_blob(repo.git, restored)
        mode = _mode_back(target.kind, was, then, data)
        result.files.append(FilePlan(path, data, oid, text, executable=mode))
        result.expected[path] = _snapshot(now)
        if changed:
            result.changed[path] = changed
            if data is not None and data != text:
                result.kept[path] = data
    if result.changed and not force:
        named = "; ".join(x for xs in result.changed.values() for x in xs)
        raise StaleError(
            f"episode {target.id} cannot be undone, changed since: {named}; `tm undo"
            f" {target.id} --force` undoes it all the same, keeping the current text in the vault"
        )
    if not force:
        result.kept.clear()
    return result


def undo(
    repo: Repo, wanted: str | None = None, *, force: bool = False, dry_run: bool = False
) -> UndoResult:
    p = plan_undo(repo, wanted, force=force)
    if dry_run:
        return UndoResult(p, None)
    return UndoResult(p, _apply(repo, p))


def _apply(repo: Repo, p: UndoPlan) -> Committed:
    target = p.target
    episode_id = new_episode_id()
    reason = f"undo of {target.kind} episode {target.id}"

    def operation(view: StateView, writer: ObjectWriter) -> Draft:
        episode = Episode(kind="undo", summary=f"undid {target.kind} {target.id}", id=episode_id)
        edits: TreeEdits = {}
        cache = SymbolCache(repo.cache_dir)
        try:
            for fp in p.files:
                old = view.meta(fp.path)
                if _snapshot(old) != p.expected[fp.path]:
                    raise StaleError(
                        f"{fp.path} was recorded by another tm command while undoing; nothing"
                        " was written"
                    )
                if fp.after is None:
                    if old is not None and not old.deleted:
                        update = record_deletion(old, episode=episode, reason=reason)
                        apply_update(writer, update, episode, edits)
                    continue
                wf = as_written(repo, fp.path, fp.after)
                ex = extraction_for(cache, wf.path, wf.oid, wf.data, wf.kind)
                update = record_file(
                    writer, old, wf, ex, source=Source.USER, episode=episode, reason=reason
                )
                apply_update(writer, update, episode, edits)
        finally:
            cache.close()
        kept = sorted(p.kept.items())
        episode.details = {
            "undid": target.id,
            "undid_kind": target.kind,
            "undid_commit": p.target_commit,
            "files": {
                fp.path: {
                    "from": p.expected[fp.path],
                    "to": None if fp.after is None else blob_id(fp.after),
                }
                for fp in p.files
            },
            "changed_since": p.changed,
            "kept": {path: blob_id(text) for path, text in kept},
        }
        attachments = {f"kept-{i}": text for i, (_path, text) in enumerate(kept)}
        return Draft(episode=episode, changes=edits, attachments=attachments)

    def record() -> Committed:
        committed = commit_episode(repo, operation, ref=p.ref)
        assert committed is not None
        return committed

    changes = file_changes(repo, [fp for fp in p.files if fp.after != fp.before], doing="undoing")
    try:
        return write_all(
            repo,
            changes,
            episode=episode_id,
            tip=repo.state_tip(p.ref),
            record=record,
            kind="undo",
            ref=p.ref,
        )
    except HeadMovedError as exc:
        raise StaleError(
            f"HEAD moved from branch {exc.started} to {exc.now_named} while tm undo was"
            " writing (a `git switch`?): the undo was rolled back, the files it wrote have"
            " their text back"
        ) from None
