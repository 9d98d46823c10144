"""What a long-lived `tm serve` does about its memory, which a `tm ask` that exits need not.

Measured on a 50,000-file repository (bench/README.md, issue 29): the first request built the
relevance index in the server, and the allocator kept that peak for as long as the server
ran; every request left its pygit2 repository in a reference cycle (with libgit2's caches of
the trees it read), and litellm's ~390,000 objects made the full collection that frees such
cycles so slow (~1 s) that it seldom ran; glibc gave each request thread its own malloc
arena, each keeping what its requests had freed. So: the index is built in a child process
once it is large (`index.build_in_child`); the objects of the imports are set aside from the
cycle collector (`gc.freeze`) and every answered request is collected; the threads share
two arenas, and the free pages of the heaps go back to the system after each request
(`malloc_trim`). The last two only where the C library is glibc.
"""

from __future__ import annotations

import ctypes
import gc
import platform
from typing import Any

from tinymem.hydration.index import build_in_child

__all__ = ["give_back", "preload", "settle"]

_M_ARENA_MAX = -8  # mallopt's parameter number (malloc.h)
_ARENAS = 2
# A refresh that changes this many file records runs in a child: below it the build's peak
# is no higher than a request's (the build works 2,000 files at a time).
_CHILD_MIN_FILES = 2000


def _glibc() -> Any | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        lib = ctypes.CDLL(None)
        lib.mallopt  # noqa: B018 - both present, or neither used
        lib.malloc_trim  # noqa: B018
    except (OSError, AttributeError):
        return None
    return lib


_LIBC = _glibc()


def settle() -> None:
    """Once, before the server starts its threads (an arena limit set later leaves the
    arenas already made)."""
    build_in_child(_CHILD_MIN_FILES)
    if _LIBC is not None:
        _LIBC.mallopt(ctypes.c_int(_M_ARENA_MAX), ctypes.c_int(_ARENAS))


def preload() -> None:
    """Import litellm ahead of the first request (~2.5 s), then set what the imports made
    aside from the cycle collector, so that collecting after each request costs what the
    request made, not ~1 s. An object of a request in flight at that moment is set aside too:
    still freed by reference counting, only a cycle of it would stay."""
    from tinymem.llm import import_litellm

    import_litellm()
    gc.collect()
    gc.freeze()


def give_back() -> None:
    """After a request: free the cycles it left (its repository among them), then return the
    free pages of the malloc heaps to the system."""
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(ctypes.c_size_t(0))
