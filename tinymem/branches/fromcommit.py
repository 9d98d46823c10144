"""Taking into the State Map what a git commit says a file is, when the work tree agrees.

Used when a branch gets its first State Map (the files where the branch's commit differs from
the State Map it starts from) and by `tm adopt --merged` (the files a merge or rebase changed).
The commit is the evidence, the work tree the check: a file is taken only when its bytes on
disk are the commit's, so an edit made since stays STALE (the user's to adopt), and a file is
recorded deleted only when the commit lacks it and the work tree too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pygit2

from tinymem.gitobjects import MODE_BLOB, MODE_EXEC, ObjectWriter, diff_blobs, walk_blobs
from tinymem.ledger import Draft, Episode, Operation
from tinymem.records import Source
from tinymem.repository import Repo
from tinymem.scan import scan
from tinymem.statemap import FILES, StateView
from tinymem.transitions import TreeEdits, apply_update, record_deletion, record_file

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
            shown = ", ".join(self.taken[:3])
            more = f" and {len(self.taken) - 3} more" if len(self.taken) > 3 else ""
            parts.append(f"took {shown}{more}")
        if self.deleted:
            parts.append(f"recorded {len(self.deleted)} deleted")
        return "; ".join(parts) or "nothing to take"


def _commit_tree(repo: Repo, commit: str) -> pygit2.Tree:
    obj = repo.git[commit]
    assert isinstance(obj, pygit2.Commit)
    return obj.tree


def _candidates(
    repo: Repo, view: StateView, commit: str, before: str | None
) -> list[tuple[str, str | None]]:
    """(path, blob in the commit or None) of the files the State Map may need to take."""
    tree = str(_commit_tree(repo, commit).id)
    if before is not None:
        # What the merge or rebase changed, and only that.
        old = str(_commit_tree(repo, before).id)
        return list(diff_blobs(repo.git, old, tree))
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
) -> Operation:
    """The ledger operation that takes the files of `commit` (those `before` it changed, or
    all that differ from the State Map when `before` is None)."""
    tree = _commit_tree(repo, commit)

    def operation(view: StateView, writer: ObjectWriter) -> Draft | None:
        result.clear()
        episode = Episode(kind=kind, summary="")
        edits: TreeEdits = {}
        wanted: dict[str, str] = {}
        gone: list[str] = []
        for path, blob in _candidates(repo, view, commit, before):
            if blob is None:
                meta = view.meta(path)
                if meta is not None and not meta.deleted:
                    if os.path.lexists(repo.abspath(path)):
                        result.left.append(path)  # an untracked file the commit never had
                    else:
                        gone.append(path)
                continue
            if tree[path].filemode not in (MODE_BLOB, MODE_EXEC):
                continue  # symlinks and submodules: tm records regular files only
            if view.snapshot(path) != blob:
                wanted[path] = blob
        for item in scan(repo, sorted(wanted)):
            if item.file is None:
                if not isinstance(item.error, FileNotFoundError):
                    continue  # what `tm init` skips too (a name that is not UTF-8, ...)
                result.left.append(item.path)  # deleted since: STALE, the user's to adopt
                continue
            if item.file.oid != wanted[item.path]:
                result.left.append(item.path)
                continue
            update = record_file(
                writer,
                view.meta(item.path),
                item.file,
                item.extraction,
                source=source,
                episode=episode,
                reason=reason,
            )
            apply_update(writer, update, episode, edits)
            result.taken.append(item.path)
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
