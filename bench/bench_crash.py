#!/usr/bin/env python3
r"""Crash trials: `kill -9` at random moments during `tm accept` of a 3-file proposal and
during `tm adopt --all` of 3 hand-edited files.

Seeds (built once, in a temporary directory outside the project): a repository with three
Python files committed and `tm init`; for accept, `tm ask` against the loopback model server
of tests/modelserver.py turned a scripted reply into three pending proposals (one per file);
for adopt, the three files are edited by hand (STALE). Each trial runs on a fresh `cp -a`
of its seed: the command is started, killed with SIGKILL after a delay drawn uniformly from
[0, 1.2 × the command's median uninterrupted time] (measured first, 5 runs) for even trials
and from [0.5 ×, 1.2 ×] for odd ones (start-up is most of a run; the writes come late), then
checked:

  torn        a file that is neither entirely its text before nor entirely its text after
  temp        a tm temporary file among the work tree's files (`git status --ignored -uall`)
  unrecorded  after the next tm command (`tm status`, which recovers an interrupted accept):
              accept: a file whose text is not what the State Map records; adopt: some of
              the three hand edits recorded and not the others (`tm status --json`)
  rebuild     `tm rebuild` fails
  fsck        `git fsck --strict --no-dangling` fails
  leftover    an intent record still there after the next command

and classified: killed before any change (all before), after (all after), or recovered (the
next command said it rolled back or closed an accept). Target: 0 in every failure column.

Usage:
  .venv/bin/python bench/bench_crash.py [--trials 100] [--seed 1] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from tests.modelserver import ModelServer  # noqa: E402

FILES = {
    "a.py": "def alpha():\n    return 1\n"
    + "".join(f"\n\ndef a{i}():\n    return {i}\n" for i in range(40)),
    "pkg/b.py": "def beta():\n    return 2\n"
    + "".join(f"\n\ndef b{i}():\n    return {i}\n" for i in range(40)),
    "pkg/c.py": "def gamma():\n    return 3\n"
    + "".join(f"\n\ndef c{i}():\n    return {i}\n" for i in range(40)),
}
CHANGED = {"a.py": "alpha", "pkg/b.py": "beta", "pkg/c.py": "gamma"}


def _after(text: str, name: str) -> str:
    return text.replace(f"def {name}():\n    return", f"def {name}():\n    return 10 *", 1)


AFTER = {p: _after(t, CHANGED[p]) for p, t in FILES.items()}
HAND = {p: t + "\n\nHAND = 1\n" for p, t in FILES.items()}


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="Bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
        OPENAI_API_KEY="x",
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _tm(env: dict[str, str]) -> list[str]:
    return [sys.executable, "-m", "tinymem"]


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _seed(where: Path, env: dict[str, str], kind: str, server: ModelServer) -> Path:
    repo = where / f"seed-{kind}"
    repo.mkdir(parents=True)
    for path, text in FILES.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    init = ["git", "init", "-q", "-b", "main"]
    for argv in (init, ["git", "add", "."], ["git", "commit", "-qm", "base"]):
        _run(argv, repo, env)
    assert _run([*_tm(env), "init", "-q"], repo, env).returncode == 0
    if kind == "accept":
        blocks = []
        for path in CHANGED:
            head = AFTER[path].split("\n\n\n", 1)[0]  # the changed function alone
            blocks.append(f"```python path={path}\n{head}\n```\n")
        reply = "".join(blocks)
        server.add(reply)
        argv = [
            *_tm(env),
            "ask",
            "multiply",
            "-m",
            "openai/test",
            "--api-base",
            server.openai_base,
            "--json",
        ]
        proc = _run(argv, repo, env)
        assert proc.returncode == 0, proc.stderr
        props = json.loads(proc.stdout)["proposals"]
        assert len(props) == 3 and all(p["gates"]["A"] == "pass" for p in props), props
    else:
        for path, text in HAND.items():
            (repo / path).write_text(text)
    return repo


def _command(kind: str) -> list[str]:
    return ["accept", "--all"] if kind == "accept" else ["adopt", "--all"]


def _timed(seed: Path, where: Path, env: dict[str, str], kind: str) -> float:
    times = []
    for i in range(5):
        repo = where / f"time-{kind}-{i}"
        shutil.copytree(seed, repo, symlinks=True)
        started = time.perf_counter()
        proc = _run([*_tm(env), *_command(kind)], repo, env)
        times.append(time.perf_counter() - started)
        assert proc.returncode == 0, proc.stderr
        after = AFTER if kind == "accept" else HAND
        assert all((repo / p).read_text() == t for p, t in after.items())
        shutil.rmtree(repo)
    return statistics.median(times)


def _trial(seed: Path, repo: Path, env: dict[str, str], kind: str, delay: float) -> dict[str, Any]:
    shutil.copytree(seed, repo, symlinks=True)
    before = {p: (repo / p).read_text() for p in FILES}
    after = AFTER if kind == "accept" else HAND
    proc = subprocess.Popen(
        [*_tm(env), *_command(kind)],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    code = proc.wait()
    out: dict[str, Any] = {"delay": round(delay, 4), "exit": code}
    texts = {p: (repo / p).read_text() for p in FILES}
    out["torn"] = sum(1 for p in FILES if texts[p] not in (before[p], after[p]))
    listed = _run(["git", "status", "--porcelain", "--ignored", "-uall"], repo, env).stdout
    out["temp"] = listed.count("tm-tmp")
    nxt = _run([*_tm(env), "status"], repo, env)
    out["recovered"] = "interrupted tm accept" in nxt.stderr
    status = json.loads(_run([*_tm(env), "status", "--json"], repo, env).stdout)
    stale = {f["path"] for f in status["files"]}
    if kind == "accept":
        # Every file the State Map records as on disk: no model text without a record.
        out["unrecorded"] = len(stale)
    else:
        # All or nothing: the hand edits are recorded for every file, or for none.
        out["unrecorded"] = int(stale not in (set(), set(FILES)))
    out["leftover"] = int((repo / ".git" / "tinymem" / "accept-intent.json").exists())
    out["rebuild"] = int(_run([*_tm(env), "rebuild"], repo, env).returncode != 0)
    out["fsck"] = int(_run(["git", "fsck", "--strict", "--no-dangling"], repo, env).returncode != 0)
    now = {p: (repo / p).read_text() for p in FILES}
    if kind == "accept":
        out["state"] = "before" if now == before else "after" if now == after else "mixed"
    else:  # adopt changes no file: before/after is whether the ledger took the edits
        out["state"] = "after" if not stale else "before" if stale == set(FILES) else "mixed"
    out["torn"] += int(out["state"] == "mixed")
    shutil.rmtree(repo)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_crash.json")
    ap.add_argument("--kinds", default="accept,adopt")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    where = Path(tempfile.mkdtemp(prefix="tm-crash-"))
    env = _env(where / "home")
    (where / "home").mkdir()
    report: dict[str, Any] = {"trials": args.trials, "seed": args.seed, "kinds": {}}
    try:
        with ModelServer() as server:
            for kind in args.kinds.split(","):
                seed = _seed(where, env, kind, server)
                median = _timed(seed, where, env, kind)
                rows = []
                for i in range(args.trials):
                    # Half over the whole run, half over its second half, where the
                    # writes and the ledger commit happen (start-up is most of a run).
                    low = 0.0 if i % 2 == 0 else 0.5 * median
                    delay = rng.uniform(low, 1.2 * median)
                    rows.append(_trial(seed, where / f"t-{kind}-{i}", env, kind, delay))
                totals = {
                    k: sum(int(r[k]) for r in rows)
                    for k in (
                        "torn",
                        "temp",
                        "unrecorded",
                        "rebuild",
                        "fsck",
                        "leftover",
                        "recovered",
                    )
                }
                states = {
                    s: sum(1 for r in rows if r["state"] == s) for s in ("before", "after", "mixed")
                }
                report["kinds"][kind] = {
                    "median_seconds": round(median, 3),
                    "totals": totals,
                    "states": states,
                    "trials": rows,
                }
                print(f"{kind}: median {median:.3f} s; {states}; {totals}", flush=True)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    failures = sum(
        v["totals"][k]
        for v in report["kinds"].values()
        for k in ("torn", "temp", "unrecorded", "rebuild", "fsck", "leftover")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
