"""Which ledger ref belongs to the current worktree: `refs/tinymem/heads/<branch>`.

The branch is the one HEAD names in this worktree (a linked worktree has its own HEAD), or,
while a rebase is stopped, the branch being rebased (git detaches HEAD then, but the commits
belong to that branch). A detached HEAD has no State Map: tm refuses to use one rather than
guess. Everything here reads refs only; nothing is written.
"""

from __future__ import annotations

import os

import pygit2

from tinymem.branches.names import HEADS_PREFIX, LEGACY_REF, branch_of_ref, state_ref
from tinymem.errors import NoBranchError
from tinymem.paths import is_utf8, printable

__all__ = [
    "HEADS_PREFIX",
    "LEGACY_REF",
    "branch_of_ref",
    "current_branch",
    "head_commit",
    "ledger_refs",
    "may_have_merged",
    "reflog",
    "require_branch",
    "resolve_commit",
    "state_ref",
]

_BRANCH_PREFIX = "refs/heads/"
# Where git keeps the name of the branch a stopped rebase is rewriting (per worktree).
_REBASE_HEAD_NAMES = (("rebase-merge", "head-name"), ("rebase-apply", "head-name"))


def current_branch(git: pygit2.Repository) -> str | None:
    """The branch this worktree is on (an unborn one too), or None when HEAD is detached and
    no rebase is under way, or names a branch tm cannot keep a ledger for (a name that is
    not UTF-8: its ledger ref could not be written)."""
    name = _head_branch(git)
    return name if name is not None and is_utf8(name) else None


def _head_branch(git: pygit2.Repository) -> str | None:
    head = git.references.get("HEAD")
    if head is not None and head.type == pygit2.enums.ReferenceType.SYMBOLIC:
        target = str(head.target)
        if target.startswith(_BRANCH_PREFIX):
            return target[len(_BRANCH_PREFIX) :]
    for directory, name in _REBASE_HEAD_NAMES:
        try:
            with open(
                os.path.join(git.path, directory, name), encoding="utf-8", errors="surrogateescape"
            ) as f:
                target = f.read().strip()
        except OSError:
            continue
        if target.startswith(_BRANCH_PREFIX):
            return target[len(_BRANCH_PREFIX) :]
    return None


def require_branch(git: pygit2.Repository) -> str:
    branch = _head_branch(git)
    if branch is not None and not is_utf8(branch):
        raise NoBranchError(
            f"the branch {printable(branch)} has a name that is not UTF-8, and tm keeps"
            " State Maps for UTF-8 branch names only; rename it (`git branch -m NEW`)"
            " and run tm there"
        )
    if branch is None:
        at = head_commit(git)
        where = f" at {at[:12]}" if at else ""
        raise NoBranchError(
            f"HEAD is detached{where}: tm keeps one State Map per branch; switch to a branch"
            " (`git switch NAME`, or `git switch -c NAME` to start one here) and run tm there"
        )
    return branch


def head_commit(git: pygit2.Repository) -> str | None:
    """The commit HEAD points at; None on an unborn branch."""
    try:
        return None if git.head_is_unborn else str(git.head.target)
    except pygit2.GitError:
        return None


def ledger_refs(git: pygit2.Repository) -> dict[str, str]:
    """Every branch's ledger: branch name -> tip commit id."""
    out: dict[str, str] = {}
    for ref in git.references.iterator():
        branch = branch_of_ref(ref.name)
        if branch is not None and ref.type == pygit2.enums.ReferenceType.DIRECT:
            out[branch] = str(ref.target)
    return dict(sorted(out.items()))


def resolve_commit(git: pygit2.Repository, rev: str) -> pygit2.Commit | None:
    """The commit a revision names (a ref, FETCH_HEAD, an id prefix, `HEAD~2`); None when
    it names nothing, or nothing that peels to a commit."""
    try:
        peeled = git.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return peeled if isinstance(peeled, pygit2.Commit) else None


def reflog(git: pygit2.Repository, name: str) -> list[tuple[str, str, str]]:
    """(message, old id, new id) of each entry of `name`'s reflog, newest first; empty when
    the ref or its reflog is missing."""
    ref = git.references.get(name)
    if ref is None:
        return []
    try:
        return [(e.message or "", str(e.oid_old), str(e.oid_new)) for e in ref.log()]
    except (pygit2.GitError, KeyError):
        return []


def may_have_merged(git: pygit2.Repository) -> bool:
    """Whether git could name a merge or rebase HEAD came from (a merge commit at HEAD, or an
    ORIG_HEAD): the cheap test before `branches.merged` is asked which files it changed."""
    head = head_commit(git)
    if head is None:
        return False
    commit = git[head]
    parents = len(commit.parent_ids) if isinstance(commit, pygit2.Commit) else 0
    return parents > 1 or os.path.exists(os.path.join(git.path, "ORIG_HEAD"))
