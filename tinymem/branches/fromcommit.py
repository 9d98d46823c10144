"""Taking into the State Map what a git commit says a file is, when the work tree agrees.

Used when a branch gets its first State Map (the files where the branch's commit differs from
the State Map it starts from), when HEAD moved (`sync.headmove`: the files git changed since
the commit the ledger last saw) and by `tm adopt --merged` (the files a merge or rebase
changed). The commit is the evidence, the work tree the check, entity by entity: a file whose
bytes on disk are the commit's is taken whole; in a file edited since, each entity whose text
on disk is the commit's is taken and every other keeps the State Map's text (so a hand edit
stays STALE, and one new line never keeps the rest of the file on an older version); a file is
recorded deleted only when the commit lacks it and the work tree too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pygit2

from tinymem.displacing import live_displaced, regular_file
from tinymem.gitobjects import (
    MODE_BLOB,
    MODE_EXEC,
    ObjectWriter,
    blob_id,
    diff_blobs,
    read_blob,
    walk_blobs,
)
from tinymem.gitsuspects import skip_worktree
from tinymem.ledger import Draft, Episode, Operation
from tinymem.paths import is_utf8
from tinymem.records import Source
from tinymem.repository import Repo
from tinymem.scan import scan
from tinymem.statemap import FILES, FileMeta, StateView
from tinymem.symbols import extract
from tinymem.symbols.model import Extraction, Symbol
from tinymem.textlist import shortened
from tinymem.transitions import TreeEdits, apply_update, record_deletion, record_file
from tinymem.worktree import WorktreeFile

__all__ = ["Taken", "taking"]


@dataclass
class Taken:
    taken: list[str] = field(default_factory=list)  # recorded as the commit has them
    deleted: list[str] = field(default_factory=list)  # gone from the commit and the work tree
    left: list[str] = field(default_factory=list)  # differ from the commit on disk: untouched

    def clear(self) -> None:
        self.taken.clear()
        self.deleted.clear()
        self.left.clear()

    def describe(self) -> str:
        parts = []
        if self.taken:
            parts.append(f"took {shortened(self.taken)}")
        if self.deleted:
            parts.append(f"recorded {len(self.deleted)} deleted")
        return "; ".join(parts) or "nothing to take"


def _commit_tree(repo: Repo, commit: str) -> pygit2.Tree:
    obj = repo.git[commit]
    assert isinstance(obj, pygit2.Commit)
    return obj.tree


def _candidates(
    repo: Repo, view: StateView, commit: str, before: str | None, also: str | None
) -> list[tuple[str, str | None]]:
    """(path, blob in the commit or None) of the files the State Map may need to take."""
    tree = str(_commit_tree(repo, commit).id)
    if before is not None:
        # What the merge or rebase changed, and only that.
        old = str(_commit_tree(repo, before).id)
        found = dict(diff_blobs(repo.git, old, tree))
        if also is not None and also != before:
            found.update(diff_blobs(repo.git, str(_commit_tree(repo, also).id), tree))
        return sorted(found.items())
    files = view.subtree(FILES)
    if files is None:
        return list(walk_blobs(repo.git, tree))
    return list(diff_blobs(repo.git, files, tree))


def taking(
    repo: Repo,
    commit: str,
    result: Taken,
    *,
    before: str | None,
    kind: str,
    reason: str,
    source: Source,
    details: dict[str, object],
    also: str | None = None,
) -> Operation:
    """The ledger operation that takes the files of `commit` (those `before` it changed, and
    those `also` changed, or all that differ from the State Map when `before` is None)."""
    tree = _commit_tree(repo, commit)

    def operation(view: StateView, writer: ObjectWriter) -> Draft | None:
        result.clear()
        episode = Episode(kind=kind, summary="")
        edits: TreeEdits = {}
        wanted: dict[str, str] = {}
        gone: list[str] = []
        for path, blob in _candidates(repo, view, commit, before, also):
            if not is_utf8(path):
                continue  # what `tm init` skips: a name the State Map cannot hold
            if blob is None:
                meta = view.meta(path)
                if meta is not None and not meta.deleted:
                    if regular_file(repo.abspath(path)):
                        result.left.append(path)  # an untracked file the commit never had
                    else:
                        gone.append(path)
                continue
            if tree[path].filemode not in (MODE_BLOB, MODE_EXEC):
                # Symlinks and submodules: tm records regular files only. One committed in
                # place of a file the State Map has ends that file's record, once the work
                # tree agrees (else it stayed STALE for good, nothing could adopt it).
                meta = view.meta(path)
                if meta is not None and not meta.deleted and not regular_file(repo.abspath(path)):
                    gone.append(path)
                continue
            if view.snapshot(path) != blob or _mode_moved(view, path, tree[path].filemode):
                wanted[path] = blob

        looked: set[str] = set()  # directories with no record of a file of their name

        def take(wf: WorktreeFile, ex: Extraction | None) -> None:
            # Records of the other kind (files below a directory that is a file now, or
            # the file a directory took the place of) end with it, once the work tree has
            # no regular file there; their records leave the State Map (`displacing`).
            displaced = live_displaced(view, wf.path, looked, gone)
            if any(regular_file(repo.abspath(p)) for p in displaced):
                result.left.append(wf.path)
                return
            gone.extend(displaced)
            update = record_file(
                writer,
                view.meta(wf.path),
                wf,
                ex,
                source=source,
                episode=episode,
                reason=reason,
            )
            apply_update(writer, update, episode, edits)
            result.taken.append(wf.path)

        absent: list[str] = []
        for item in scan(repo, sorted(wanted)):
            wf, ex = item.file, item.extraction
            if wf is None:
                if isinstance(item.error, FileNotFoundError):
                    absent.append(item.path)
                continue  # else what `tm init` skips too (a name that is not UTF-8, ...)
            # The commit's executable bit, as its text: the commit is the truth.
            wf = replace(wf, executable=tree[item.path].filemode == MODE_EXEC)
            if wf.oid != wanted[item.path]:
                result.left.append(item.path)
                old = view.meta(item.path)
                if old is None or old.deleted:
                    # New to the State Map and edited since the commit: the commit's text is
                    # taken, and the edit is STALE against it, as for a file it had. Left
                    # out, the file was in no State Map and no command showed it.
                    wf = _committed(repo, tree, item.path)
                    ex = _extraction(wf)
                elif ex is None:
                    continue
                else:
                    # Edited since the commit: the entities that are still the commit's text.
                    mixed = _entitywise(repo, old, wf, ex.symbols, wanted[item.path])
                    if mixed is None or mixed.oid == old.snapshot:
                        continue
                    wf = mixed
                    ex = _extraction(wf)
            take(wf, ex)
        # A sparse checkout leaves files out of the work tree on purpose: for those the
        # commit's text is taken, as git takes it. Any other is deleted since: STALE, the
        # user's to adopt.
        sparse = skip_worktree(repo.git.path, repo.workdir, absent)
        for path in absent:
            if path in sparse:
                wf = _committed(repo, tree, path)
                take(wf, _extraction(wf))
            else:
                result.left.append(path)
        for path in gone:
            old = view.meta(path)
            assert old is not None
            apply_update(
                writer, record_deletion(old, episode=episode, reason=reason), episode, edits
            )
            result.deleted.append(path)
        result.left.sort()
        if not result.taken and not result.deleted:
            return None
        episode.summary = result.describe()
        episode.details = {**details, "commit": commit, "left": result.left}
        if before is not None:
            episode.details["before"] = before
        return Draft(episode=episode, changes=edits)

    return operation


def _committed(repo: Repo, tree: pygit2.Tree, path: str) -> WorktreeFile:
    """The file as the commit has it."""
    entry = tree[path]
    return WorktreeFile(
        path, str(entry.id), read_blob(repo.git, str(entry.id)), entry.filemode == MODE_EXEC
    )


def _extraction(wf: WorktreeFile) -> Extraction | None:
    return extract(wf.path, wf.data) if wf.kind == "text" else None


def _mode_moved(view: StateView, path: str, mode: int) -> bool:
    """Whether the commit changed only the file's executable bit from what the State Map
    records (git diffs modes too)."""
    meta = view.meta(path)
    return meta is not None and not meta.deleted and meta.executable != (mode == MODE_EXEC)


def _entitywise(
    repo: Repo, old: FileMeta, disk: WorktreeFile, on_disk: tuple[Symbol, ...], blob: str
) -> WorktreeFile | None:
    """The commit's text of a file whose work-tree text is not the commit's, with every entity
    whose text on disk differs from the commit's put back to the State Map's: what the commit
    brought and the user kept is taken, a hand edit stays STALE against the State Map's text.
    None when the commit's text has no entities to decide by."""
    data = read_blob(repo.git, blob)
    ex = extract(disk.path, data)
    if not ex.symbols:
        return None
    disk_text = {s.name: disk.data[s.start : s.end] for s in on_disk}
    live = {r.symbol: r.artifact for r in old.live_entities()}
    children = _contained(ex.symbols)

    def text_of(sym: Symbol) -> bytes:
        mine = data[sym.start : sym.end]
        if disk_text.get(sym.name) == mine:
            return mine  # the commit's text, kept on disk: taken
        inner = children.get(sym.name, [])
        if inner:
            return _spliced(data, sym.start, sym.end, inner, text_of)
        known = live.get(sym.name)
        if known is not None and known != blob_id(mine):
            return read_blob(repo.git, known)  # edited on disk: the State Map's stays
        return mine

    out = _spliced(data, 0, len(data), children.get(None, []), text_of)
    return WorktreeFile(disk.path, blob_id(out), out, disk.executable)


def _contained(symbols: tuple[Symbol, ...]) -> dict[str | None, list[Symbol]]:
    """Each symbol's directly nested symbols by span (None: the top level); `symbols` are
    sorted by start, outer first. By span, not by `parent`: a Go or Rust method names a type
    it is not inside."""
    out: dict[str | None, list[Symbol]] = {}
    stack: list[Symbol] = []
    for sym in symbols:
        while stack and not (stack[-1].start <= sym.start and sym.end <= stack[-1].end):
            stack.pop()
        out.setdefault(stack[-1].name if stack else None, []).append(sym)
        stack.append(sym)
    return out


def _spliced(
    data: bytes, start: int, end: int, parts: list[Symbol], text_of: Callable[[Symbol], bytes]
) -> bytes:
    """data[start:end] with each of `parts` (sorted, not overlapping) replaced by its text."""
    out = bytearray()
    pos = start
    for sym in parts:
        if sym.start < pos:
            continue
        out += data[pos : sym.start]
        out += text_of(sym)
        pos = sym.end
    out += data[pos:end]
    return bytes(out)
