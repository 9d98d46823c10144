"""Whether an older version of an entity is in the index because the branch moved back.

The hook refuses a staged entity that equals a version an episode superseded: the stale
editor buffer saved over an accepted change. After `git reset --hard HEAD~1`, or while a
`git rebase -i` stops at an older commit to amend it, the older version is there because
the user took the branch back past the commit that held the newer one, not because of a
buffer. What tells them apart: HEAD itself holds the staged version, and a commit the branch
pointed at before (its ref during a rebase, its reflog, ORIG_HEAD) held a newer version the
State Map knows, yet is no longer in HEAD's history.
"""

from __future__ import annotations

import os

import pygit2

from tinymem.branches.refs import head_commit, reflog, resolve_commit
from tinymem.gitobjects import blob_id
from tinymem.symbols import extract

__all__ = ["moved_back_from"]

_REFLOG_DEPTH = 50  # a reset or rebase worth telling apart is among the branch's last moves
_REBASE_TIPS = (("rebase-merge", "orig-head"), ("rebase-apply", "orig-head"))


def _entity(git: pygit2.Repository, commit: str, path: str, name: str) -> str | None:
    """The artifact id of entity `name` of `path` in `commit`, or None."""
    try:
        obj = git[commit]
        tree = obj.peel(pygit2.Tree)
        blob = git[tree[path].id]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    if not isinstance(blob, pygit2.Blob):
        return None
    data = blob.data
    for s in extract(path, data).symbols:
        if s.name == name:
            return blob_id(data[s.start : s.end])
    return None


def _left_behind(git: pygit2.Repository, branch: str, head: str) -> list[str]:
    """Commits the branch was at before, newest first, that HEAD's history does not hold."""
    name = f"refs/heads/{branch}"
    tip = resolve_commit(git, name)  # during a rebase: the tip being rebased
    seen = [str(tip.id)] if tip is not None else []
    for _message, old, new in reflog(git, name)[:_REFLOG_DEPTH]:
        seen += [new, old]
    orig = resolve_commit(git, "ORIG_HEAD")
    if orig is not None:
        seen.append(str(orig.id))
    for directory, file in _REBASE_TIPS:
        try:
            with open(os.path.join(git.path, directory, file), encoding="utf-8") as f:
                seen.append(f.read().strip())
        except OSError:
            continue
    out: list[str] = []
    for oid in dict.fromkeys(seen):
        if oid == head or set(oid) == {"0"}:
            continue
        try:
            if git.descendant_of(head, oid):
                continue
        except (ValueError, pygit2.GitError):
            continue
        out.append(oid)
    return out


def moved_back_from(
    git: pygit2.Repository, branch: str, path: str, name: str, staged: str, newer: set[str]
) -> str | None:
    """The commit the branch moved back from, which held a version of entity `name` in
    `newer` while HEAD holds the `staged` one; None when the older version is not explained
    by such a move."""
    at = head_commit(git)
    if at is None or _entity(git, at, path, name) != staged:
        return None
    for oid in _left_behind(git, branch, at):
        version = _entity(git, oid, path, name)
        if version is not None and version != staged and version in newer:
            return oid
    return None
