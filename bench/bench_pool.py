"""The price of the start method of `scan.map_chunks`'s worker processes (`procpool`).

Usage:
  .venv/bin/python bench/bench_pool.py REPO [--runs 3]

REPO: a git work tree with committed files (e.g. a copy of an installed package's source:
mypy, ~1,100 files). Scans every tracked file, the symbol cache deleted before each run (so
each run parses everything, as a first import or a large head move does), in this process:

- serial: one process (`workers=1`);
- fork: 2 workers, forked from this (single-threaded) process, as the CLI does;
- forkserver cold: 2 workers from a forkserver started for this pool (the first pool of a
  threaded process: `tm serve`'s first large head move), measured in a fresh process;
- forkserver warm: the same server's next pool;
- spawn: 2 workers, each a fresh interpreter.

Medians of the runs, and each against serial in the same run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import statistics
import subprocess
import sys
import time

from tinymem import procpool, scan
from tinymem.repository import open_repo


def _one(workdir: str, method: str, pools: int) -> list[float]:
    """Time `pools` consecutive full scans with workers started by `method`."""
    repo = open_repo(workdir)
    paths = (
        subprocess.run(["git", "ls-files", "-z"], cwd=workdir, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")[:-1]
    )
    ctx = None if method == "serial" else multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(procpool._PRELOAD)  # type: ignore[union-attr]
    if ctx is not None:
        procpool.pool_context = lambda: ctx  # type: ignore[assignment,return-value]
        scan.pool_context = procpool.pool_context  # type: ignore[attr-defined]
    out = []
    for _ in range(pools):
        shutil.rmtree(repo.cache_dir, ignore_errors=True)
        t = time.perf_counter()
        n = sum(1 for _ in scan.scan(repo, paths, workers=1 if ctx is None else 2))
        out.append(time.perf_counter() - t)
        assert n == len(paths)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", nargs=2, metavar=("METHOD", "POOLS"))
    a = ap.parse_args()
    if a.child:
        print(json.dumps(_one(a.repo, a.child[0], int(a.child[1]))))
        return
    rows: dict[str, list[float]] = {}
    for _ in range(a.runs):  # interleaved, each method in a fresh process
        for method in ("serial", "fork", "forkserver", "spawn"):
            argv = [sys.executable, __file__, a.repo, "--child", method, "2"]
            first, second = json.loads(subprocess.run(argv, capture_output=True, check=True).stdout)
            if method == "forkserver":
                rows.setdefault("forkserver cold", []).append(first)
                rows.setdefault("forkserver warm", []).append(second)
            else:
                rows.setdefault(method, []).append(second)
    base = statistics.median(rows["serial"])
    for name, times in rows.items():
        m = statistics.median(times)
        print(
            f"{name:16} {m * 1000:8.0f} ms  {m / base:5.2f}x serial  {[round(t, 2) for t in times]}"
        )


if __name__ == "__main__":
    main()
