"""What git committed on the current branch is its truth (#25).

When HEAD moved since the commit the ledger last saw (`lastseen`), every file git changed
between the two is compared with the work tree, entity by entity (`branches.fromcommit`):
what the work tree holds as HEAD has it is recorded in one `git` episode, adopted from that
commit (evidence: the commit and, where the reflog says, the operation), and said in one line;
what differs stays a hand edit (STALE). Only what git changed in the move is taken, never
"whatever equals HEAD": a buffer saved over an accepted change while HEAD did not move stays
STALE, and the hook still refuses it.

While a rebase is under way nothing is recorded: its commits are not the branch's yet, and
the rebase's end records them all at once (a rebase stopped for a conflict or an `edit` leaves
the State Map where it was; the hook tells a moved-back entity from a stale buffer). A branch
name made again after its branch was deleted (`recreated`) gets a fresh ledger; the old one is
kept under `refs/tinymem-old/`.
"""

from __future__ import annotations

import os

import pygit2

from tinymem.branches.refs import head_commit
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import Draft, commit_episode, message_trailer
from tinymem.notices import emit
from tinymem.records import Source
from tinymem.reflock import swap_ref, updating
from tinymem.repository import Repo
from tinymem.statemap import StateView
from tinymem.sync.gitop import operation
from tinymem.sync.lastseen import last_seen, remember

__all__ = ["follow_head"]

_REBASING = ("rebase-merge", "rebase-apply")
_ZERO = "0" * 40
OLD_LEDGERS = "refs/tinymem-old/"


def follow_head(repo: Repo, tip: str) -> str:
    """The ledger tip of the current branch once what git committed since it last looked is
    recorded (`tip` itself when HEAD did not move)."""
    git = repo.git
    head = head_commit(git)
    if head is None:
        return tip
    ref = repo.state_ref
    seen = last_seen(repo, ref, tip)
    if seen == head:
        return tip
    if any(os.path.isdir(os.path.join(git.path, d)) for d in _REBASING):
        return tip  # recorded when the rebase finishes
    branch = repo.branch
    if seen is None and _on_unborn(git, tip):
        # The ledger last looked while the branch had no commit: its first commit is all
        # git committed (every file where it differs from the State Map is compared).
        return _record(repo, ref, tip, None, head, operation(git, branch, head))
    if seen is None or seen not in git:
        # An older tm's ledger, or a commit gone from this clone: nothing to diff from.
        remember(repo, ref, tip, head)
        return tip
    if _recreated(git, branch, tip, seen):
        return _afresh(repo, ref, tip, branch)
    return _record(repo, ref, tip, seen, head, operation(git, branch, head))


def _on_unborn(git: pygit2.Repository, tip: str) -> bool:
    """Whether the ledger commit was written by a tm that records HEAD (it names its branch)
    while the branch had no commit (so it names no HEAD)."""
    commit = git[tip]
    if not isinstance(commit, pygit2.Commit):
        return False
    message = commit.message
    return (
        message_trailer(message, "Tinymem-Branch") is not None
        and message_trailer(message, "Tinymem-Head") is None
    )


def _record(repo: Repo, ref: str, tip: str, seen: str | None, head: str, op: str | None) -> str:
    from tinymem.branches.fromcommit import Taken, taking  # scanning: only when HEAD moved

    result = Taken()
    how = f"{head[:7]} {op}" if op else head[:7]
    take = taking(
        repo,
        head,
        result,
        before=seen,
        kind="git",
        reason=f"committed by git ({how})",
        source=Source.USER,
        details={"operation": op, "since": seen},
    )

    def record(view: StateView, writer: ObjectWriter) -> Draft | None:
        moved = view.commit_id is not None and view.commit_id != tip
        if moved and _head_of(repo, view.commit_id or "") == head:
            return None  # another tm recorded this move first
        draft = take(view, writer)
        if draft is not None:
            draft.episode.head = head  # what was compared, even if HEAD moves meanwhile
        return draft

    committed = commit_episode(repo, record, ref=ref)
    if committed is None:
        now = repo.state_tip(ref) or tip
        remember(repo, ref, now, head)
        return now
    count = len(result.taken) + len(result.deleted)
    stale = f"; {len(result.left)} differ from it on disk (STALE)" if result.left else ""
    emit(f"recorded {count} file{'s' if count != 1 else ''} git committed ({how}){stale}")
    return committed.commit


def _head_of(repo: Repo, commit: str) -> str | None:
    obj = repo.git[commit]
    return message_trailer(obj.message, "Tinymem-Head") if isinstance(obj, pygit2.Commit) else None


def _recreated(git: pygit2.Repository, branch: str, tip: str, seen: str) -> bool:
    """Whether the branch was made again after the ledger at `tip` last looked at it: its
    reflog starts with a `branch: Created from` newer than that ledger commit, and holds no
    commit the ledger saw (a branch that lived on holds every commit it was at). A branch
    made from a remote-tracking branch (a clone's, with a ledger fetched) is not one."""
    ref = git.references.get(f"refs/heads/{branch}")
    if ref is None:
        return False
    try:
        entries = list(ref.log())
    except (pygit2.GitError, KeyError):
        return False
    if not entries:
        return False
    first = entries[-1]
    message = first.message or ""
    if str(first.oid_old) != _ZERO or not message.startswith("branch: Created from "):
        return False
    source = message[len("branch: Created from ") :].strip()
    if source.startswith("refs/remotes/") or any(
        source.startswith(f"{r.name}/") for r in git.remotes
    ):
        return False
    ledger = git[tip]
    assert isinstance(ledger, pygit2.Commit)
    if first.committer.time < ledger.commit_time:
        return False
    been = {str(e.oid_new) for e in entries}
    return seen not in been


def _afresh(repo: Repo, ref: str, tip: str, branch: str) -> str:
    """Set the old ledger aside (kept, never deleted) and start the branch again from its
    origin, as a first use would."""
    from tinymem.branches.start import ensure_state

    kept = f"{OLD_LEDGERS}{branch}/{tip[:12]}"
    with updating(repo):
        if repo.git.references.get(kept) is None:
            swap_ref(repo, kept, tip, None, "branch created again")
        moved = swap_ref(repo, ref, None, tip, "branch created again")
    if moved:
        emit(
            f"branch {branch} was created again since tm last saw it: its earlier ledger is"
            f" kept as {kept}, and it starts afresh"
        )
    started = ensure_state(repo)
    return started if started is not None else tip
