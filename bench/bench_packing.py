#!/usr/bin/env python3
"""Loose objects after many episodes: does tm push a repository past git's `gc.auto`?

Builds a small repository in a temporary directory (never inside the project): 20 Python
files, one commit, `tm init`. Then runs N episodes as a user would (`tm adopt` of a changed
file, alternating files; each a real `tm` process) and, every 50 episodes and at the end,
reads `git count-objects -v` and git's own estimate of the loose objects (objects/17 x 256,
what `git gc --auto` compares with `gc.auto`).

Target (issue 29): after 300 episodes the estimate stays under `gc.auto` (6,700 by default),
so the user's next `git commit` does not repack the repository unasked.

Usage:
  .venv/bin/python bench/bench_packing.py [--episodes 300] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tinymem.objectpacking import GC_AUTO_DEFAULT, loose_estimate


def _run(cwd: Path, *args: str) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def _count_objects(repo: Path) -> dict[str, int]:
    out = _run(repo, "git", "count-objects", "-v")
    pairs = (line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return {k: int(v) for k, v in pairs if v.isdigit()}


def _source(i: int, version: int) -> str:
    return (
        f'"""Module {i}."""\n\n\ndef f_{i}(x):\n    return x + {version}\n\n\n'
        f"class C{i}:\n    def m(self):\n        return {version}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--out")
    args = parser.parse_args()
    tm = [sys.executable, "-m", "tinymem"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tm-bench-packing-") as tmp:
        repo = Path(tmp) / "work"
        repo.mkdir()
        _run(repo, "git", "init", "-q", "-b", "main")
        _run(repo, "git", "config", "user.name", "bench")
        _run(repo, "git", "config", "user.email", "bench@example.com")
        for i in range(20):
            (repo / f"m{i}.py").write_text(_source(i, 0))
        _run(repo, "git", "add", ".")
        _run(repo, "git", "commit", "-qm", "base")
        _run(repo, *tm, "init", "-q")
        started = time.perf_counter()
        for n in range(1, args.episodes + 1):
            i = n % 20
            (repo / f"m{i}.py").write_text(_source(i, n))
            _run(repo, *tm, "adopt", f"m{i}.py")
            if n % 50 == 0 or n == args.episodes:
                counts = _count_objects(repo)
                row = {
                    "episodes": n,
                    "loose": counts["count"],
                    "estimate": loose_estimate(str(repo / ".git" / "objects")),
                    "packs": counts["packs"],
                    "size_kib": counts["size"] + counts["size-pack"],
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
        elapsed = time.perf_counter() - started
    last = rows[-1]
    verdict = "met" if last["estimate"] < GC_AUTO_DEFAULT else "NOT met"
    print(
        f"after {last['episodes']} episodes: {last['loose']} loose objects (git's estimate"
        f" {last['estimate']}) against gc.auto {GC_AUTO_DEFAULT}: target {verdict};"
        f" {last['packs']} packs; {elapsed:.0f} s"
    )
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "elapsed_s": elapsed}, indent=2))
    sys.exit(0 if verdict == "met" else 1)


if __name__ == "__main__":
    main()
