"""An advisory lock on a file (flock), held by a live process and released by the kernel
when the process dies: whoever can take it knows its last holder is gone."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

from tinymem.errors import ConcurrencyError

__all__ = ["held"]


@contextlib.contextmanager
def held(path: str, *, wait: float, busy: str) -> Iterator[bool]:
    """Hold the lock on `path` (created if needed). Polled, never blocking for good: a tm
    stopped with Ctrl-Z must not hang every other one. After `wait` seconds: yields False
    when `wait` is 0, else raises ConcurrencyError with `busy`. Where flock does not exist,
    yields True (one tm at a time is then the user's to keep)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield True
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    if wait:
                        raise ConcurrencyError(busy) from None
                    yield False
                    return
                time.sleep(0.01)
        yield True
    finally:
        os.close(fd)  # closing releases the lock
