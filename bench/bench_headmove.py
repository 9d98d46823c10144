"""The cost of bringing the State Map up to HEAD before every command (#25).

Usage:
  .venv/bin/python bench/bench_headmove.py [--files 50000] [--runs 7] [--out results.json]
      [--reuse DIR]

On a generated repository (`bench_foundation.build_synthetic`: 100 files per directory,
Python/Go/JS/TS/Rust/C/Markdown/JSON, seed fixed; generation, commit and `tm init` not
timed), three kinds of `tm status` run as real processes, interleaved, medians compared:

- **still**: HEAD did not move since the last tm command (the step reads HEAD, the ledger
  ref and the ledger tip's message, nothing more);
- **moved**: a hand edit of one Python function was committed with `git commit -a` since the
  last tm command (a new one before each run, not timed): this `tm status` records it as a
  `git` episode;
- **before**: HEAD did not move, run by the code before #25 (`git archive` of `--before`, the
  commit this branch started from, on PYTHONPATH): the ratio still/before is the step's cost
  when nothing moved (target: no measurable change).

Both trees run `python -m tinymem` with the same environment (bytecode caching on, as
`bench_foundation` does).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_foundation import build_synthetic

ROOT = Path(__file__).resolve().parent.parent


def _env(base: Path, pythonpath: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(base / ("pycache-old" if pythonpath else "pycache"))
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    else:
        env.pop("PYTHONPATH", None)
    return env


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def _status(repo: Path, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "tinymem", "status"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"tm status failed: {proc.stderr}")
    return took, proc.stderr


def _old_tree(base: Path, commit: str) -> Path:
    dest = base / "before"
    dest.mkdir()
    data = subprocess.run(
        ["git", "archive", commit, "tinymem"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def _commit_an_edit(repo: Path, target: Path, n: int) -> None:
    text = target.read_text()
    marker = "    return "
    at = text.index(marker)
    target.write_text(text[:at] + f"    _bench_move = {n}\n" + text[at:])
    _git(repo, "commit", "-qam", f"edit {n}", "--no-verify")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--before", default="a31d1aa", help="the commit before #25")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--reuse", type=Path, help="the directory of an earlier run: no build")
    args = ap.parse_args()
    if args.reuse is not None:
        base = args.reuse  # a directory an earlier run built (its synth/ is initialised)
        repo = base / "synth"
        old_tree = base / "before"
    else:
        base = Path(tempfile.mkdtemp(prefix="bench-headmove-"))
        print(f"building {args.files} files under {base}", file=sys.stderr)
        repo = build_synthetic(base, args.files)
        old_tree = _old_tree(base, args.before)
    new_env, old_env = _env(base, None), _env(base, old_tree)
    if args.reuse is None:
        init = subprocess.run(
            [sys.executable, "-m", "tinymem", "init", "-q"], cwd=repo, env=new_env, check=False
        )
        if init.returncode != 0:
            raise SystemExit("tm init failed")
    targets = sorted((repo / "src").rglob("*.py"))[:1]
    assert targets, "no Python file generated"
    for _ in range(2):  # warm the stat cache, git's index and the page cache, both trees
        _status(repo, new_env)
        _status(repo, old_env)
    still: list[float] = []
    moved: list[float] = []
    before: list[float] = []
    recorded = 0
    for n in range(args.runs):
        # Alternating which goes first; both after warm runs on the same ledger tip (a new
        # tip's files tree is new to the stat cache's listing, whichever code reads it).
        pair = [(still, new_env), (before, old_env)]
        for times, env in pair if n % 2 == 0 else pair[::-1]:
            times.append(_status(repo, env)[0])
        _commit_an_edit(repo, targets[0], int(time.time() * 1000) % 10**9 + n)
        took, said = _status(repo, new_env)
        moved.append(took)
        recorded += "git committed" in said
        _status(repo, new_env)  # warm, untimed, for the next pair
        _status(repo, old_env)
    result = {
        "files": args.files,
        "runs": args.runs,
        "still_median_s": statistics.median(still),
        "moved_median_s": statistics.median(moved),
        "before_median_s": statistics.median(before),
        "moved_over_still": statistics.median(moved) / statistics.median(still),
        "still_over_before": statistics.median(still) / statistics.median(before),
        "moves_recorded": recorded,
        "still": still,
        "moved": moved,
        "before": before,
    }
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
