#!/usr/bin/env python3
"""Hydration: time and what it shows, the relevance index against the code before it (#29).

Corpora (copies, committed to fresh git repositories in a temporary directory, `tm init -q`):
requests, click and mypy (with its vendored typeshed: ~950 .py/.pyi files) from the venv's
site-packages, flask from tests/data/realcode, and sqlalchemy when it is installed in the venv
(not a dependency: `pip install sqlalchemy==2.0.44`; left out by default when absent).
The code before the index is taken from git (`git archive BASE tinymem`, default a31d1aa)
into the temporary directory; both run in fresh processes (`python -c` with PYTHONPATH), one
per prompt, so each pays what a `tm ask --dry-run` pays: opening the repository, ETV,
hydration.

Per prompt and code: seconds of `prepare()` (ETV + hydration), of `verify()` (ETV alone) in
the same process, the prompt tokens, and whether each target entity is shown IN FULL (its key
hydrated, or a container of it). The new code runs twice per prompt: once after deleting the
index file (cold: the index is built) and once with it (warm, what every later prompt pays).
The base's code runs twice too and its second run counts (warm, when the base has the index:
`--base main`).

Beside them, per corpus in the same run: `tm status` (this checkout, a real process, the median
of 5) and, per prompt, `tm ask PROMPT --dry-run` as a real process (this checkout, warm index),
for issue 29's "hydration <= 3x tm status".

`--synth N` measures time only, on the synthetic repository of N files bench_foundation.py
generates (its generator; `tm init -q` timed), with SYNTH_PROMPTS: the first prompt once cold
(index deleted), then --runs rounds, interleaved: `prepare()` in a fresh process (warm), and
the processes `tm status` and `tm ask --dry-run PROMPT`. Issue 29's target: hydration <= 3x
`tm status`, read as ask --dry-run / status (both whole processes) and prepare / status.

Usage:
  .venv/bin/python bench/bench_hydrate.py [--base a31d1aa] [--corpora mypy ...]
      [--out bench/results/bench_hydrate.json]
  .venv/bin/python bench/bench_hydrate.py --synth 50000 [--runs 5] [--repo DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
SITE = Path(sysconfig.get_paths()["purelib"])
REALCODE = PROJECT / "tests" / "data" / "realcode"

CORPORA = {
    "requests": SITE / "requests",
    "click": SITE / "click",
    "flask": REALCODE / "flask",
    "mypy": SITE / "mypy",
    # Not a dependency of tinymem: `.venv/bin/pip install sqlalchemy==2.0.44` to measure it.
    "sqlalchemy": SITE / "sqlalchemy",
}

# (corpus, prompt, targets, named): named prompts give the target's name, described ones don't.
TASKS: list[tuple[str, str, list[str], bool]] = [
    (
        "requests",
        "In `Session.request`, log the method and the url before sending",
        ["requests/sessions.py::Session.request"],
        True,
    ),
    (
        "requests",
        "make get_netrc_auth ignore a netrc file that cannot be parsed",
        ["requests/utils.py::get_netrc_auth"],
        True,
    ),
    (
        "requests",
        "when a redirect goes to a different host, strip the authorization header "
        "only if the scheme changed too",
        ["requests/sessions.py::SessionRedirectMixin.should_strip_auth"],
        False,
    ),
    (
        "requests",
        "the case-insensitive dict should remember the casing of the most recently set key",
        ["requests/structures.py::CaseInsensitiveDict.__setitem__"],
        False,
    ),
    (
        "click",
        "make `echo` flush the stream even when the message is empty",
        ["click/utils.py::echo"],
        True,
    ),
    (
        "click",
        "Context.invoke should fill in default values for parameters the callback was not given",
        ["click/core.py::Context.invoke#3"],
        True,
    ),
    (
        "click",
        "the `command` decorator should reject a name that is not a string",
        ["click/decorators.py::command#5"],
        True,
    ),
    (
        "click",
        "the progress bar's remaining time should show days when the estimate is over 24 hours",
        ["click/_termui_impl.py::ProgressBar.format_eta"],
        False,
    ),
    (
        "flask",
        "`Flask.make_response` should accept a tuple of body and a headers dict",
        ["flask/src/flask/app.py::Flask.make_response"],
        True,
    ),
    (
        "flask",
        "when an unhandled exception happens during a request, log it before the 500 "
        "response is returned",
        ["flask/src/flask/app.py::Flask.handle_exception"],
        False,
    ),
    (
        "mypy",
        "make Errors.is_errors return early when there are none",
        ["mypy/errors.py::Errors.is_errors"],
        True,
    ),
    (
        "mypy",
        "check_return_stmt should report a return with a value in a generator that returns None",
        ["mypy/checker.py::TypeChecker.check_return_stmt"],
        True,
    ),
    (
        "mypy",
        "the error for using the result of a function that does not return a value "
        "should name the function",
        ["mypy/messages.py::MessageBuilder.does_not_return_value"],
        False,
    ),
    # sqlalchemy 2.0.44: overload sets whose implementation is the third definition.
    (
        "sqlalchemy",
        "create_engine should raise a clear error when pool_size is negative",
        ["sqlalchemy/engine/create.py::create_engine#3"],
        True,
    ),
    (
        "sqlalchemy",
        "`Connection.execute` should name the type of an object that is not executable",
        ["sqlalchemy/engine/base.py::Connection.execute#3"],
        True,
    ),
    (
        "sqlalchemy",
        "when the queue pool has no connection left and the wait times out, the error should "
        "say how many connections are checked out",
        ["sqlalchemy/pool/impl.py::QueuePool._do_get"],
        False,
    ),
    (
        "sqlalchemy",
        "when a database URL is turned into a string the password should be masked unless "
        "the caller asks for it",
        ["sqlalchemy/engine/url.py::URL.render_as_string"],
        False,
    ),
]

WORKER = r"""
import json, sys, time
t0 = time.perf_counter()
from tinymem.ask import AskOptions, prepare
from tinymem.repository import open_repo
from tinymem.ledger import current
from tinymem.etv import verify
import tinymem
repo = open_repo(sys.argv[1])
t1 = time.perf_counter()
prep = prepare(repo, AskOptions(prompt=sys.argv[2]))
t2 = time.perf_counter()
repo = open_repo(sys.argv[1])
t3 = time.perf_counter()
verify(repo, current(repo))
t4 = time.perf_counter()
h = prep.hydration
print(json.dumps({"code": tinymem.__file__, "prepare": t2 - t1, "etv": t4 - t3,
    "hydrated": [x["entity"] for x in h.hydrated], "mapped": len(h.mapped),
    "tokens": h.tokens, "budget": h.budget}))
