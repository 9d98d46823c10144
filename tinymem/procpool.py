"""Worker processes that are safe to start from a process with threads (`tm serve`, `tm mcp`).

fork copies only the thread that calls it: a lock another thread held at that moment (the
module lock of an import under way, as serve's preload thread imports litellm; SQLite's
mutexes, inside another request; a logging handler's) stays held in the child for good, and a
worker that needs it blocks, while its parent waits for its result. So a process with other
threads alive starts its workers from a forkserver: a single-threaded process started once
(~0.3 s, importing the workers' modules once), from which each worker is forked. A process
with one thread (the CLI) keeps fork, which costs nothing to start: no lock can be held by a
thread that does not exist, and no other thread can start one before the fork.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any, Final

from tinymem.errors import TinymemError

__all__ = [
    "STALL_SECONDS",
    "WorkerStalledError",
    "pool_context",
    "processes_of",
    "stop",
    "wait_for",
]

# What the workers run, imported once by the forkserver rather than by every worker; with
# the main module (the `tm` script, its `__main__` guarded), which each worker would
# otherwise run again to find the parent's main-module functions.
_PRELOAD: Final = ["__main__", "tinymem.scan", "tinymem.baseline", "tinymem.gitobjects"]

# How long a parent waits for a worker's next result before it gives up on the workers. A
# result is one chunk (128 files) or one spool sealed: seconds at most; this bound only turns
# a worker stuck for good (a lock it will never get) into an error instead of a hang.
STALL_SECONDS = 600.0
# A killed process is gone at once, unless the kernel holds it (a hung network file system).
_KILLED_SECONDS: Final = 10.0


class WorkerStalledError(TinymemError):
    """A worker process gave no result for `STALL_SECONDS`; the workers were stopped."""

    exit_code = 10  # errors.EXIT_CODES names it


def pool_context() -> BaseContext:
    """The start method for a pool started now: fork while this is the only thread,
    otherwise a forkserver. Under either, what a worker runs must be a module-level function
    with picklable arguments (a forkserver's workers get nothing by inheritance)."""
    if threading.active_count() > 1:
        ctx = multiprocessing.get_context("forkserver")
        # Read when the server starts (once per process); later calls change nothing.
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return multiprocessing.get_context("fork")


def processes_of(pool: ProcessPoolExecutor) -> list[BaseProcess]:
    """The pool's worker processes, once its tasks are submitted (each worker then started):
    kept by the caller, since the pool forgets them when it is shut down."""
    return list((pool._processes or {}).values())


def wait_for(future: Future[Any], processes: Sequence[BaseProcess]) -> None:
    """Return once `future` is done (its result or error is then at hand), waiting at most
    `STALL_SECONDS`; past that the workers (`processes`) are stopped and WorkerStalledError
    raised. A worker that died already needs no bound: its future holds a BrokenProcessPool."""
    done, _ = wait([future], timeout=STALL_SECONDS)
    if not done:
        stop(processes)
        raise WorkerStalledError(
            f"a worker process gave no result for {STALL_SECONDS:.0f} s and was stopped;"
            " run the command again (a stuck worker is a tm bug worth reporting)"
        )


def stop(processes: Sequence[BaseProcess]) -> None:
    """End these workers now, whatever they are doing: one stuck for good never ends by
    itself, and a pool's `shutdown(wait=True)` would wait for it. When this returns they are
    gone (what they were writing can be removed); their pool is broken, its futures fail."""
    for process in processes:
        process.kill()
    # Each one reaped, not only the first to end (a wait on their sentinels returns once any has):
    # a killed worker's pipe closes a moment before the kernel lets it be reaped.
    deadline = time.monotonic() + _KILLED_SECONDS
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
