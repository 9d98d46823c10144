"""A work-tree directory opened for writing, one component at a time.

Checking a path and then writing through it by name is a race: a directory that becomes a
symlink in between (a pull, a checkout, another program) redirects the write outside the
repository or into `.git/hooks`. So the directory is opened from the work tree's root, each
component relative to the one before with `O_NOFOLLOW`, and the file is then created and
renamed relative to that descriptor: what was checked is what is written.
"""

from __future__ import annotations

import errno
import os
import stat

from tinymem.errors import UnsafePathError
from tinymem.paths import is_dotgit_component

__all__ = ["open_parent"]

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _refuse(rel: str, why: str) -> UnsafePathError:
    return UnsafePathError(f"refused to write {rel}: {why}; nothing was written there")


def _holds_git(fd: int) -> bool:
    """A directory with its own `.git` is a submodule or a nested repository."""
    try:
        os.stat(".git", dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _open_child(fd: int, name: str, rel: str, create: bool) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
        os.mkdir(name, 0o777, dir_fd=fd)
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise _refuse(rel, f"{name!r} on its way is a symlink or not a directory") from exc
        raise


def open_parent(workdir: str, rel: str, *, create: bool) -> tuple[int, str]:
    """(a descriptor of the directory holding `rel`, the file's name in it).

    Refused with UnsafePathError: an empty, `.` or `..` component, `.git` (or an alias git
    refuses), a symlink on the way, a directory that is a submodule or a nested repository,
    and a final name that is a symlink or a directory. Missing directories are created when
    `create`. The caller closes the descriptor.
    """
    parts = rel.split("/")
    for part in parts:
        if part in ("", ".", "..") or is_dotgit_component(part):
            raise _refuse(rel, f"{part!r} is not a name tm writes through")
    fd = os.open(workdir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for name in parts[:-1]:
            child = _open_child(fd, name, rel, create)
            os.close(fd)
            fd = child
            if _holds_git(fd):
                raise _refuse(rel, f"{name!r} is a submodule or a nested repository")
        name = parts[-1]
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return fd, name
        if stat.S_ISLNK(st.st_mode):
            raise _refuse(rel, "it is a symlink")
        if stat.S_ISDIR(st.st_mode):
            raise _refuse(rel, "it is a directory")
        return fd, name
    except BaseException:
        os.close(fd)
        raise
