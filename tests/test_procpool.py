"""Worker pools started from a process with other threads (`tm serve`, `tm mcp`): no worker
inherits a lock another thread held at the fork, a stuck worker is an error, not a hang, and
what the workers compute is what one process computes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from multiprocessing.context import BaseContext
from pathlib import Path

import pygit2
import pytest

from tests.conftest import git, tm, write
from tinymem import gitobjects, procpool, scan
from tinymem.gitobjects import ObjectWriter, PackSpool, pack_dir
from tinymem.procpool import WorkerStalledError, pool_context
from tinymem.repository import Repo, open_repo


def _python_files(repo: Path, n: int) -> list[str]:
    paths = []
    for i in range(n):
        path = f"pkg{i % 3}/m{i}.py"
        write(repo, path, f"def f{i}(x):\n    return x + {i}\n\n\nclass C{i}:\n    pass\n")
        paths.append(path)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "files")
    return sorted(paths)


def _scanned(r: Repo, paths: Sequence[str], workers: int) -> list[object]:
    shutil.rmtree(r.cache_dir, ignore_errors=True)  # each run extracts, none reads the other's
    return [(s.path, s.file, s.extraction, s.error) for s in scan.scan(r, paths, workers)]


@pytest.fixture
def another_thread() -> Iterator[threading.Thread]:
    """A thread alive for the test's length, as serve's request and preload threads are."""
    done = threading.Event()
    thread = threading.Thread(target=done.wait, name="test-other-thread")
    thread.start()
    yield thread
    done.set()
    thread.join()


def test_workers_are_forked_only_while_no_other_thread_runs(
    another_thread: threading.Thread,
) -> None:
    assert pool_context().get_start_method() == "forkserver"


def test_a_single_threaded_process_forks_its_workers() -> None:
    if threading.active_count() > 1:
        pytest.skip("a thread another test started is still alive")
    assert pool_context().get_start_method() == "fork"


# Another thread imports a module (the one the workers import first when they extract Python
# entities) and holds its import lock while the pool starts, as serve's preload thread holds
# litellm's for ~2.5 s after start. A forked worker inherits that lock held, by a thread that
# does not exist in it, and waits for it for good; its parent then waited for the worker with
# no bound (the request hung, and stopping serve waited for it).
_HELD_IMPORT = textwrap.dedent(
    """
    import importlib, importlib.abc, importlib.machinery, json, shutil, sys, threading
    from tinymem import scan
    from tinymem.repository import open_repo

    TARGET = "tinymem.symbols.treesitter"
    assert TARGET not in sys.modules
    held, release = threading.Event(), threading.Event()

    class Slow(importlib.abc.Loader):
        # The module's body runs with its import lock held, as litellm's does for ~2.5 s.
        def __init__(self, real):
            self.real = real

        def create_module(self, spec):
            return self.real.create_module(spec)

        def exec_module(self, module):
            held.set()
            release.wait()
            self.real.exec_module(module)

    class Hold(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != TARGET or threading.current_thread().name != "holder":
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            spec.loader = Slow(spec.loader)
            return spec

    sys.meta_path.insert(0, Hold())
    holder = threading.Thread(target=importlib.import_module, args=(TARGET,), name="holder")
    holder.start()
    held.wait()
    scan.PARALLEL_MIN_FILES = 1
    r = open_repo(sys.argv[1])
    paths = sys.argv[2:]

    def scanned(workers):
        shutil.rmtree(r.cache_dir, ignore_errors=True)
        return [(s.path, s.file, s.extraction, s.error) for s in scan.scan(r, paths, workers)]

    pooled = scanned(2)
    release.set()
    holder.join()
    serial = scanned(1)
    assert pooled == serial
    print(json.dumps([len(pooled), sum(len(s[2].symbols) for s in pooled)]))
    """
)


def test_a_pool_started_while_another_thread_holds_an_import_lock_does_not_hang(
    repo: Path,
) -> None:
    paths = _python_files(repo, 6)
    # A process of its own: on the code before the fix it hangs, with stuck grandchildren,
    # and only a process group can be stopped whole.
    proc = subprocess.Popen(
        [sys.executable, "-c", _HELD_IMPORT, str(repo), *paths],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the pool's workers hung on the import lock the other thread held")
    assert proc.returncode == 0, err
    assert out.strip() == "[6, 12]"  # every file scanned, both entities of each


def test_a_scan_in_a_threaded_process_gives_what_one_process_gives(
    repo: Path, another_thread: threading.Thread, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _python_files(repo, 2 * scan._CHUNK + 5)  # three chunks, in two workers
    r = open_repo(str(repo))
    serial = _scanned(r, paths, 1)
    monkeypatch.setattr(scan, "PARALLEL_MIN_FILES", 1)
    assert _scanned(r, paths, 2) == serial  # from the forkserver: nothing inherited


def test_init_in_a_threaded_process_records_what_a_single_threaded_one_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(gitobjects, "PARALLEL_SEAL_MIN", 10)  # sealed in processes too
    methods: list[str] = []

    def context() -> BaseContext:
        ctx = pool_context()
        methods.append(ctx.get_start_method())
        return ctx

    monkeypatch.setattr(scan, "pool_context", context)
    monkeypatch.setattr(procpool, "pool_context", context)  # what `seal_spooled` imports
    # Threads other tests left alive (the suite's) make the first round a forkserver's too.
    alone = "fork" if threading.active_count() == 1 else "forkserver"
    trees = []
    for name in ("forked", "served"):
        work = tmp_path / name
        work.mkdir()
        git(work, "init", "-q", "-b", "main")
        _python_files(work, 2 * scan._CHUNK + 5)
        done = threading.Event()
        other = threading.Thread(target=done.wait)
        if name == "served":
            other.start()
        try:
            proc = tm(work, "init", "--quiet")
        finally:
            done.set()
            if other.is_alive():
                other.join()
        assert proc.returncode == 0, proc.stderr
        git(work, "fsck", "--strict")  # the sealed packs are sound
        trees.append(_state_but_episode(work))
    assert methods == [alone, alone, "forkserver", "forkserver"]  # scan, seal; scan, seal
    assert trees[0] == trees[1]
    assert len(trees[0]) > 1


def _state_but_episode(work: Path) -> dict[str, object]:
    """The State Map, with what names the episode (its id and time) left out."""
    state = {}
    for line in git(work, "ls-tree", "-r", "refs/tinymem/heads/main").splitlines():
        _, _, oid, path = line.split(None, 3)
        if path.startswith("episode/"):
            continue
        if path.startswith("meta/"):
            record = json.loads(git(work, "cat-file", "blob", oid))
            for entity in record["entities"].values():
                del entity["episode"], entity["time"]
            state[path] = record
        else:
            state[path] = oid
    return state


def _stuck(repo: Repo, paths: Sequence[str]) -> None:
    time.sleep(3600)  # a worker that never ends by itself (as one waiting on a lost lock)


def test_a_stuck_scan_worker_is_stopped_and_raises_instead_of_hanging(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _python_files(repo, 3)
    monkeypatch.setattr(scan, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(procpool, "STALL_SECONDS", 1.0)
    chunks = scan.map_chunks(open_repo(str(repo)), paths, _stuck, workers=2)
    with pytest.raises(WorkerStalledError, match="gave no result"):
        next(chunks)
    # The workers were killed: closing the generator (its pool's shutdown) does not wait.
    chunks.close()


def _stuck_seal(path: str) -> str:
    time.sleep(3600)
    return path


def test_a_stuck_sealing_worker_fails_the_flush_and_leaves_no_spool(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git_repo = pygit2.Repository(str(repo))
    monkeypatch.setattr(gitobjects, "PARALLEL_SEAL_MIN", 10)
    monkeypatch.setattr(gitobjects, "finish_pack", _stuck_seal)
    monkeypatch.setattr(procpool, "STALL_SECONDS", 1.0)
    main = ObjectWriter(git_repo)
    spool = PackSpool(pack_dir(git_repo), "tmp_pack_test-")
    worker = ObjectWriter(git_repo)
    for i in range(20):
        worker.blob(f"{i}\n".encode())
    main.add_spooled(worker.spool(spool))
    spool.close()
    main.seal_spooled()
    with pytest.raises(WorkerStalledError):
        main.flush()
    assert main._sealers and not any(p.is_alive() for p in main._sealers)  # killed
    assert not [n for n in os.listdir(pack_dir(git_repo)) if n.startswith("tmp_")]
    main.discard()  # what `commit_episode` does next: nothing left to wait for or remove


def test_a_stalled_worker_ends_with_the_documented_exit_code() -> None:
    """Exit 10, and the table of exit codes (`tm --help`, docs/formats.md: a test keeps the
    two equal) says that a stalled worker is among what it means, with its bound."""
    from tinymem.errors import EXIT_CODES

    meaning = dict(EXIT_CODES)[WorkerStalledError("").exit_code]
    assert WorkerStalledError.exit_code == 10
    assert f"a worker process gave no result for {procpool.STALL_SECONDS:.0f} s" in meaning