"""


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _corpus(root: Path, name: str, src: Path) -> Path:
    repo = root / name
    dest = repo / name
    shutil.copytree(
        src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "py.typed")
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "corpus")
    tm = PROJECT / ".venv" / "bin" / "tm"
    subprocess.run([str(tm), "init", "-q"], cwd=repo, check=True, capture_output=True)
    return repo


def _run(code: Path | None, repo: Path, prompt: str) -> dict[str, Any]:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    out = subprocess.run(
        [sys.executable, "-c", WORKER, str(repo), prompt],
        env=env,
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


SYNTH_PROMPTS = [  # the synthetic names are two or three of bench_foundation.WORDS
    "explain how the session token cache decides when to retry",
    "make the batch queue worker skip an empty chunk",
]


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def synth(n_files: int, runs: int, out: str, kept: Path | None = None) -> None:
    """Hydration against `tm status` on bench_foundation's synthetic repository (see --help)."""
    sys.path.insert(0, str(HERE))
    from bench_foundation import build_synthetic

    root = Path(tempfile.mkdtemp(prefix="bench-hydrate-synth-"))
    tm = str(PROJECT / ".venv" / "bin" / "tm")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")  # bytecode cached, as installed
    try:
        t0 = time.perf_counter()
        repo = kept.resolve() if kept is not None else build_synthetic(root, n_files)
        built = time.perf_counter() - t0
        init = float("nan") if kept is not None else _timed([tm, "init", "-q"], repo, env)
        print(f"built {n_files} files in {built:.0f} s, tm init {init:.1f} s", flush=True)
        result: dict[str, Any] = {"files": n_files, "tm_init_seconds": init, "prompts": []}
        for i, prompt in enumerate(SYNTH_PROMPTS):
            row: dict[str, Any] = {"prompt": prompt}
            if i == 0:
                index = repo / ".git" / "tinymem" / "relevance.sqlite"
                for suffix in ("", "-wal", "-shm"):
                    Path(str(index) + suffix).unlink(missing_ok=True)
                row["cold"] = _run(None, repo, prompt)["prepare"]
                row["index_mb"] = round(index.stat().st_size / 1e6, 1)
            times: dict[str, list[float]] = {"prepare": [], "etv": [], "status": [], "ask": []}
            for _ in range(runs):
                warm = _run(None, repo, prompt)
                times["prepare"].append(warm["prepare"])
                times["etv"].append(warm["etv"])
                times["status"].append(_timed([tm, "status"], repo, env))
                times["ask"].append(_timed([tm, "ask", "--dry-run", prompt], repo, env))
            row.update({k: statistics.median(v) for k, v in times.items()})
            row["tokens"] = warm["tokens"]
            row["ask_vs_status"] = row["ask"] / row["status"]
            row["prepare_vs_status"] = row["prepare"] / row["status"]
            row["ask_vs_status_paired"] = statistics.median(
                a / s for a, s in zip(times["ask"], times["status"], strict=True)
            )
            result["prompts"].append(row)
            print(json.dumps(row, indent=1), flush=True)
        Path(out).write_text(json.dumps(result, indent=1) + "\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


TM = PROJECT / ".venv" / "bin" / "tm"


def _seconds(repo: Path, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([str(TM), *args], cwd=repo, check=True, capture_output=True)
    return time.perf_counter() - start


def _in_full(target: str, hydrated: list[str]) -> bool:
    path, _, symbol = target.partition("::")
    for key in hydrated:
        p, _, s = key.partition("::")
        if p == path and (s == symbol or symbol.startswith(s + ".") or s == "@file"):
            return True
    return False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="a31d1aa")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_hydrate.json"))
    ap.add_argument("--synth", type=int, default=0, help="bench_foundation's N-file repository")
    ap.add_argument("--runs", type=int, default=5, help="with --synth: rounds per prompt")
    present = [name for name, src in CORPORA.items() if src.is_dir()]
    ap.add_argument("--corpora", nargs="+", default=present, choices=list(CORPORA))
    ap.add_argument("--repo", type=Path, help="with --synth: an initialised one of that size")
    args = ap.parse_args()
    if args.synth:
        synth(args.synth, args.runs, args.out, args.repo)
        return
    root = Path(tempfile.mkdtemp(prefix="bench-hydrate-"))
    try:
        old = root / "old"
        old.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.base, "tinymem"], cwd=PROJECT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        repos = {name: _corpus(root, name, CORPORA[name]) for name in args.corpora}
        rows: list[dict[str, Any]] = []
        for corpus, prompt, targets, named in TASKS:
            if corpus not in repos:
                continue
            repo = repos[corpus]
            _run(old, repo, prompt)  # a base with the index builds it here (cold)
            before = _run(old, repo, prompt)
            assert before["code"].startswith(str(old)), before["code"]
            index = repo / ".git" / "tinymem" / "relevance.sqlite"
            for suffix in ("", "-wal", "-shm"):
                Path(str(index) + suffix).unlink(missing_ok=True)
            cold = _run(None, repo, prompt)
            warm = _run(None, repo, prompt)
            assert warm["code"].startswith(str(PROJECT)), warm["code"]
            dry_run = _seconds(repo, "ask", prompt, "--dry-run")
            row = {
                "corpus": corpus,
                "prompt": prompt,
                "named": named,
                "targets": targets,
                "old": {**before, "full": [_in_full(t, before["hydrated"]) for t in targets]},
                "new_cold": {k: cold[k] for k in ("prepare", "etv")},
                "new": {**warm, "full": [_in_full(t, warm["hydrated"]) for t in targets]},
                "dry_run_process": dry_run,
            }
            rows.append(row)
            print(
                f"{corpus:8} {'N' if named else 'D'} old {row['old']['full']} "
                f"{before['tokens']:5}t {before['prepare']:.3f}s (etv {before['etv']:.3f}) | "
                f"new {row['new']['full']} {warm['tokens']:5}t {warm['prepare']:.3f}s "
                f"(etv {warm['etv']:.3f}, cold {cold['prepare']:.3f}s) "
                f"dry-run {dry_run:.2f}s  {prompt[:50]}",
                flush=True,
            )
        summary: dict[str, Any] = {}
        for side in ("old", "new"):
            summary[side] = {
                "named_full": sum(all(r[side]["full"]) for r in rows if r["named"]),
                "described_full": sum(all(r[side]["full"]) for r in rows if not r["named"]),
                "median_tokens": statistics.median(r[side]["tokens"] for r in rows),
            }
        summary["named"] = sum(r["named"] for r in rows)
        summary["described"] = sum(not r["named"] for r in rows)
        for corpus in repos:
            mine = [r for r in rows if r["corpus"] == corpus]
            status = statistics.median(_seconds(repos[corpus], "status") for _ in range(5))
            new_prepare = statistics.median(r["new"]["prepare"] for r in mine)
            dry_run = statistics.median(r["dry_run_process"] for r in mine)
            summary[f"{corpus}_seconds"] = {
                "tm_status_process": status,
                "dry_run_process": dry_run,
                "prepare_over_status": new_prepare / status,
                "dry_run_over_status": dry_run / status,
                "old_prepare": statistics.median(r["old"]["prepare"] for r in mine),
                "new_prepare": statistics.median(r["new"]["prepare"] for r in mine),
                "new_cold_prepare": statistics.median(r["new_cold"]["prepare"] for r in mine),
                "etv": statistics.median(r["new"]["etv"] for r in mine),
            }
        print(json.dumps(summary, indent=1))
        Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
