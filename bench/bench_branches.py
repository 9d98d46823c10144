#!/usr/bin/env python3
"""Branch benchmark for `tm` (#17): what the first command on a branch costs.

A branch with no State Map gets one from the first tm command run on it (here `tm status`).
Builds a synthetic repository in a temporary directory (never inside the project; the
generator of bench_hook.py, N small Python modules), `tm init -q`, then a branch `old` at
that commit, and on main K modules edited, committed and adopted. Measured, interleaved over
--runs rounds after a warm-up (medians):

  status   `tm status` on main, whose ledger exists (the baseline, same process tree)
  new      `git switch -c` to a new branch at main's commit (untimed), then `tm status`:
           the branch starts from main's ledger tip, nothing to take
  old      `git switch old` after its ledger ref was deleted (untimed), then `tm status`:
           the branch starts from main's ledger at the episode recorded at its commit (the
           adopt, made before main committed it) and takes back the K files git changed

Targets: new / status <= 1.5 (starting a branch costs little more than the status it runs
with); old / status <= 3 with K = 50 (taking K files costs about their parse, like an adopt).

Usage:
  .venv/bin/python bench/bench_branches.py [--files 5000] [--changed 50] [--runs 7]
      [--out results.json] [--workdir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hook import (  # a sibling script, not a package
    TM,
    build_repo,
    configure_env,
    edited_text,
    log,
    med,
    must,
    rel_path,
    run,
)

TARGET_NEW = 1.5
TARGET_OLD = 3.0


def prepare(repo: Path, n_files: int, changed: int) -> None:
    build_repo(repo, n_files)
    must([TM, "init", "-q"], repo)
    must(["git", "branch", "old"], repo)
    step = max(1, n_files // changed)
    paths = []
    for k in range(changed):
        i = k * step
        (repo / rel_path(i)).write_bytes(edited_text(i))
        paths.append(rel_path(i))
    # Adopted before the commit, as after `tm accept`: the episode is recorded at the commit
    # `old` is at, so `old` starts from it and must take the K files back.
    must([TM, "adopt", *paths], repo)
    must(["git", "commit", "-qam", "main edits"], repo)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--changed", type=int, default=50)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--workdir", help="build the repository here (default: a new temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary repository")
    args = ap.parse_args()
    base = Path(args.workdir or tempfile.mkdtemp(prefix="tm-bench-branches-"))
    configure_env(base, inherit=False)
    repo = base / "repo"
    try:
        log(f"building {args.files} files, {args.changed} changed on main")
        prepare(repo, args.files, args.changed)
        times: dict[str, list[float]] = {"status": [], "new": [], "old": []}
        for n in range(args.runs + 1):  # round 0 warms caches and is dropped
            status = must([TM, "status"], repo)
            must(["git", "switch", "-q", "-c", f"new{n}"], repo)
            new = run([TM, "status"], repo)
            assert new.rc == 0 and b"started from main's" in new.stderr, new.stderr
            must(["git", "switch", "-q", "main"], repo)
            must(["git", "update-ref", "-d", "refs/tinymem/heads/old"], repo)
            must(["git", "switch", "-q", "old"], repo)
            old = run([TM, "status", "--check"], repo)
            assert old.rc == 0 and b"took" in old.stderr, old.stderr
            must(["git", "switch", "-q", "main"], repo)
            if n:
                times["status"].append(status.seconds)
                times["new"].append(new.seconds)
                times["old"].append(old.seconds)
        result = {k: med(v) for k, v in times.items()}
        ratios = {"new": result["new"] / result["status"], "old": result["old"] / result["status"]}
        met = {"new": ratios["new"] <= TARGET_NEW, "old": ratios["old"] <= TARGET_OLD}
        doc = {
            "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "machine": platform.platform(),
            "files": args.files,
            "changed": args.changed,
            "runs": args.runs,
            "seconds": result,
            "ratios": ratios,
            "met": met,
        }
        print(
            f"tm status {result['status']:.3f} s; first command on a new branch"
            f" {result['new']:.3f} s ({ratios['new']:.2f}x, target <= {TARGET_NEW}:"
            f" {'met' if met['new'] else 'MISSED'}); on an old branch taking {args.changed}"
            f" files {result['old']:.3f} s ({ratios['old']:.2f}x, target <= {TARGET_OLD}:"
            f" {'met' if met['old'] else 'MISSED'})"
        )
        if args.out:
            Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
