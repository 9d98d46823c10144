"""Reading and indexing many work-tree files: read, hash (git filters), extract entities.

Parsing dominates a baseline import (tree-sitter holds the GIL), so large batches fan out to
one worker process per core. Results come back in input order, so what is recorded does not
depend on scheduling.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from tinymem.repository import Repo, open_repo
from tinymem.symbols import Extraction
from tinymem.symcache import SymbolCache, extraction_for
from tinymem.worktree import WorktreeFile, read_file

# Below this many files, starting worker processes costs more than it saves.
PARALLEL_MIN_FILES = 400
_CHUNK = 64


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
        return f"unreadable: {self.error.strerror or self.error}" if self.error else ""


def _scan_one(repo: Repo, cache: SymbolCache, path: str) -> Scanned:
    try:
        wf = read_file(repo, path)
    except OSError as exc:
        return Scanned(path, None, None, exc)
    return Scanned(path, wf, extraction_for(cache, wf.path, wf.oid, wf.data, wf.kind), None)


_worker_repo: Repo | None = None


def _init_worker(workdir: str) -> None:
    global _worker_repo
    _worker_repo = open_repo(workdir)


def _scan_chunk(paths: Sequence[str]) -> list[Scanned]:
    assert _worker_repo is not None
    cache = SymbolCache(_worker_repo.cache_dir)
    try:
        return [_scan_one(_worker_repo, cache, p) for p in paths]
    finally:
        cache.close()  # each worker stores what it extracted


def scan(repo: Repo, paths: Sequence[str], workers: int | None = None) -> Iterator[Scanned]:
    jobs = workers if workers is not None else (os.cpu_count() or 1)
    if jobs <= 1 or len(paths) < PARALLEL_MIN_FILES:
        cache = SymbolCache(repo.cache_dir)
        try:
            for p in paths:
                yield _scan_one(repo, cache, p)
        finally:
            cache.close()
        return
    chunks = [paths[i : i + _CHUNK] for i in range(0, len(paths), _CHUNK)]
    with ProcessPoolExecutor(
        max_workers=jobs, initializer=_init_worker, initargs=(repo.workdir,)
    ) as pool:
        for batch in pool.map(_scan_chunk, chunks):
            yield from batch
