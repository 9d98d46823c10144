"""The one step that brings the current branch's State Map up to HEAD, in this order: an
interrupted accept is finished or rolled back (`writing.recovery`); a branch with no ledger
starts one from its origin's (`branches.start`); a ledger whose branch was deleted and made
again under the same name is set aside and the branch starts afresh; and what git committed
since the commit the ledger last saw is recorded (`sync.headmove`). When HEAD did not move
this costs two ref reads and one commit-message read (plus a small cache file read when the
last move brought nothing to record).
"""

from __future__ import annotations

import os

from tinymem import refjournal
from tinymem.branches.refs import current_branch, head_commit
from tinymem.notices import emit
from tinymem.repository import CACHE_DIRNAME, INTENT_FILE, Repo, open_repo
from tinymem.sync.lastseen import last_seen

__all__ = ["bring_up_to_head", "open_synced", "recover_interrupted"]


def open_synced(start: str | None = None) -> Repo:
    """The repository containing `start`, its current branch's State Map brought up to HEAD:
    how a command opens the repository before it reads or writes any state."""
    repo = open_repo(start)
    bring_up_to_head(repo)
    return repo


def bring_up_to_head(repo: Repo) -> str | None:
    """The tip of the current branch's ledger once it holds what HEAD committed; None when
    HEAD is detached (tm keeps no State Map for it: commands refuse as before), or no branch
    has a ledger (`tm init` makes one)."""
    recover_interrupted(repo)
    if current_branch(repo.git) is None:
        return None
    tip = repo.state_tip()
    if tip is None:
        from tinymem.branches.start import ensure_state  # scanning: only on a first use

        return ensure_state(repo)
    if last_seen(repo, repo.state_ref, tip) == head_commit(repo.git):
        # HEAD did not move, the common case: answered without loading the recording code
        # (headmove, the ledger's writer: ~15 ms of imports in every hook run).
        return tip
    from tinymem.sync.headmove import follow_head

    return follow_head(repo, tip)


def recover_interrupted(repo: Repo) -> None:
    """Finish or roll back an accept a killed tm left, and say so (also run alone by
    `tm doctor`, which moves no ref), and put back the notes ref a tm killed mid-episode had
    moved ahead of its ledger commit."""
    left = refjournal.recover_if_left(repo)
    if left is not None:
        emit(left)
    if os.path.exists(os.path.join(repo.git.path, CACHE_DIRNAME, INTENT_FILE)):
        # An accept was interrupted (or is running): a stat is all the common case costs.
        from tinymem.writing.recovery import recover

        said = recover(repo)
        if said is not None:
            emit(said)
