"""Linux's inotify through ctypes: a descriptor, watches on directories, the events queued.

Only what `treewatch.py` needs. The kernel queues an event while the system call that caused
it runs, so once a write to a watched file has returned, a read of the queue sees it. Any
other platform, or a C library without inotify, is `Unavailable` and the caller falls back to
looking at every file.
"""

from __future__ import annotations

import errno
import os
import struct
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

__all__ = [
    "IN_ATTRIB",
    "IN_CLOSE_WRITE",
    "IN_CREATE",
    "IN_DELETE",
    "IN_DELETE_SELF",
    "IN_IGNORED",
    "IN_ISDIR",
    "IN_MODIFY",
    "IN_MOVED_FROM",
    "IN_MOVED_TO",
    "IN_MOVE_SELF",
    "IN_Q_OVERFLOW",
    "IN_UNMOUNT",
    "Event",
    "Inotify",
    "Unavailable",
]

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC

_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of NUL-padded name
_READ_SIZE = 256 * 1024

Event = tuple[int, int, bytes]  # watch descriptor, mask, name ("" for the directory itself)


class Unavailable(OSError):
    """No inotify here (another system, no such call, or the per-user limit of instances)."""


def _libc() -> ctypes.CDLL:
    # Imported here: every command's ETV imports this module (to ask whether the process
    # watches), and only `tm serve` and `tm mcp` watch; ctypes costs ~3 ms to import.
    import ctypes

    if not sys.platform.startswith("linux"):
        raise Unavailable(errno.ENOSYS, "inotify is Linux's")
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        for name in ("inotify_init1", "inotify_add_watch", "inotify_rm_watch"):
            getattr(libc, name)
    except (OSError, AttributeError) as exc:
        raise Unavailable(errno.ENOSYS, f"no inotify in the C library: {exc}") from None
    libc.inotify_init1.argtypes = [ctypes.c_int]
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    return libc


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()


class Inotify:
    """One inotify instance, non-blocking: `read` returns what is queued and never waits."""

    def __init__(self) -> None:
        self._libc = _libc()
        fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            err = _errno()
            raise Unavailable(err, os.strerror(err))
        self.fd: int | None = fd

    def add_watch(self, path: str, mask: int) -> int:
        """The watch descriptor for directory `path` (the same one again for a directory
        already watched); OSError with the errno otherwise (ENOENT, ENOTDIR, ENOSPC: the
        per-user limit of watches, EACCES)."""
        if self.fd is None:
            raise OSError(errno.EBADF, "inotify closed")
        wd = int(self._libc.inotify_add_watch(self.fd, os.fsencode(path), mask))
        if wd < 0:
            err = _errno()
            raise OSError(err, os.strerror(err), path)
        return wd

    def read(self) -> list[Event]:
        """Every event queued now, oldest first."""
        if self.fd is None:
            return []
        out: list[Event] = []
        while True:
            try:
                buf = os.read(self.fd, _READ_SIZE)
            except BlockingIOError:
                return out
            except InterruptedError:
                continue
            at = 0
            while at + _HEADER.size <= len(buf):
                wd, mask, _cookie, size = _HEADER.unpack_from(buf, at)
                at += _HEADER.size
                out.append((wd, mask, buf[at : at + size].rstrip(b"\0")))
                at += size
            if not buf:
                return out

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
