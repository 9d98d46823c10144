"""The commit HEAD was at when the ledger last looked, per worktree.

A ledger commit says it in its `Tinymem-Head:` trailer. When a move of HEAD brought nothing
to record (an accept, then `git commit`: the State Map holds the commit's text already), no
episode is written; `.git/tinymem/head-seen` (in this worktree's git dir, a derived cache:
deleting it only costs one diff) then says which HEAD the ledger tip was compared with.
"""

from __future__ import annotations

import contextlib
import os

import pygit2

from tinymem.repository import CACHE_DIRNAME, Repo
from tinymem.trailers import message_trailer

__all__ = ["last_seen", "remember"]

_FILE = "head-seen"


def _path(repo: Repo) -> str:
    return os.path.join(repo.git.path, CACHE_DIRNAME, _FILE)


def last_seen(repo: Repo, ref: str, tip: str) -> str | None:
    """The commit the ledger at `tip` was last brought up to; None when no episode says (a
    ledger written by an older tm)."""
    try:
        with open(_path(repo), encoding="utf-8") as f:
            fields = f.read().split()
    except OSError:
        fields = []
    if len(fields) == 3 and fields[0] == ref and fields[1] == tip:
        return fields[2]
    commit = repo.git[tip]
    if not isinstance(commit, pygit2.Commit):
        return None
    return message_trailer(commit.message, "Tinymem-Head")


def remember(repo: Repo, ref: str, tip: str, head: str) -> None:
    """Note that the ledger at `tip` holds what HEAD `head` committed (best effort: a cache)."""
    path = _path(repo)
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temp, "w", encoding="utf-8") as f:
            f.write(f"{ref} {tip} {head}\n")
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
