"""Which git operation moved HEAD, as its reflog says: commit, merge, pull, rebase, reset,
checkout, cherry-pick, ... (None when the reflog does not say, or says of another move)."""

from __future__ import annotations

import pygit2

from tinymem.branches.refs import reflog

__all__ = ["operation"]


def operation(git: pygit2.Repository, branch: str, head: str) -> str | None:
    """The operation of the newest reflog entry (HEAD's, then the branch's) that moved to
    `head`: the first word of its message, with `commit (merge)` read as a merge and
    `commit (amend)` as an amend."""
    for name in ("HEAD", f"refs/heads/{branch}"):
        entries = reflog(git, name)
        if not entries:
            continue
        message, _old, new = entries[0]
        if new != head:
            continue
        word = message.split(":", 1)[0].strip()
        if word.startswith("commit (") and word.endswith(")"):
            return word[len("commit (") : -1]  # merge, amend, initial
        return word.split(" ", 1)[0] or None
    return None
