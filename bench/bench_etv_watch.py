#!/usr/bin/env python3
"""ETV's whole look against a watched one (`treewatch.py`, what `tm serve` and `tm mcp` do),
and a request's `ask.prepare()` with each, in one process on an initialised repository.

Both are measured in the same run: first without a watch (every look whole: git's
`diff-index` over the tree), then after `treewatch.watch` (the first look whole, the later
ones reading only what changed: nothing, here). Medians of `--runs` after three warm-ups.

Usage:
  .venv/bin/python bench/bench_etv_watch.py REPO [--runs 7] [--prompt TEXT] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tinymem import treewatch  # noqa: E402
from tinymem.ask import AskOptions, prepare  # noqa: E402
from tinymem.etv import verify  # noqa: E402
from tinymem.ledger import current  # noqa: E402
from tinymem.sync import open_synced  # noqa: E402

PROMPT = "explain how the session token cache decides when to retry"


def _median_of(runs: int, step: Any) -> float:
    for _ in range(3):
        step()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(workdir: str, runs: int, prompt: str) -> dict[str, float]:
    conversation = [{"role": "user", "content": prompt}]

    def etv() -> None:
        repo = open_synced(workdir)
        verify(repo, current(repo))

    def prep() -> None:
        repo = open_synced(workdir)
        prepare(repo, AskOptions(prompt=prompt, flags={}, conversation=conversation))

    return {"etv_s": _median_of(runs, etv), "prepare_s": _median_of(runs, prep)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--prompt", default=PROMPT)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_etv_watch.json")
    args = ap.parse_args()
    workdir = str(args.repo.resolve())
    whole = measure(workdir, args.runs, args.prompt)
    if treewatch.watch(workdir) is None:
        raise SystemExit("no watch here (not Linux, or not a local file system)")
    watched = measure(workdir, args.runs, args.prompt)
    result = {
        "repo": workdir,
        "runs": args.runs,
        "whole": {k: round(v, 5) for k, v in whole.items()},
        "watched": {k: round(v, 5) for k, v in watched.items()},
    }
    print(json.dumps(result, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
