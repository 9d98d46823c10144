#!/usr/bin/env python3
"""What building the relevance index during `tm init` would cost (issue 29, "index at entry").

Today `.git/tinymem/relevance.sqlite` is built by the first `tm ask` or `tm serve` request
after `tm init`. This measures, on the same repository, `tm init -q` from scratch (ref, cache
directory and every object file tm wrote removed between runs, as bench_foundation.py does)
and, after each init, building the index for the new tip in a fresh process
(`hydration.index.corpus_for`, what the first prompt pays, minus the prompt itself), interleaved
in --runs rounds; the ratio build / init is what init would grow by if it built the index in
its main process after the scan.

Repositories: mypy from the venv's site-packages (with its vendored typeshed, as
bench_hydrate.py copies it) and bench_foundation.py's synthetic tree of --synth files.

Usage:
  .venv/bin/python bench/bench_index_init.py [--runs 3] [--synth 50000] [--only mypy|synth]
      [--out bench/results/bench_index_init.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_foundation import build_synthetic, commit_all, git, object_files, reset_tm  # noqa: E402
from bench_hydrate import CORPORA  # noqa: E402

TM = str(PROJECT / ".venv" / "bin" / "tm")
BUILD = r"""
import sys, time
from tinymem.hydration.index import corpus_for
from tinymem.repository import open_repo
from tinymem.statemap import StateView
repo = open_repo(sys.argv[1])
t0 = time.perf_counter()
corpus_for(StateView(repo.git, repo.state_tip()), repo.cache_dir)
print(time.perf_counter() - t0)
"""


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")  # bytecode cached, as installed
    return env


def measure(repo: Path, runs: int, env: dict[str, str]) -> dict[str, Any]:
    before = object_files(repo)  # git's own: a repository tm never initialised
    inits: list[float] = []
    builds: list[float] = []
    for _ in range(runs + 1):  # the first round warms the page cache and bytecode
        reset_tm(repo, before)
        t0 = time.perf_counter()
        subprocess.run([TM, "init", "-q"], cwd=repo, env=env, check=True, capture_output=True)
        inits.append(time.perf_counter() - t0)
        out = subprocess.run(
            [sys.executable, "-c", BUILD, str(repo)],
            cwd=repo,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        builds.append(float(out.stdout.strip().splitlines()[-1]))
    index = repo / ".git" / "tinymem" / "relevance.sqlite"
    inits, builds = inits[1:], builds[1:]
    return {
        "init_s": statistics.median(inits),
        "build_s": statistics.median(builds),
        "build_vs_init": statistics.median(builds) / statistics.median(inits),
        "build_vs_init_paired": statistics.median(
            b / i for b, i in zip(builds, inits, strict=True)
        ),
        "inits": inits,
        "builds": builds,
        "index_mb": round(index.stat().st_size / 1e6, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--synth", type=int, default=50_000)
    ap.add_argument("--only", choices=["mypy", "synth"])
    ap.add_argument("--out", default=str(HERE / "results" / "bench_index_init.json"))
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-index-init-"))
    env = _env(root)
    result: dict[str, Any] = {"runs": args.runs}
    if args.only in (None, "mypy"):
        # The copy bench_hydrate.py makes (no compiled modules), committed and packed.
        repo = root / "mypy"
        shutil.copytree(
            CORPORA["mypy"],
            repo / "mypy",
            ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "py.typed"),
        )
        git(repo, "init", "-q", "-b", "main")
        commit_all(repo)
        result["mypy"] = measure(repo, args.runs, env)
        print("mypy", json.dumps(result["mypy"]), flush=True)
    if args.only in (None, "synth"):
        repo = build_synthetic(root, args.synth)
        result[f"synth-{args.synth}"] = measure(repo, args.runs, env)
        print(f"synth-{args.synth}", json.dumps(result[f"synth-{args.synth}"]), flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    subprocess.run(["rm", "-rf", str(root)], check=False)


if __name__ == "__main__":
    main()
