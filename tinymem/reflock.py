"""`refs/tinymem/heads/<branch>.lock`: taken by libgit2 for the instant of a ledger ref update, and
left behind when a process is killed in that instant.

Every tm process holds an flock on `tinymem/ledger.lock` (in the common git dir) around its
ref update, so while one process holds that flock no other tm is between creating and renaming
the ref lock. A ref lock found then, older than a git process ever holds one, was left by a
process that is gone: it is removed, and the user is told (git's own rule is to tell the user
which file to remove; tm can prove more, because its own writers announce themselves).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

from tinymem.flock import held
from tinymem.gitcmd import repo_git_output
from tinymem.repository import CACHE_DIRNAME, Repo

__all__ = [
    "STALE_AFTER",
    "clear_if_stale",
    "lock_age",
    "ref_lock_path",
    "swap_ref",
    "updating",
    "writer_alive",
]

STALE_AFTER = 5.0  # seconds; git and libgit2 hold a ref lock for milliseconds
WAIT = 30.0  # seconds a ledger write waits for another tm's ref update


def ref_lock_path(repo: Repo, ref: str) -> str:
    return os.path.join(repo.common_dir, *ref.split("/")) + ".lock"


def _flock_path(repo: Repo) -> str:
    directory = os.path.join(repo.common_dir, CACHE_DIRNAME)
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, "ledger.lock")


@contextlib.contextmanager
def updating(repo: Repo, *, wait: bool = True) -> Iterator[bool]:
    """Held around a ref update; yields False when another tm holds it (`wait` False)."""
    busy = (
        f"another tm process has been writing the ledger for {WAIT:.0f} s (stopped with"
        " Ctrl-Z?); try again when it is done"
    )
    with held(_flock_path(repo), wait=WAIT if wait else 0.0, busy=busy) as mine:
        yield mine


def swap_ref(repo: Repo, ref: str, new: str | None, old: str | None, why: str) -> bool:
    """Move `ref` from `old` (None: it must not exist yet) to `new` (None: delete it), with
    git's compare-and-swap; False when the ref was not at `old`. For creations, renames and
    put-backs (libgit2 would overwrite a ref created meanwhile); the caller holds
    `updating`."""
    if new is None:
        assert old is not None
        args = ["-d", ref, old]
    else:
        args = [ref, new, old if old is not None else "0" * len(new)]
    done = repo_git_output(repo.git.path, repo.workdir, "update-ref", "-m", f"tm: {why}", *args)
    return done is not None


def writer_alive(repo: Repo) -> bool:
    """Whether a tm process is updating the ref right now."""
    with updating(repo, wait=False) as mine:
        return not mine


def lock_age(repo: Repo, ref: str) -> float | None:
    try:
        return max(0.0, time.time() - os.stat(ref_lock_path(repo, ref)).st_mtime)
    except (FileNotFoundError, NotADirectoryError):
        return None  # NotADirectory: a ledger ref named like one of this ref's directories


def clear_if_stale(repo: Repo, ref: str) -> str | None:
    """With `updating` held: remove a lock on `ref` no live process can own; the notice, or
    None when there is none or it may still be in use."""
    age = lock_age(repo, ref)
    if age is None or age < STALE_AFTER:
        return None
    path = ref_lock_path(repo, ref)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return None
    return f"removed {path}, left {age:.0f} s ago by a tm or git process that was killed"
