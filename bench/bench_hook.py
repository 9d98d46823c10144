#!/usr/bin/env python3
"""Pre-commit hook benchmark for `tm`: a 10-file commit on a small and a large repository.

Builds synthetic git repositories in a temporary directory (never inside the project) with
`git fast-import` (one commit), then `git reset --hard`, `tm init -q` and `tm hook install`:
N small Python files (3 functions and a class each, unique contents) in nested directories of
100 files (default sizes: 1,000 and 50,000). In each repository it modifies the body of one
function in 10 tracked files spread over the tree and stages them with `git add`, in two
variants:

  hand     plain hand edits (the hook parses each staged blob and looks for refusals);
  adopted  the same edits after `tm adopt` (each staged blob equals the State Map's snapshot).

Measured, interleaved over both repositories after warm-up (medians of --runs):

  version   `tm --version` (Python start-up and tm's CLI import: the floor)
  hook      `tm hook run pre-commit` (the check itself, what the installed script execs)
  commit    `git commit -q -m bench` with the installed hook, then (untimed)
            `git reset -q --soft HEAD~1`, so the same 10 files are staged again
  noverify  `git commit -q --no-verify -m bench`, reset the same way: git without the hook

Ratios are given two ways: of the medians, and the median of same-round pairs (which cancels
slow drifts of a shared machine's load); a target counts as met only when both are.
Targets (issue 4): hook(largest) / hook(smallest) <= 1.2 and hook / version <= 2 (per
repository and variant).

In-process breakdown (a child interpreter in each repository, no profiler overhead): import
of tinymem.cli (what `tm --version` loads), the extra import of tinymem.hook, the first
check() (with its lazy imports), then medians of check(open_repo()), of open_repo() plus
index.read() alone, and of staged() alone. `python -m cProfile -m tinymem hook run
pre-commit` runs once per variant in the largest repository; the pstats top 20 by cumulative
time is kept in the JSON and printed when a target is missed (or with --profile).

Usage:
  .venv/bin/python bench/bench_hook.py [--sizes 1000,50000] [--runs 9] [--out results.json]
      [--workdir DIR] [--keep] [--profile] [--inherit-env]
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
VENV_BIN = Path(sys.executable).parent
TM = str(VENV_BIN / "tm") if (VENV_BIN / "tm").exists() else str(PROJECT / ".venv" / "bin" / "tm")
PYTHON = sys.executable

TARGET_SIZE_RATIO = 1.2  # hook time, largest vs smallest repository
TARGET_VERSION_RATIO = 2.0  # hook time vs `tm --version`
PER_DIR = 100
EDITED = 10


# --------------------------------------------------------------------------- running & timing


@dataclass
class Run:
    seconds: float
    rc: int
    stdout: bytes
    stderr: bytes


CHILD_ENV: dict[str, str] = {}


def configure_env(base: Path, inherit: bool) -> None:
    """An isolated git identity/config; `tm` (the venv's) first on PATH for the hook script.

    Unless `inherit`, tm's Python caches bytecode as on a normal install (in a prefix under
    `base`, keeping the project tree clean): sandboxes often set PYTHONDONTWRITEBYTECODE=1,
    which would make every start compile tm's modules.
    """
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = bench\n\temail = bench@example.invalid\n[init]\n\tdefaultBranch = main\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TM_", "GIT_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        PATH=str(VENV_BIN) + os.pathsep + env.get("PATH", ""),
    )
    if not inherit:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
    CHILD_ENV.clear()
    CHILD_ENV.update(env)


def run(cmd: Sequence[str], cwd: Path, stdin: bytes | None = None) -> Run:
    t0 = time.perf_counter()
    proc = subprocess.run(
        list(cmd),
        cwd=cwd,
        env=CHILD_ENV,
        input=stdin if stdin is not None else b"",
        capture_output=True,
        check=False,
    )
    return Run(time.perf_counter() - t0, proc.returncode, proc.stdout, proc.stderr)


def must(cmd: Sequence[str], cwd: Path, stdin: bytes | None = None) -> Run:
    r = run(cmd, cwd, stdin)
    if r.rc != 0:
        raise SystemExit(
            f"command failed ({r.rc}): {' '.join(cmd)} in {cwd}\n"
            f"{r.stderr.decode(errors='replace')[-2000:]}"
        )
    return r


def med(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- synthetic repo


def module_text(i: int) -> bytes:
    return (
        f'"""Generated module {i} for the tinymem hook benchmark."""\n'
        "\n"
        "import os\n"
        "\n"
        "\n"
        f"def load_{i}(path):\n"
        "    data = os.path.basename(path)\n"
        f'    return data + "{i}"\n'
        "\n"
        "\n"
        f"def total_{i}(xs):\n"
        "    acc = 0\n"
        "    for x in xs:\n"
        f"        acc += x * {i % 97}\n"
        "    return acc\n"
        "\n"
        "\n"
        f"class Store{i}:\n"
        "    def get(self, key):\n"
        f"        return (key, {i})\n"
        "\n"
        "    def put(self, key, value):\n"
        "        return {key: value}\n"
    ).encode()


def edited_text(i: int) -> bytes:
    """The same module with one function body changed (a plain hand edit)."""
    old = f"        acc += x * {i % 97}\n".encode()
    new = f"        acc += x * {i % 97} + 1  # edited\n".encode()
    text = module_text(i)
    assert old in text
    return text.replace(old, new)


def rel_path(i: int) -> str:
    d = i // PER_DIR
    group, leaf = divmod(d, 20)
    return f"pkg/g{group:03d}/d{leaf:02d}/mod_{i:06d}.py"


def build_repo(path: Path, n_files: int) -> None:
    """One commit of `n_files` modules through git fast-import, then checkout."""
    path.mkdir(parents=True)
    must(["git", "init", "-q", "-b", "main"], path)
    buf = io.BytesIO()
    for i in range(n_files):
        data = module_text(i)
        buf.write(b"blob\nmark :%d\ndata %d\n" % (i + 1, len(data)))
        buf.write(data)
        buf.write(b"\n")
    msg = b"import"
    buf.write(b"commit refs/heads/main\n")
    buf.write(b"committer bench <bench@example.invalid> 1700000000 +0000\n")
    buf.write(b"data %d\n%s\n" % (len(msg), msg))
    for i in range(n_files):
        buf.write(b"M 100644 :%d %s\n" % (i + 1, rel_path(i).encode()))
    buf.write(b"\n")
    must(["git", "fast-import", "--quiet"], path, stdin=buf.getvalue())
    must(["git", "reset", "-q", "--hard"], path)
    must(["git", "repack", "-adq"], path)


def edited_indices(n_files: int) -> list[int]:
    """10 files spread over the whole tree (different directories)."""
    step = n_files // EDITED
    return [k * step + 37 % step for k in range(EDITED)]


def warm_page_cache(repo: Path) -> None:
    for dirpath, _dirs, files in os.walk(repo):
        for name in files:
            try:
                with open(os.path.join(dirpath, name), "rb") as f:
                    while f.read(1 << 20):
                        pass
            except OSError:
                pass


# --------------------------------------------------------------------------- measurements


@dataclass
class Bench:
    label: str
    n_files: int
    path: Path
    edited: list[str]


def prepare(base: Path, n_files: int) -> Bench:
    label = f"{n_files // 1000}k" if n_files % 1000 == 0 else str(n_files)
    path = base / f"repo-{label}"
    t0 = time.perf_counter()
    build_repo(path, n_files)
    log(f"{label}: built {n_files} files in {time.perf_counter() - t0:.1f}s; tm init -q ...")
    r = must([TM, "init", "-q"], path)
    log(f"{label}: tm init {r.seconds:.1f}s")
    must([TM, "hook", "install"], path)
    idx = edited_indices(n_files)
    edited = [rel_path(i) for i in idx]
    for i, p in zip(idx, edited, strict=True):
        (path / p).write_bytes(edited_text(i))
    must(["git", "add", "--", *edited], path)
    staged = must(["git", "diff", "--cached", "--name-only"], path).stdout.decode().split()
    if sorted(staged) != sorted(edited):
        raise SystemExit(f"{label}: staged {staged}, expected {edited}")
    warm_page_cache(path)
    return Bench(label, n_files, path, edited)


def commit_and_reset(b: Bench, *extra: str) -> Run:
    r = run(["git", "commit", "-q", *extra, "-m", "bench"], b.path)
    if r.rc == 0:
        must(["git", "reset", "-q", "--soft", "HEAD~1"], b.path)
    return r


def measure(benches: list[Bench], runs: int, warm: int, variant: str) -> dict[str, Any]:
    """Interleaved over repositories and commands; returns seconds per repo per command."""
    cmds: dict[str, Any] = {
        "version": lambda b: run([TM, "--version"], b.path),
        "hook": lambda b: run([TM, "hook", "run", "pre-commit"], b.path),
        "commit": lambda b: commit_and_reset(b),
        "noverify": lambda b: commit_and_reset(b, "--no-verify"),
    }
    out: dict[str, Any] = {b.label: {name: [] for name in cmds} for b in benches}
    errors: list[str] = []
    for i in range(warm + runs):
        for b in benches:
            for name, fn in cmds.items():
                r = fn(b)
                if r.rc != 0:
                    errors.append(
                        f"{variant} {b.label} {name} exited {r.rc}: "
                        + r.stderr.decode(errors="replace")[-600:]
                    )
                    continue
                if name == "hook":
                    msg = r.stderr.decode(errors="replace")
                    hints = sum(1 for p in b.edited if f"tm adopt {p}" in msg)
                    expect = EDITED if variant == "hand" else 0
                    if hints != expect:
                        errors.append(
                            f"{variant} {b.label}: hook named {hints} hand-edited files,"
                            f" expected {expect}: {msg[:400]}"
                        )
                if i >= warm:
                    out[b.label][name].append(r.seconds)
        if i >= warm:
            log(
                f"{variant} run {i - warm + 1}/{runs}: "
                + "  ".join(
                    f"{b.label} hook {out[b.label]['hook'][-1] * 1000:.0f}ms"
                    f" version {out[b.label]['version'][-1] * 1000:.0f}ms"
                    for b in benches
                    if out[b.label]["hook"] and out[b.label]["version"]
                )
            )
    res: dict[str, Any] = {"errors": sorted(set(errors))}
    for b in benches:
        d = out[b.label]
        m = {name: med(xs) for name, xs in d.items()}
        res[b.label] = {
            "samples_s": d,
            "median_s": m,
            "hook_vs_version": m["hook"] / m["version"],
            # Same-round pairs cancel slow drifts of a shared machine's load.
            "hook_vs_version_paired": med(
                [h / v for h, v in zip(d["hook"], d["version"], strict=False)]
            ),
            "commit_minus_noverify_s": m["commit"] - m["noverify"],
        }
    small, large = benches[0].label, benches[-1].label
    res["hook_large_vs_small"] = res[large]["median_s"]["hook"] / res[small]["median_s"]["hook"]
    res["hook_large_vs_small_paired"] = med(
        [h / s for h, s in zip(out[large]["hook"], out[small]["hook"], strict=False)]
    )
    res["commit_large_vs_small"] = (
        res[large]["median_s"]["commit"] / res[small]["median_s"]["commit"]
    )
    return res


# Runs in a child interpreter inside a repository: where the hook's time goes, without
# cProfile's overhead. argv: runs.
INPROC = r"""
import json, statistics, sys, time
t0 = time.perf_counter()
import tinymem.cli  # what `tm --version` imports
t1 = time.perf_counter()
import tinymem.hook as hook
from tinymem.repository import open_repo
t2 = time.perf_counter()
first = hook.check(open_repo())  # includes lazy imports (symbol extraction)
t3 = time.perf_counter()
checks, staged, index = [], [], []
for _ in range(int(sys.argv[1])):
    a = time.perf_counter()
    hook.check(open_repo())
    b = time.perf_counter()
    r = open_repo()
    r.git.index.read()
    c = time.perf_counter()
    hook.staged(open_repo())
    d = time.perf_counter()
    checks.append(b - a)
    index.append(c - b)
    staged.append(d - c)
