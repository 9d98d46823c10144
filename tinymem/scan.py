"""Reading and indexing many work-tree files: read, hash (git filters), extract entities.

Parsing dominates a baseline import (tree-sitter holds the GIL), so large batches fan out to
one worker process per core (`map_chunks`; `tm init` also records and compresses there).
Results come back in input order, so what is recorded does not depend on scheduling.
"""

from __future__ import annotations

import gc
import os
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from tinymem.procpool import pool_context, processes_of, wait_for
from tinymem.repository import Repo, open_repo
from tinymem.symbols import Extraction
from tinymem.symcache import SymbolCache, extraction_for
from tinymem.worktree import ThroughSymlinkError, WorktreeFile, read_file

# Below this many files, starting worker processes costs more than it saves.
PARALLEL_MIN_FILES = 400
# Files per task: each costs the main process a result to receive and merge, and the worker a
# symbol-cache commit and a spool append; 128 halved that against 64 on a 50,000-file init
# (~0.3 CPU-s in the main process), and the last task still ends within ~50 ms of the other.
_CHUNK = 128

T = TypeVar("T")


@dataclass(frozen=True)
class Scanned:
    path: str
    file: WorktreeFile | None
    extraction: Extraction | None
    error: OSError | None  # why the file could not be read

    @property
    def reason(self) -> str:
        if isinstance(self.error, FileNotFoundError):
            return "missing from the work tree"
        if isinstance(self.error, ThroughSymlinkError):
            return self.error.why
        return f"unreadable: {self.error.strerror or self.error}" if self.error else ""


def _read(repo: Repo, path: str) -> WorktreeFile | OSError:
    try:
        return read_file(repo, path)
    except OSError as exc:
        return exc


_worker_repo: Repo | None = None
# A worker's symbol cache stays open for the worker's life: opening and closing SQLite per
# chunk (and the WAL checkpoint each last close runs) cost ~1 CPU-s on a 50,000-file import.
_worker_symbols: SymbolCache | None = None


def _init_worker(workdir: str, tracked_gitattributes: bool | None) -> None:
    global _worker_repo
    # What the worker inherited from the parent (modules, the path list) is never garbage:
    # frozen, the collector's passes skip it and do not touch the pages fork shares.
    gc.freeze()
    _worker_repo = open_repo(workdir)
    # Learnt from the index listing already: each worker would otherwise run git to ask.
    _worker_repo.tracked_gitattributes = tracked_gitattributes


def _symbol_cache(repo: Repo) -> tuple[SymbolCache, bool]:
    """The symbol cache for one chunk, and whether the chunk must close it."""
    global _worker_symbols
    if repo is not _worker_repo:
        return SymbolCache(repo.cache_dir), True
    if _worker_symbols is None:
        _worker_symbols = SymbolCache(repo.cache_dir)
    return _worker_symbols, False


def _in_worker(fn: Callable[..., T], paths: Sequence[str], args: tuple[object, ...]) -> T:
    assert _worker_repo is not None
    return fn(_worker_repo, paths, *args)


def map_chunks(
    repo: Repo,
    paths: Sequence[str],
    fn: Callable[..., T],
    *args: object,
    workers: int | None = None,
) -> Generator[T, None, None]:
    """`fn(repo, chunk, *args)` for consecutive chunks of `paths`, results in input order; in
    worker processes (one per core) for large batches. `fn` must be a module-level function
    and its arguments and result picklable (`procpool`: a threaded process's workers come
    from a forkserver and inherit nothing). Closing the iterator early waits for the chunks
    already running and drops the rest; a worker stuck for `procpool.STALL_SECONDS` is
    stopped and raises WorkerStalledError."""
    jobs = workers if workers is not None else (os.cpu_count() or 1)
    chunks = [paths[i : i + _CHUNK] for i in range(0, len(paths), _CHUNK)]
    if jobs <= 1 or len(paths) < PARALLEL_MIN_FILES:
        for chunk in chunks:
            yield fn(repo, chunk, *args)
        return
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=pool_context(),
        initializer=_init_worker,
        initargs=(repo.workdir, repo.tracked_gitattributes),
    )
    try:
        futures = deque(pool.submit(_in_worker, fn, chunk, args) for chunk in chunks)
        started = processes_of(pool)
        while futures:
            # Taken off: a result the caller has taken is not kept here until the last one.
            future = futures.popleft()
            wait_for(future, started)
            yield future.result()
    finally:
        # Also when the caller stops early (an error, Ctrl-C, `close()`): chunks not started
        # are dropped, and when this returns no worker is still running one.
        pool.shutdown(wait=True, cancel_futures=True)


def scan_chunk(repo: Repo, paths: Sequence[str]) -> list[Scanned]:
    read = [_read(repo, p) for p in paths]
    cache, owned = _symbol_cache(repo)
    try:
        cache.prefetch((f.path, f.oid) for f in read if isinstance(f, WorktreeFile))
        return [
            Scanned(p, None, None, f)
            if isinstance(f, OSError)
            else Scanned(p, f, extraction_for(cache, f.path, f.oid, f.data, f.kind), None)
            for p, f in zip(paths, read, strict=True)
        ]
    finally:
        # Each process stores what it extracted, chunk by chunk.
        if owned:
            cache.close()
        else:
            cache.commit()


def scan(repo: Repo, paths: Sequence[str], workers: int | None = None) -> Iterator[Scanned]:
    for batch in map_chunks(repo, paths, scan_chunk, workers=workers):
        yield from batch
