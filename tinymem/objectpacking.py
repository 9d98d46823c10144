"""Keeping the loose objects tm writes from tripping git's automatic gc.

Every episode writes a few dozen small objects loose (a pack and its index cost more below
`gitobjects.PACK_THRESHOLD`). Left alone, ~240 episodes push a repository past `gc.auto`
(6,700 loose objects by default) and the user's next `git commit` repacks the whole
repository unasked. So after an episode tm looks at what git looks at (the loose objects in
`objects/17`, one 256th of the id space) and, at half of git's threshold, packs the loose
objects itself with an incremental `git repack -d`: only objects not packed yet, reachable
ones (tm's are, from `refs/tinymem/`); the packs the user has are never rewritten.
"""

from __future__ import annotations

import os
import string

import pygit2

from tinymem.flock import held
from tinymem.gitcmd import git_output

__all__ = ["GC_AUTO_DEFAULT", "loose_estimate", "pack_if_needed"]

GC_AUTO_DEFAULT = 6700  # git's default `gc.auto`
_SAMPLE = "17"  # the directory git samples (builtin/gc.c, too_many_loose_objects)
_HEX = frozenset(string.hexdigits.lower())
# The estimate after tm last packed, so that loose objects tm cannot pack (unreachable ones,
# which only `git gc` prunes) do not make every later episode repack again.
_MARK = "loose-after-repack"


def loose_estimate(objects_dir: str) -> int:
    """git's own estimate of the loose objects: those in one of the 256 fan-out directories,
    times 256."""
    try:
        names = os.listdir(os.path.join(objects_dir, _SAMPLE))
    except OSError:
        return 0
    return 256 * sum(1 for n in names if len(n) == 38 and _HEX.issuperset(n))


def _gc_auto(config: pygit2.Config) -> int:
    """`gc.auto` as `git config --int` reads it (k/m/g suffixes; git's default when unset or
    unreadable), from pygit2's config rather than a `git config` process per episode."""
    try:
        value = config.get_int("gc.auto")
    except (KeyError, ValueError, pygit2.GitError):
        value = GC_AUTO_DEFAULT
    # gc.auto=0 turns git's automatic gc off; loose objects still cost every git command.
    return value if value > 0 else GC_AUTO_DEFAULT


def _read_mark(path: str) -> int:
    try:
        with open(path, encoding="ascii") as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def pack_if_needed(common_dir: str, tinymem_dir: str, config: pygit2.Config | None = None) -> bool:
    """Pack the repository's loose objects when they pass half of `gc.auto` (and grew by a
    quarter of it since tm last did); True when it packed. Never raises: this is
    housekeeping, and the episode that called it is recorded already. `config`: the
    repository's (opened from `common_dir` when not given)."""
    objects = os.path.join(common_dir, "objects")
    estimate = loose_estimate(objects)
    if estimate == 0:
        return False
    try:
        limit = _gc_auto(config if config is not None else pygit2.Repository(common_dir).config)
    except pygit2.GitError:
        limit = GC_AUTO_DEFAULT
    mark_path = os.path.join(tinymem_dir, _MARK)
    if estimate <= limit // 2 or estimate < _read_mark(mark_path) + limit // 4:
        return False
    try:
        os.makedirs(tinymem_dir, exist_ok=True)
        with held(os.path.join(tinymem_dir, "repack.lock"), wait=0, busy="") as mine:
            if not mine:
                return False  # another tm is packing right now
            # -d: drop the loose copies once packed; -q: nothing on the user's terminal;
            # no -a: existing packs stay as they are. --no-write-bitmap-index: a bitmap
            # covers a single pack, and this pack is not the whole repository.
            done = git_output(
                common_dir,
                f"--git-dir={common_dir}",
                "repack",
                "-d",
                "-q",
                "--no-write-bitmap-index",
            )
            if done is None:
                return False
            after = loose_estimate(objects)
            tmp = mark_path + f".{os.getpid()}"
            with open(tmp, "w", encoding="ascii") as f:
                f.write(f"{after}\n")
            os.replace(tmp, mark_path)
            return True
    except OSError:
        return False
