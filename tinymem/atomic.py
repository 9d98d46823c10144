"""Atomic work-tree writes: temp file in the same directory, fsync, re-check, rename."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable


def write_atomic(path: str, data: bytes, *, check: Callable[[], None] | None = None) -> None:
    """Replace `path` with `data` so readers see the old or the new file, never a mix.

    `check` runs right before the rename (after the slow part) and raises to abort; it is where
    callers re-verify that nobody changed the file meanwhile. The file keeps its permissions.
    """
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tm-tmp", dir=directory
    )
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if check is not None:
            check()
        os.replace(tmp, path)
        tmp = ""
        _fsync_dir(directory)
    finally:
        if tmp:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