print(json.dumps({
    "import_cli_s": t1 - t0,
    "import_hook_extra_s": t2 - t1,
    "first_check_s": t3 - t2,
    "check_s": statistics.median(checks),
    "open_repo_and_index_read_s": statistics.median(index),
    "staged_s": statistics.median(staged),
    "checked": len(first.checked),
}))
"""


def inprocess(b: Bench, runs: int) -> dict[str, Any]:
    r = must([PYTHON, "-c", INPROC, str(runs)], b.path)
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def profile(b: Bench, tag: str, base: Path) -> str:
    prof = base / f"hook-{b.label}-{tag}.prof"
    must(
        [PYTHON, "-m", "cProfile", "-o", str(prof), "-m", "tinymem", "hook", "run", "pre-commit"],
        b.path,
    )
    s = io.StringIO()
    st = pstats.Stats(str(prof), stream=s)
    st.sort_stats("cumulative").print_stats(20)
    st.sort_stats("cumulative").print_stats(r"tinymem|pygit2", 20)
    st.sort_stats("tottime").print_stats(10)
    return s.getvalue()


def fmt_ms(x: float) -> str:
    return f"{x * 1000:.0f}"


def report(res: dict[str, Any], benches: list[Bench]) -> str:
    lines = []
    for variant in ("hand", "adopted"):
        v = res[variant]
        lines.append(f"\n{variant}: 10 staged files (medians, ms)")
        lines.append(
            f"{'repo':>6} {'files':>7} {'version':>8} {'hook':>7} {'hook/ver':>9}"
            f" {'paired':>7} {'commit':>7} {'no-verify':>9} {'commit-nv':>9}"
        )
        for b in benches:
            m = v[b.label]["median_s"]
            lines.append(
                f"{b.label:>6} {b.n_files:>7} {fmt_ms(m['version']):>8} {fmt_ms(m['hook']):>7}"
                f" {v[b.label]['hook_vs_version']:>9.2f}"
                f" {v[b.label]['hook_vs_version_paired']:>7.2f} {fmt_ms(m['commit']):>7}"
                f" {fmt_ms(m['noverify']):>9} {fmt_ms(v[b.label]['commit_minus_noverify_s']):>9}"
            )
        lines.append(
            f"hook {benches[-1].label}/{benches[0].label} = {v['hook_large_vs_small']:.2f}"
            f" (paired {v['hook_large_vs_small_paired']:.2f}; target <= {TARGET_SIZE_RATIO});"
            f" commit {benches[-1].label}/{benches[0].label} = {v['commit_large_vs_small']:.2f}"
        )
        lines.append(
            "in-process (ms): import tinymem.cli | + import tinymem.hook | first check"
            " | check (median) | open_repo + index.read | staged()"
        )
        for b in benches:
            ip = v[b.label]["inprocess"]
            lines.append(
                f"{b.label:>6}: {fmt_ms(ip['import_cli_s'])} | {fmt_ms(ip['import_hook_extra_s'])}"
                f" | {fmt_ms(ip['first_check_s'])} | {ip['check_s'] * 1000:.1f}"
                f" | {ip['open_repo_and_index_read_s'] * 1000:.1f} | {ip['staged_s'] * 1000:.1f}"
            )
        for e in v["errors"]:
            lines.append(f"ERROR {e}")
    lines.append("")
    for name, ok in res["targets"].items():
        lines.append(f"target {name}: {'met' if ok else 'MISSED'}")
    return "\n".join(lines)


# The installed script before issue 29 (two interpreter starts: `-c "import tinymem"`, then
# exec), kept here to measure the one-process script against it in the same run.
OLD_HOOK_V2 = """#!/bin/sh
# tinymem-hook v2: refuses commits that would overwrite newer truth with stale content.
hookdir=$(dirname "$0")
TM_PYTHON=__PYTHON__
if [ -x "$hookdir/pre-commit.pre-tinymem" ]; then
  "$hookdir/pre-commit.pre-tinymem" "$@" || exit $?
