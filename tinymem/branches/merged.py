"""`tm adopt --merged`: the files a merge, pull or rebase changed become the truth, with the
commit that brought them as the evidence.

Without it those files would be the user's "hand edits" forever: git wrote them, not tm. The
change is read from git, never guessed: a merge commit against its first parent, else a
rebase or fast-forward against `ORIG_HEAD` (where HEAD was before), else the commit the user
names with `--since`. Only files whose bytes on disk are still the commit's are taken; one
edited since stays STALE and is named.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pygit2

from tinymem.branches.refs import current_branch, head_commit, reflog, resolve_commit
from tinymem.errors import UsageError
from tinymem.gitobjects import diff_blobs
from tinymem.ledger import Committed, commit_episode, current
from tinymem.records import Source
from tinymem.repository import Repo

if TYPE_CHECKING:
    from tinymem.branches.fromcommit import Taken

__all__ = ["Evidence", "MergedResult", "adopt_merged", "evidence", "merged_paths"]


@dataclass(frozen=True)
class Evidence:
    after: str  # HEAD: what the merge left
    before: str  # what the branch was before it
    what: str  # "merge commit", "ORIG_HEAD", "--since"


@dataclass
class MergedResult:
    evidence: Evidence
    committed: Committed | None
    taken: Taken

    def to_json(self) -> dict[str, Any]:
        """`tm adopt --merged --json`."""
        c, found = self.committed, self.evidence
        return {
            "episode": c.episode.id if c else None,
            "commit": c.commit if c else None,
            "merged": found.after,
            "before": found.before,
            "evidence": found.what,
            "adopted": self.taken.taken,
            "deleted": self.taken.deleted,
            "left_stale": self.taken.left,
        }


def evidence(repo: Repo, since: str | None = None) -> Evidence | None:
    """What HEAD's last merge or rebase changed, as two commits; None when git does not say
    (no merge at HEAD, no ORIG_HEAD) and `since` is not given."""
    git = repo.git
    head = head_commit(git)
    if head is None:
        return None
    if since is not None:
        found = resolve_commit(git, since)
        if found is None:
            raise UsageError(f"--since {since}: no such commit")
        return Evidence(head, str(found.id), "--since")
    commit = git[head]
    assert isinstance(commit, pygit2.Commit)
    if len(commit.parent_ids) > 1:
        return Evidence(head, str(commit.parent_ids[0]), "merge commit")
    if os.path.exists(os.path.join(git.path, "ORIG_HEAD")):
        orig = resolve_commit(git, "ORIG_HEAD")
        if orig is not None and str(orig.id) != head and _moved_from(git, str(orig.id), head):
            return Evidence(head, str(orig.id), "ORIG_HEAD")
    return None


def _moved_from(git: pygit2.Repository, orig: str, head: str) -> bool:
    """Whether the current branch's last move was from `orig` to `head`: ORIG_HEAD belongs to
    the worktree, not the branch (a rebase of another branch leaves it behind)."""
    branch = current_branch(git)
    moves = [] if branch is None else reflog(git, f"refs/heads/{branch}")
    return bool(moves) and moves[0][1:] == (orig, head)


def merged_paths(repo: Repo, found: Evidence) -> set[str]:
    """Paths whose content differs between the two commits."""
    git = repo.git
    before, after = git[found.before], git[found.after]
    assert isinstance(before, pygit2.Commit) and isinstance(after, pygit2.Commit)
    return {p for p, _ in diff_blobs(git, str(before.tree.id), str(after.tree.id))}


def adopt_merged(repo: Repo, since: str | None = None) -> MergedResult:
    current(repo)
    found = evidence(repo, since)
    if found is None:
        raise UsageError(
            "HEAD is not a merge commit and git recorded no ORIG_HEAD (a rebase or pull sets"
            " it): name the commit the branch was at before with --since REV"
        )
    from tinymem.branches.fromcommit import Taken, taking  # scanning: only when adopting

    result = MergedResult(found, None, Taken())
    label = "rebase or pull" if found.what == "ORIG_HEAD" else found.what
    operation = taking(
        repo,
        found.after,
        result.taken,
        before=found.before,
        kind="adopt",
        reason=f"brought by {label} {found.after[:12]} (since {found.before[:12]})",
        source=Source.USER,
        details={"merged": found.after, "evidence": found.what},
    )
    result.committed = commit_episode(repo, operation)
    return result


def merged_among(repo: Repo, paths: list[str]) -> tuple[Evidence, list[str]] | None:
    """Which of `paths` (STALE files, say) the last merge or rebase changed: the hint that
    `tm adopt --merged` would record them. None when git names no merge or none of them."""
    if not paths:
        return None
    try:
        found = evidence(repo)
    except UsageError:
        return None
    if found is None:
        return None
    hit = sorted(merged_paths(repo, found) & set(paths))
    return (found, hit) if hit else None
