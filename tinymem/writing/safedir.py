"""A work-tree directory opened for writing, one component at a time.

Checking a path and then writing through it by name is a race: a directory that becomes a
symlink in between (a pull, a checkout, another program) redirects the write outside the
repository or into `.git/hooks`. So the directory is opened from the work tree's root, each
component relative to the one before with `O_NOFOLLOW`, and the file is then created and
renamed relative to that descriptor: what was checked is what is written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from tinymem.errors import UnsafePathError
from tinymem.paths import is_dotgit_component

__all__ = ["is_directory", "open_parent", "remove_empty_dirs"]

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
        if exc.errno == errno.ENOTDIR and not create and _regular(fd, name):
            # A file where the path has a directory: there is no file at `rel` to read or
            # remove (a directory turned into a file of its name, #29).
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", rel) from exc
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise _refuse(rel, f"{name!r} on its way is a symlink or not a directory") from exc
        raise


def _regular(fd: int, name: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def is_directory(workdir: str, rel: str) -> bool:
    """Whether work-tree path `rel` is a directory (not a symlink to one): no file there."""
    try:
        return stat.S_ISDIR(os.lstat(os.path.join(workdir, rel)).st_mode)
    except OSError:
        return False


def remove_empty_dirs(workdir: str, rel: str) -> None:
    """Remove directory `rel` of the work tree and the directories below it, if they hold
    nothing else: what a transaction does before a file takes the place of a directory whose
    files it removed. Each component is opened as `open_parent` opens it (no symlink on the
    way); a directory that is not empty, or anything else, stays."""
    parts = rel.split("/")
    fds = [os.open(workdir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))]
    try:
        for name in parts:
            try:
                fds.append(os.open(name, _DIR_FLAGS, dir_fd=fds[-1]))
            except OSError:
                return
        _remove_empty_below(fds[-1])
        os.close(fds.pop())
        with contextlib.suppress(OSError):
            os.rmdir(parts[-1], dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


def _remove_empty_below(top: int) -> None:
    """Every empty directory below the open directory `top`, deepest first, without
    following a symlink (iterative: no recursion per level)."""
    stack: list[tuple[int, list[str]]] = [(top, [e.name for e in os.scandir(top)])]
    opened: list[tuple[int, int, str]] = []  # (parent fd, fd, name) to remove when done
    while stack:
        fd, names = stack[-1]
        if not names:
            stack.pop()
            continue
        name = names.pop()
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue  # a file or a symlink: the directory stays
        opened.append((fd, child, name))
        stack.append((child, [e.name for e in os.scandir(child)]))
    for parent, fd, name in reversed(opened):
        os.close(fd)
        with contextlib.suppress(OSError):
            os.rmdir(name, dir_fd=parent)


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