fi
if [ -n "$TM_PYTHON" ] && "$TM_PYTHON" -c "import tinymem" >/dev/null 2>&1; then
  exec "$TM_PYTHON" -m tinymem hook run pre-commit
fi
if command -v tm >/dev/null 2>&1; then
  exec tm hook run pre-commit
fi
if command -v python3 >/dev/null 2>&1 && python3 -c "import tinymem" >/dev/null 2>&1; then
  exec python3 -m tinymem hook run pre-commit
fi
echo "tinymem: commit refused: the stale-overwrite check cannot run" >&2
exit 1
"""


def older_artifact(b: Bench) -> None:
    """Give the one staged file an older artifact (its edit adopted and committed), then edit
    it again by hand: a file the check looks at more closely (main's code parses it; since
    the texts check it looks for the older text in the staged blob, which holds none)."""
    path = b.edited[0]
    must([TM, "adopt", path], b.path)
    must(["git", "commit", "-q", "--no-verify", "-m", "adopted", "--", path], b.path)
    must([TM, "status"], b.path)  # the ledger sees the commit: no HEAD move left to record
    with (b.path / path).open("ab") as f:
        f.write(b"\n\ndef again():\n    return 2\n")
    must(["git", "add", "--", path], b.path)


def one_file(
    b: Bench, runs: int, warm: int, baseline: str | None, old_script: str = "v2"
) -> dict[str, Any]:
    """A one-file commit (a hand edit) three ways, interleaved: `--no-verify`, the old
    two-process script, the current one (`hook_script`), both recording this Python. With
    `baseline` (a directory holding an older `tinymem/`), the old script runs that code;
    `old_script="current"` runs it through today's script (older code, same script)."""
    sys.path.insert(0, str(PROJECT))
    from tinymem.hook import hook_script

    hook = b.path / ".git" / "hooks" / "pre-commit"
    scripts = {
        "old": OLD_HOOK_V2.replace("__PYTHON__", "'" + PYTHON + "'"),
        "new": hook_script(PYTHON),
    }
    if old_script == "current":
        scripts["old"] = scripts["new"]
    must(["git", "reset", "-q", "HEAD", "--", *b.edited[1:]], b.path)
    times: dict[str, list[float]] = {"noverify": [], "old": [], "new": []}
    for i in range(warm + runs):
        for name in ("noverify", "old", "new"):
            if name != "noverify":
                hook.write_text(scripts[name])
                hook.chmod(0o755)
            if name == "noverify":
                r = commit_and_reset(b, "--no-verify")
            elif name == "old" and baseline:
                saved = dict(CHILD_ENV)
                CHILD_ENV["PYTHONPATH"] = baseline
                try:
                    r = commit_and_reset(b)
                finally:
                    CHILD_ENV.clear()
                    CHILD_ENV.update(saved)
            else:
                r = commit_and_reset(b)
            if r.rc != 0:
                raise SystemExit(f"{name}: commit failed: {r.stderr.decode(errors='replace')}")
            if i >= warm:
                times[name].append(r.seconds)
    hook.write_text(scripts["new"])
    base = med(times["noverify"])
    out: dict[str, Any] = {k: med(v) for k, v in times.items()}
    for name in ("old", "new"):
        out[f"{name}_added"] = out[name] - base
        out[f"{name}_vs_noverify"] = out[name] / base
        out[f"{name}_vs_noverify_paired"] = med(
            [t / n for t, n in zip(times[name], times["noverify"], strict=True)]
        )
    out["new_added_vs_old_added"] = out["new_added"] / out["old_added"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,50000", help="repository sizes, smallest first")
    ap.add_argument("--runs", type=int, default=9, help="measured runs per median")
    ap.add_argument("--warm", type=int, default=2, help="warm-up runs (not measured)")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--workdir", help="build the repositories here (default: a new temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary repositories")
    ap.add_argument(
        "--profile", action="store_true", help="print the profiles even when targets are met"
    )
    ap.add_argument(
        "--one-file",
        action="store_true",
        help="only the one-file commit: old script vs new vs --no-verify (smallest size)",
    )
    ap.add_argument(
        "--baseline",
        help="with --one-file: a directory holding the older tinymem/ the old script runs",
    )
    ap.add_argument(
        "--older-artifact",
        action="store_true",
        help="with --one-file: the staged file has an older (superseded) artifact and a further"
        " hand edit (default: a file tm never changed)",
    )
    ap.add_argument(
        "--old-script",
        choices=("v2", "current"),
        default="v2",
        help="with --one-file: the old side runs the v2 two-process script (default) or"
        " today's script (with --baseline: older code, same script)",
    )
    ap.add_argument(
        "--inherit-env",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE etc. as inherited (default: cache bytecode)",
    )
    args = ap.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if args.workdir:
        base = Path(args.workdir).resolve()
        base.mkdir(parents=True, exist_ok=True)
    else:
        base = Path(tempfile.mkdtemp(prefix="tm-bench-hook."))
    configure_env(base, args.inherit_env)
    log(f"work directory {base}")
    try:
        if args.one_file:
            baseline = str(Path(args.baseline).resolve()) if args.baseline else None
            if args.older_artifact:
                bench1 = prepare(base, sizes[0])
                must(["git", "reset", "-q", "HEAD", "--", *bench1.edited[1:]], bench1.path)
                older_artifact(bench1)
            else:
                bench1 = prepare(base, sizes[0])
            res1 = one_file(bench1, args.runs, args.warm, baseline, args.old_script)
            for k, v in res1.items():
                print(f"{k:28s} {v * 1000:9.1f} ms" if "vs" not in k else f"{k:28s} {v:9.2f}")
            if args.out:
                Path(args.out).write_text(json.dumps(res1, indent=2) + "\n")
            return
        benches = [prepare(base, n) for n in sizes]
        res: dict[str, Any] = {
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "machine": {
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "git": must(["git", "--version"], base).stdout.decode().strip(),
            },
            "tinymem_commit": run(["git", "rev-parse", "HEAD"], PROJECT).stdout.decode().strip(),
            "tinymem_dirty": run(["git", "status", "--porcelain", "--", "tinymem"], PROJECT)
            .stdout.decode()
            .splitlines()[:20],
            "sizes": sizes,
            "runs": args.runs,
            "bytecode_cache": not args.inherit_env,
        }
        res["hand"] = measure(benches, args.runs, args.warm, "hand")
        for b in benches:
            res["hand"][b.label]["inprocess"] = inprocess(b, args.runs)
        # Profiles are cheap: take them always, print them when a target is missed.
        big = benches[-1]
        res["profile"] = {"hand": profile(big, "hand", base)}
        for b in benches:
            must([TM, "adopt", *b.edited], b.path)
            must(["git", "add", "--", *b.edited], b.path)
        res["adopted"] = measure(benches, args.runs, args.warm, "adopted")
        for b in benches:
            res["adopted"][b.label]["inprocess"] = inprocess(b, args.runs)
        res["profile"]["adopted"] = profile(big, "adopted", base)
        targets = {}
        for variant in ("hand", "adopted"):
            v = res[variant]
            # Met only when both the ratio of medians and the median of paired ratios are.
            targets[f"{variant}: hook {benches[-1].label}/{benches[0].label} <= 1.2"] = (
                max(v["hook_large_vs_small"], v["hook_large_vs_small_paired"]) <= TARGET_SIZE_RATIO
            )
            for b in benches:
                targets[f"{variant}: hook/version {b.label} <= 2"] = (
                    max(v[b.label]["hook_vs_version"], v[b.label]["hook_vs_version_paired"])
                    <= TARGET_VERSION_RATIO
                )
        res["targets"] = targets
        text = report(res, benches)
        print(text)
        if args.profile or not all(targets.values()):
            for tag, prof in res["profile"].items():
                print(f"\ncProfile, {benches[-1].label} repository, {tag} variant:\n{prof}")
        if args.out:
            Path(args.out).write_text(json.dumps(res, indent=2) + "\n")
            log(f"wrote {args.out}")
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(base, ignore_errors=True)
        elif args.keep:
            log(f"kept {base}")


if __name__ == "__main__":
    main()
