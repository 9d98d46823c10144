"""One work-tree file replaced atomically: readers see the old file or the new, never a mix.

The new text is written and fsynced in `.git/tinymem/tmp/`, then renamed into a directory
opened by `safedir.open_parent`: a crash leaves no temporary file among the user's files
(where `git add -A` would commit it). When `.git` is on another file system than the work
tree, the temporary file sits beside the target under a name the caller chose, so that
recovery can find and remove it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable

from tinymem.repository import Repo
from tinymem.writing.safedir import open_parent

__all__ = ["TEMP_GLOB", "is_temp_of", "remove_file", "temp_name", "write_atomic"]

TMP_DIRNAME = "tmp"


def temp_name(name: str, tag: str) -> str:
    """The temporary name beside `name` (only when `.git` is on another file system). Every
    tag starts with `tm-` and is unique per operation (`tm-<episode>`): a fixed one
    (`tm-adopt`, before) left by a killed process blocked every later write of the file."""
    return f".{name}.{tag}.tm-tmp"


TEMP_GLOB = ".*.tm-*.tm-tmp"  # every `temp_name`, as a git pathspec glob


# The only tags tm ever gave `temp_name`: `tm-<episode id>` (12 hex digits, see
# `ledger.new_episode_id`), its rollback's `tm-<episode id>-undo`, and the fixed `tm-adopt` of
# older versions. Anything else beside a file is the user's, however it is named.
_TEMP_TAG = re.compile(r"tm-(?:[0-9a-f]{12}(?:-undo)?|adopt)")


def is_temp_of(entry: str, name: str) -> bool:
    """Whether directory entry `entry` is a temporary file `temp_name` made for `name`."""
    prefix, suffix = f".{name}.", ".tm-tmp"
    if not (entry.startswith(prefix) and entry.endswith(suffix)):
        return False
    return _TEMP_TAG.fullmatch(entry[len(prefix) : -len(suffix)]) is not None


def _tmp_dir(repo: Repo) -> int:
    path = os.path.join(repo.cache_dir, TMP_DIRNAME)
    os.makedirs(path, exist_ok=True)
    return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))


def _mode(dir_fd: int, name: str, executable: bool | None) -> int:
    """The new file's permissions: the old file's, with the executable bits git's checkout
    would give `executable` (None: as they are)."""
    try:
        mode = stat.S_IMODE(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return (0o777 if executable else 0o666) & ~umask
    if executable is None:
        return mode
    if executable:
        return mode | (mode & 0o444) >> 2  # executable by whoever may read it
    return mode & ~0o111


def _write_temp(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL, mode, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)  # the umask must not narrow the file's own permissions
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(
    repo: Repo,
    rel: str,
    data: bytes,
    *,
    tag: str,
    check: Callable[[], None] | None = None,
    executable: bool | None = None,
) -> None:
    """Replace work-tree file `rel` with `data`, keeping its permissions (`executable`, when
    given, sets or clears the executable bits: git's mode 100755 or 100644).

    `check` runs right before the rename (after the slow part) and raises to abort: where
    callers re-verify that nobody changed the file meanwhile. `tag` names the temporary file
    (unique per operation; see `temp_name`).
    """
    parent, name = open_parent(repo.workdir, rel, create=True)
    tmp_fd = _tmp_dir(repo)
    tmp = f"{tag}-{os.getpid()}-{name}"[:200]
    tmp_dir = tmp_fd
    try:
        mode = _mode(parent, name, executable)
        _write_temp(tmp_dir, tmp, data, mode)
        try:
            if check is not None:
                check()
            os.rename(tmp, name, src_dir_fd=tmp_fd, dst_dir_fd=parent)
            tmp = ""
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            # `.git` on another file system: write again beside the target, then rename.
            os.unlink(tmp, dir_fd=tmp_fd)
            tmp_dir, tmp = parent, temp_name(name, tag)
            _write_temp(tmp_dir, tmp, data, mode)
            if check is not None:
                check()
            os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
            tmp = ""
        with contextlib.suppress(OSError):
            os.fsync(parent)
    finally:
        if tmp:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=tmp_dir)
        os.close(tmp_fd)
        os.close(parent)


def remove_file(repo: Repo, rel: str, *, check: Callable[[], None] | None = None) -> None:
    """Remove work-tree file `rel` (gone already: nothing to do)."""
    try:
        parent, name = open_parent(repo.workdir, rel, create=False)
    except FileNotFoundError:
        return  # its directory is gone, so is the file
    try:
        if check is not None:
            check()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=parent)
        with contextlib.suppress(OSError):
            os.fsync(parent)
    finally:
        os.close(parent)
