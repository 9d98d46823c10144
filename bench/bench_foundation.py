#!/usr/bin/env python3
"""Foundation benchmark for `tm`: init, re-index (adopt), status and memory, with baselines.

Builds two repositories in a temporary directory (never inside the project):

  real   a copy of an installed package's source tree that no one here wrote
         (default: the venv's site-packages/litellm, ~3,800 files), committed with git;
  synth  N generated source files (default 50,000; Python, JS, TS, Go, Rust, C, plus some
         Markdown and JSON; 20-80 lines and 2-6 functions/classes/methods each) in nested
         directories of ~100 files, committed with git.

Both are repacked (`git repack -adq`) after the commit, like a fresh clone. Generation is not
timed. On each repository it measures, against baselines taken in the same run:

  init      `tm init -q` wall time (fresh state each run: refs/tinymem/heads/main, .git/tinymem/ and
            every object file tm added are removed between runs) vs `ctags -R -f TMP .`, in
            pairs run side by side (5; the order alternates), ratio of the medians;
  adopt     change one Python function's body, then `tm adopt FILE` (absolute; target 0.3 s),
            with `tm --version` as the floor of Python start-up;
  status    `tm status` vs `git status --porcelain`, on the unmodified tree and with 10 files
            modified; both warmed twice first, then measured interleaved (median);
  memory    peak RSS of `tm status` (GNU time %M, from /usr/bin/time).

Usage:
  .venv/bin/python bench/bench_foundation.py [--files 50000] [--quick] [--out results.json]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import random
import re
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

TARGET_INIT_RATIO = 3.0  # tm init <= 3x ctags
TARGET_ADOPT_S = 0.3  # re-index one changed file
TARGET_STATUS_RATIO = 2.0  # tm status <= 2x git status (10 files modified)
TARGET_RSS_MB = 100.0  # peak RSS of tm status

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


# --------------------------------------------------------------------------- running & timing


@dataclass
class Run:
    seconds: float
    rss_kb: int
    rc: int
    stdout: bytes
    stderr: bytes


# Environment for every child. `configure_python_env` adjusts it for bytecode caching.
CHILD_ENV: dict[str, str] = {**os.environ, **GIT_ENV}


def configure_python_env(base: Path, inherit: bool) -> None:
    """Let tm's Python cache bytecode, as on a normal install, in a prefix under `base`.

    Sandboxes often set PYTHONDONTWRITEBYTECODE=1; tm (installed editable) would then compile
    its own modules on every start. The prefix keeps the project tree free of __pycache__.
    """
    if inherit:
        return
    CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(base / "pycache")


# GNU time measures peak RSS from a small parent. os.wait4's ru_maxrss would not do: Linux keeps
# the high-water mark across execve, so a child forked (or vforked) from this Python process
# reports at least this process's own RSS.
TIME_BIN = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run `cmd`; wall time, and the peak RSS in KiB (GNU time %M; 0 when not available)."""
    full_env = {**CHILD_ENV, **(env or {})}
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile(prefix="bench-rss.") as rss,
    ):
        argv = [TIME_BIN, "-f", "%M", "-o", rss.name, *cmd] if TIME_BIN else list(cmd)
        t0 = time.perf_counter()
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            check=False,
        )
        elapsed = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        rss_kb = 0
        if TIME_BIN:
            lines = [ln for ln in Path(rss.name).read_text().splitlines() if ln.strip()]
            with contextlib.suppress(ValueError, IndexError):
                rss_kb = int(lines[-1])
        return Run(elapsed, rss_kb, proc.returncode, out.read(), err.read())


def must(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    r = run(cmd, cwd, env)
    if r.rc != 0:
        raise SystemExit(
            f"command failed ({r.rc}): {' '.join(cmd)} in {cwd}\n"
            f"{r.stderr.decode(errors='replace')[-2000:]}"
        )
    return r


def git(repo: Path, *args: str) -> Run:
    return must(["git", *args], repo)


def med(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- synthetic repo

WORDS = (  # noqa: SIM905
    "alpha beta gamma delta cache store index record parse load save fetch apply build merge "
    "split render route queue event token buffer stream frame layer node graph edge scope user "
    "order item price batch chunk entry table field value config option state session client "
    "server request reply filter mapper reducer worker task job timer retry limit window"
).split()


def _name(rng: random.Random, used: set[str], style: str) -> str:
    while True:
        parts = [rng.choice(WORDS) for _ in range(rng.randint(2, 3))]
        if style == "snake":
            n = "_".join(parts)
        elif style == "camel":
            n = parts[0] + "".join(p.title() for p in parts[1:])
        else:  # Pascal
            n = "".join(p.title() for p in parts)
        if n not in used:
            used.add(n)
            return n


def _split(total: int, k: int, rng: random.Random, lo: int = 2) -> list[int]:
    """k body sizes (lines) summing to `total` (at least `lo` each)."""
    sizes = [lo] * k
    for _ in range(max(0, total - k * lo)):
        sizes[rng.randrange(k)] += 1
    return sizes


def _body(lang: str, n: int, rng: random.Random, ind: str) -> list[str]:
    out: list[str] = []
    for i in range(max(1, n - 1)):
        a, b = rng.randint(1, 999), rng.choice(WORDS)
        if lang == "py":
            out.append(f"{ind}v{i} = len({b!r}) * {a} + {i}")
        elif lang in ("js", "ts"):
            out.append(f"{ind}const v{i} = {b!r}.length * {a} + {i};")
        elif lang == "go":
            out.append(f'{ind}v{i} := len("{b}")*{a} + {i}')
        elif lang == "rs":
            out.append(f'{ind}let v{i}: i64 = "{b}".len() as i64 * {a} + {i};')
        elif lang == "c":
            out.append(f'{ind}long v{i} = (long)strlen("{b}") * {a} + {i};')
    last = "v0"
    ret = {
        "py": f"{ind}return {last}",
        "js": f"{ind}return {last};",
        "ts": f"{ind}return {last};",
        "go": f"{ind}return {last}",
        "rs": f"{ind}{last}",
        "c": f"{ind}return {last};",
    }[lang]
    return [*out, ret]


def gen_python(rng: random.Random, lines: int, k: int) -> str:
    used: set[str] = set()
    head = ['"""Generated module for the tinymem benchmark."""', "", "import os", "", ""]
    out = list(head)
    n_methods = rng.randint(0, k - 1) if k > 1 else 0
    n_funcs = k - n_methods - (1 if n_methods else 0)
    n_funcs = max(n_funcs, 1)
    sizes = _split(lines - len(head) - 3 * k, k, rng)
    for i in range(n_funcs):
        out.append(f"def {_name(rng, used, 'snake')}(x: int, y: int = {i}) -> int:")
        out += _body("py", sizes[i % len(sizes)], rng, "    ")
        out += ["", ""]
    if n_methods:
        out.append(f"class {_name(rng, used, 'pascal')}:")
        out.append('    """A generated class."""')
        out.append("")
        for j in range(n_methods):
            out.append(f"    def {_name(rng, used, 'snake')}(self, x: int) -> int:")
            out += _body("py", sizes[(n_funcs + j) % len(sizes)], rng, "        ")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def gen_js(rng: random.Random, lines: int, k: int, ts: bool) -> str:
    used: set[str] = set()
    t = ": number" if ts else ""
    out = ["// Generated module for the tinymem benchmark.", "'use strict';", ""]
    if ts:
        out = ["// Generated module for the tinymem benchmark.", ""]
        out += [f"export interface {_name(rng, used, 'pascal')} {{", "  id: number;", "}", ""]
    sizes = _split(lines - len(out) - 3 * k, k, rng)
    n_methods = rng.randint(0, k - 1)
    for i in range(k - n_methods):
        out.append(f"export function {_name(rng, used, 'camel')}(x{t}, y{t}){t} {{")
        out += _body("ts" if ts else "js", sizes[i], rng, "  ")
        out += ["}", ""]
    if n_methods:
        out.append(f"export class {_name(rng, used, 'pascal')} {{")
        for j in range(n_methods):
            out.append(f"  {_name(rng, used, 'camel')}(x{t}){t} {{")
            out += _body("ts" if ts else "js", sizes[k - n_methods + j], rng, "    ")
            out += ["  }", ""]
        out.append("}")
    return "\n".join(out).rstrip() + "\n"


def gen_go(rng: random.Random, lines: int, k: int, pkg: str) -> str:
    used: set[str] = set()
    out = [f"package {pkg}", "", "// Generated for the tinymem benchmark.", ""]
    sizes = _split(lines - len(out) - 3 * k, k, rng)
    n_methods = rng.randint(0, k - 1)
    typ = _name(rng, used, "pascal")
    if n_methods:
        out += [f"type {typ} struct {{", "\tID int", "}", ""]
    for i in range(k - n_methods):
        out.append(f"func {_name(rng, used, 'pascal')}(x int, y int) int {{")
        out += _body("go", sizes[i], rng, "\t")
        out += ["}", ""]
    for j in range(n_methods):
        out.append(f"func (r *{typ}) {_name(rng, used, 'pascal')}(x int) int {{")
        out += _body("go", sizes[k - n_methods + j], rng, "\t")
        out += ["}", ""]
    return "\n".join(out).rstrip() + "\n"


def gen_rust(rng: random.Random, lines: int, k: int) -> str:
    used: set[str] = set()
    out = ["//! Generated for the tinymem benchmark.", ""]
    sizes = _split(lines - len(out) - 3 * k, k, rng)
    n_methods = rng.randint(0, k - 1)
    for i in range(k - n_methods):
        out.append(f"pub fn {_name(rng, used, 'snake')}(x: i64, y: i64) -> i64 {{")
        out += _body("rs", sizes[i], rng, "    ")
        out += ["}", ""]
    if n_methods:
        typ = _name(rng, used, "pascal")
        out += [f"pub struct {typ} {{", "    pub id: i64,", "}", "", f"impl {typ} {{"]
        for j in range(n_methods):
            out.append(f"    pub fn {_name(rng, used, 'snake')}(&self, x: i64) -> i64 {{")
            out += _body("rs", sizes[k - n_methods + j], rng, "        ")
            out += ["    }", ""]
        out.append("}")
    return "\n".join(out).rstrip() + "\n"


def gen_c(rng: random.Random, lines: int, k: int) -> str:
    used: set[str] = set()
    out = ["/* Generated for the tinymem benchmark. */", "#include <string.h>", ""]
    out += [f"struct {_name(rng, used, 'snake')} {{", "    long id;", "};", ""]
    sizes = _split(lines - len(out) - 3 * k, k, rng)
    for i in range(k):
        static = "static " if i % 2 else ""
        out.append(f"{static}long {_name(rng, used, 'snake')}(long x, long y)")
        out.append("{")
        out += _body("c", sizes[i], rng, "    ")
        out += ["}", ""]
    return "\n".join(out).rstrip() + "\n"


def gen_md(rng: random.Random, lines: int) -> str:
    out = [f"# {' '.join(rng.choice(WORDS) for _ in range(3)).title()}", ""]
    while len(out) < lines:
        out += [f"## {rng.choice(WORDS).title()}", ""]
        out += [" ".join(rng.choice(WORDS) for _ in range(12)) + "." for _ in range(3)]
        out.append("")
    return "\n".join(out) + "\n"


def gen_json(rng: random.Random, lines: int) -> str:
    doc = {f"{rng.choice(WORDS)}_{i}": rng.randint(0, 10**6) for i in range(lines)}
    return json.dumps(doc, indent=2) + "\n"


MIX = [
    ("py", 30),
    ("js", 12),
    ("ts", 12),
    ("go", 14),
    ("rs", 10),
    ("c", 10),
    ("md", 7),
    ("json", 5),
]


def build_synthetic(root: Path, n_files: int, seed: int = 1234) -> Path:
    repo = root / "synth"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    rng = random.Random(seed)
    kinds = [k for k, w in MIX for _ in range(w)]
    per_dir = 100
    for i in range(n_files):
        d, f = divmod(i, per_dir)
        group, leaf = divmod(d, 20)
        directory = repo / "src" / f"g{group:03d}" / f"d{leaf:02d}"
        if f == 0:
            directory.mkdir(parents=True, exist_ok=True)
        kind = kinds[rng.randrange(len(kinds))]
        lines = rng.randint(20, 80)
        k = rng.randint(2, 6)
        if kind == "py":
            text = gen_python(rng, lines, k)
        elif kind in ("js", "ts"):
            text = gen_js(rng, lines, k, ts=kind == "ts")
        elif kind == "go":
            text = gen_go(rng, lines, k, f"d{leaf:02d}")
        elif kind == "rs":
            text = gen_rust(rng, lines, k)
        elif kind == "c":
            text = gen_c(rng, lines, k)
        elif kind == "md":
            text = gen_md(rng, lines)
        else:
            text = gen_json(rng, lines)
        (directory / f"f{f:03d}_{i}.{kind}").write_text(text)
    commit_all(repo)
    return repo


def build_real(root: Path, src: Path) -> Path:
    repo = root / "real"
    shutil.copytree(src, repo / src.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo)
    return repo


def commit_all(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "import")
    git(repo, "repack", "-adq")  # like a fresh clone: objects packed
    git(repo, "prune")


# --------------------------------------------------------------------------- tree edits

_RETURN = re.compile(rb"^([ \t]+)return\b", re.M)


def pick_python_files(repo: Path, count: int) -> list[str]:
    """`count` tracked .py files with an indented `return` (a function body to change)."""
    files = [
        p
        for p in git(repo, "ls-files", "-z").stdout.decode().split("\0")
        if p.endswith(".py") and not p.startswith(".")
    ]
    files.sort()
    found: list[str] = []
    step = max(1, len(files) // (count * 4))
    for p in files[::step] + files:
        if p in found:
            continue
        data = (repo / p).read_bytes()
        if _RETURN.search(data) and len(data) < 200_000:
            found.append(p)
        if len(found) == count:
            break
    if len(found) < count:
        raise SystemExit(f"{repo}: only {len(found)} Python files with a function body")
    return found


def modify_body(repo: Path, path: str, original: bytes, tag: int) -> None:
    """Insert `_bench_edit = TAG` just before the first indented `return` (function body)."""
    m = _RETURN.search(original)
    assert m is not None
    line = m.group(1) + b"_bench_edit = %d\n" % tag
    (repo / path).write_bytes(original[: m.start()] + line + original[m.start() :])


# --------------------------------------------------------------------------- the measurements


def warm_bytecode(base: Path) -> None:
    """Run tm once on a small repository before anything is timed, so the bytecode of every
    module init, status and adopt import (tm's, its dependencies', the standard library's) is
    in the cache prefix, as a normal install has it. Without this the first timed `tm init`
    compiled them (~1 s on this machine) and the median of the init runs paid half of that."""
    repo = base / "warm-up"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    samples = {
        "py": "def f():\n    return 1\n", "js": "function f() { return 1; }\n",
        "ts": "export function f(): number { return 1; }\n", "go": "package a\nfunc F() {}\n",
        "rs": "fn f() {}\n", "c": "int f(void) { return 1; }\n", "md": "# a\n", "json": "{}\n",
    }  # fmt: skip
    for i in range(450):  # over scan.PARALLEL_MIN_FILES: the worker-pool path too
        ext = list(samples)[i % len(samples)]
        (repo / f"f{i}.{ext}").write_text(samples[ext])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "warm-up")
    for cmd in (["init", "-q"], ["status"], ["adopt", "f0.py"], ["state", "f0.py"]):
        r = run([TM, *cmd], repo)
        if r.rc != 0:
            raise SystemExit(f"warm-up `tm {cmd[0]}` exited {r.rc}: {r.stderr.decode()[-800:]}")
    shutil.rmtree(repo)


def warm_page_cache(repo: Path) -> None:
    for p in git(repo, "ls-files", "-z").stdout.split(b"\0"):
        if p:
            with contextlib.suppress(OSError):
                (repo / p.decode()).read_bytes()


def object_files(repo: Path) -> set[Path]:
    return {p for p in (repo / ".git" / "objects").rglob("*") if p.is_file()}


def reset_tm(repo: Path, before_objects: set[Path]) -> None:
    """Back to "never initialized": state ref, cache dir and every object file tm wrote."""
    run(["git", "update-ref", "-d", "refs/tinymem/heads/main"], repo)
    shutil.rmtree(repo / ".git" / "tinymem", ignore_errors=True)
    for p in object_files(repo) - before_objects:
        p.unlink()


def interleaved(
    cmds: dict[str, list[str]], repo: Path, warm: int, runs: int
) -> dict[str, list[Run]]:
    for _ in range(warm):
        for cmd in cmds.values():
            run(cmd, repo)
    out: dict[str, list[Run]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            out[name].append(run(cmd, repo))
    return out


def check_ok(name: str, runs: Sequence[Run], bugs: list[str], repo: Path) -> None:
    for r in runs:
        if r.rc != 0:
            msg = f"{name} exited {r.rc} in {repo}: {r.stderr.decode(errors='replace')[-800:]}"
            if msg not in bugs:
                bugs.append(msg)
            log("ERROR " + msg)


def bench_repo(label: str, repo: Path, args: argparse.Namespace, bugs: list[str]) -> dict[str, Any]:
    res: dict[str, Any] = {"repo": label}
    tracked = [p for p in git(repo, "ls-files", "-z").stdout.split(b"\0") if p]
    res["files"] = len(tracked)
    res["bytes"] = sum((repo / p.decode()).stat().st_size for p in tracked)
    log(f"{label}: {res['files']} files, {res['bytes'] / 1e6:.1f} MB; warming page cache")
    warm_page_cache(repo)

    # ---- init vs ctags, in pairs: ctags needs one core and tm init both, so a slow phase of
    # this shared machine moves them differently; measuring them side by side, in alternating
    # order, keeps one phase from landing on one side only.
    tagfile = Path(tempfile.mkstemp(prefix="bench-tags.")[1])
    ctags = ["ctags", "-R", "-f", str(tagfile), "."]
    before = object_files(repo)
    ct: list[Run] = []
    inits: list[Run] = []
    try:
        run(ctags, repo)  # warm-up
        for i in range(args.init_runs):
            for step in ("ctags", "init") if i % 2 == 0 else ("init", "ctags"):
                if step == "ctags":
                    ct.append(run(ctags, repo))
                    continue
                if inits:
                    reset_tm(repo, before)
                r = run([TM, "init", "-q"], repo)
                inits.append(r)
                log(
                    f"{label}: pair {i + 1}/{args.init_runs}: tm init {r.seconds:.1f}s rc={r.rc}"
                    f" rss={r.rss_kb / 1024:.0f}MB"
                )
                if r.rc != 0:
                    break
            if inits[-1].rc != 0:
                break
        res["ctags_tags"] = sum(1 for line in tagfile.open("rb") if not line.startswith(b"!_"))
    finally:
        tagfile.unlink(missing_ok=True)
    check_ok("ctags", ct, bugs, repo)
    check_ok("tm init", inits, bugs, repo)
    res["ctags_s"] = [r.seconds for r in ct]
    res["init_s"] = [r.seconds for r in inits]
    res["init_pair_ratios"] = [i.seconds / c.seconds for i, c in zip(inits, ct, strict=False)]
    res["init_rss_mb"] = max(r.rss_kb for r in inits) / 1024
    res["init_ratio"] = med(res["init_s"]) / med(res["ctags_s"])
    log(
        f"{label}: ctags median {med(res['ctags_s']):.2f}s, tm init median"
        f" {med(res['init_s']):.2f}s, pairs "
        + ", ".join(f"{x:.2f}x" for x in res["init_pair_ratios"])
    )
    if inits[-1].rc != 0:
        res["error"] = "tm init failed"
        return res
    ls = run(["git", "ls-tree", "-r", "--name-only", "refs/tinymem/heads/main", "entities"], repo)
    res["entities"] = ls.stdout.count(b"\n")

    # ---- Python start-up floor: the bare interpreter, and tm doing nothing
    floor = interleaved(
        {"python": [sys.executable, "-c", "pass"], "tm": [TM, "--version"]},
        repo,
        warm=1,
        runs=args.runs,
    )
    check_ok("tm --version", floor["tm"], bugs, repo)
    res["python_s"] = [r.seconds for r in floor["python"]]
    res["version_s"] = [r.seconds for r in floor["tm"]]
    res["version_rss_mb"] = med([r.rss_kb for r in floor["tm"]]) / 1024

    # ---- status, unmodified tree (first run after init = cold stat cache)
    cold = run([TM, "status"], repo)
    check_ok("tm status", [cold], bugs, repo)
    res["status_cold_s"] = cold.seconds
    res["status_cold_rss_mb"] = cold.rss_kb / 1024
    log(f"{label}: first tm status after init {cold.seconds:.2f}s")
    cmds = {"tm": [TM, "status"], "git": ["git", "status", "--porcelain"]}
    clean = interleaved(cmds, repo, warm=2, runs=args.runs)
    check_ok("tm status", clean["tm"], bugs, repo)
    if b"Clean" not in clean["tm"][-1].stdout:
        bugs.append(
            f"{label}: tm status on the unmodified tree is not clean: "
            f"{clean['tm'][-1].stdout.decode(errors='replace')[:500]}"
        )
    res["status_clean_tm_s"] = [r.seconds for r in clean["tm"]]
    res["status_clean_git_s"] = [r.seconds for r in clean["git"]]
    res["status_clean_ratio"] = med(res["status_clean_tm_s"]) / med(res["status_clean_git_s"])

    # ---- status with 10 files modified
    picked = pick_python_files(repo, 11)
    ten, adopt_file = picked[:10], picked[10]
    originals = {p: (repo / p).read_bytes() for p in picked}
    for p in ten:
        modify_body(repo, p, originals[p], 1)
    dirty = interleaved(cmds, repo, warm=2, runs=args.runs)
    check_ok("tm status", dirty["tm"], bugs, repo)
    out = dirty["tm"][-1].stdout.decode(errors="replace")
    res["status_dirty_reported_files"] = sum(1 for p in ten if p in out)
    if res["status_dirty_reported_files"] != 10:
        bugs.append(
            f"{label}: tm status names {res['status_dirty_reported_files']}/10 modified"
            f" files: {out[:500]}"
        )
    git_out = dirty["git"][-1].stdout.decode()
    res["git_status_lines"] = len(git_out.splitlines())
    res["status_dirty_tm_s"] = [r.seconds for r in dirty["tm"]]
    res["status_dirty_git_s"] = [r.seconds for r in dirty["git"]]
    res["status_dirty_ratio"] = med(res["status_dirty_tm_s"]) / med(res["status_dirty_git_s"])
    res["status_clean_rss_mb"] = max(r.rss_kb for r in clean["tm"]) / 1024
    res["status_dirty_rss_mb"] = max(r.rss_kb for r in dirty["tm"]) / 1024
    res["status_rss_mb"] = max(r.rss_kb for r in clean["tm"] + dirty["tm"]) / 1024
    res["git_status_rss_mb"] = max(r.rss_kb for r in clean["git"] + dirty["git"]) / 1024
    for p in ten:
        (repo / p).write_bytes(originals[p])
    log(
        f"{label}: status tm {med(res['status_dirty_tm_s']):.3f}s"
        f" git {med(res['status_dirty_git_s']):.3f}s rss {res['status_rss_mb']:.0f}MB"
    )

    # ---- re-index one changed file
    adopts: list[Run] = []
    for i in range(args.runs + 1):  # the first is a warm-up
        modify_body(repo, adopt_file, originals[adopt_file], 100 + i)
        r = run([TM, "adopt", adopt_file], repo)
        if r.rc != 0 or b"adopted" not in r.stdout:
            check_ok("tm adopt", [r], bugs, repo)
            if r.rc == 0:
                bugs.append(f"{label}: tm adopt {adopt_file} did not adopt: {r.stdout[:300]!r}")
        if i:
            adopts.append(r)
    res["adopt_file"] = adopt_file
    res["adopt_s"] = [r.seconds for r in adopts]
    res["adopt_rss_mb"] = max(r.rss_kb for r in adopts) / 1024
    log(f"{label}: adopt median {med(res['adopt_s']):.3f}s")
    return res


# --------------------------------------------------------------------------- report


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def summarize(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        if "init_s" not in r:
            continue
        row = {
            "repo": r["repo"],
            "files": r["files"],
            "ctags_s": med(r["ctags_s"]),
            "init_s": med(r["init_s"]),
            "init_ratio": r["init_ratio"],
            "init_pairs": ", ".join(f"{x:.2f}" for x in r["init_pair_ratios"]),
            "init_target": verdict(r["init_ratio"] <= TARGET_INIT_RATIO),
        }
        if "adopt_s" in r:
            row.update(
                entities=r.get("entities"),
                init_rss_mb=r["init_rss_mb"],
                python_s=med(r["python_s"]),
                version_s=med(r["version_s"]),
                adopt_s=med(r["adopt_s"]),
                adopt_best_s=min(r["adopt_s"]),
                adopt_target=verdict(med(r["adopt_s"]) <= TARGET_ADOPT_S),
                status_cold_s=r["status_cold_s"],
                status_clean_tm_s=med(r["status_clean_tm_s"]),
                status_clean_git_s=med(r["status_clean_git_s"]),
                status_clean_ratio=r["status_clean_ratio"],
                status_dirty_tm_s=med(r["status_dirty_tm_s"]),
                status_dirty_git_s=med(r["status_dirty_git_s"]),
                status_dirty_ratio=r["status_dirty_ratio"],
                status_dirty_best_ratio=min(r["status_dirty_tm_s"]) / min(r["status_dirty_git_s"]),
                # The issue sets this target on the 50,000-file tree only: on a small tree
                # git status takes less than Python's own start-up.
                status_target=verdict(r["status_dirty_ratio"] <= TARGET_STATUS_RATIO)
                if r["files"] >= 50_000
                else "n/a (50k only)",
                status_rss_mb=r["status_rss_mb"],
                status_cold_rss_mb=r["status_cold_rss_mb"],
                git_status_rss_mb=r["git_status_rss_mb"],
                rss_target=verdict(r["status_rss_mb"] < TARGET_RSS_MB)
                if r["status_rss_mb"] > 0
                else "n/a (no /usr/bin/time)",
            )
        rows.append(row)
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    lines = [
        ("files", "files", "{}"),
        ("ctags -R (s)", "ctags_s", "{:.2f}"),
        ("tm init (s)", "init_s", "{:.2f}"),
        ("init / ctags  [<= 3x]", "init_ratio", "{:.2f}x"),
        ("  each pair", "init_pairs", "{}"),
        ("  target", "init_target", "{}"),
        ("tm init peak RSS (MB)", "init_rss_mb", "{:.0f}"),
        ("entities in the State Map", "entities", "{}"),
        ("python -c pass (s)", "python_s", "{:.3f}"),
        ("tm --version (s)", "version_s", "{:.3f}"),
        ("tm adopt 1 file (s)  [<= 0.3 s]", "adopt_s", "{:.3f}"),
        ("  best of the runs (s)", "adopt_best_s", "{:.3f}"),
        ("  target", "adopt_target", "{}"),
        ("1st tm status after init (s)", "status_cold_s", "{:.3f}"),
        ("tm status, clean (s)", "status_clean_tm_s", "{:.3f}"),
        ("git status, clean (s)", "status_clean_git_s", "{:.3f}"),
        ("  ratio", "status_clean_ratio", "{:.1f}x"),
        ("tm status, 10 modified (s)", "status_dirty_tm_s", "{:.3f}"),
        ("git status, 10 modified (s)", "status_dirty_git_s", "{:.3f}"),
        ("  ratio  [<= 2x]", "status_dirty_ratio", "{:.1f}x"),
        ("  ratio of the best runs", "status_dirty_best_ratio", "{:.1f}x"),
        ("  target", "status_target", "{}"),
        ("git status peak RSS (MB)", "git_status_rss_mb", "{:.0f}"),
        ("tm status peak RSS (MB)  [< 100]", "status_rss_mb", "{:.0f}"),
        ("  target", "rss_target", "{}"),
        ("1st tm status after init, peak RSS (MB)", "status_cold_rss_mb", "{:.0f}"),
    ]
    width = max(len(t) for t, _, _ in lines)
    print(f"{'':{width}}  " + "  ".join(f"{r['repo']:>12}" for r in rows))
    for title, key, fmt in lines:
        cells = [fmt.format(r[key]) if key in r else "-" for r in rows]
        print(f"{title:{width}}  " + "  ".join(f"{c:>12}" for c in cells))


def machine() -> dict[str, Any]:
    def out(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, env=CHILD_ENV).stdout.strip()
        except OSError:
            return "?"

    tm_ver = out([TM, "--version"])
    return {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git": out(["git", "--version"]),
        "ctags": out(["ctags", "--version"]).split(",")[0] if shutil.which("ctags") else None,
        "tm": tm_ver,
        "tm_commit": out(["git", "-C", str(PROJECT), "rev-parse", "--short", "HEAD"]),
        "tm_worktree_dirty": bool(out(["git", "-C", str(PROJECT), "status", "--porcelain"])),
        "child_env": {
            k: CHILD_ENV.get(k) for k in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=50_000, help="synthetic repository size")
    ap.add_argument("--quick", action="store_true", help="fewer runs (3 per median, 1 init)")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument(
        "--real-src",
        default=str(
            Path(sys.executable).parent.parent
            / "lib"
            / f"python{sys.version_info.major}.{sys.version_info.minor}"
            / "site-packages"
            / "litellm"
        ),
        help="source tree copied as the real code base (default: the venv's litellm)",
    )
    ap.add_argument("--only", choices=["real", "synth"], help="benchmark one repository only")
    ap.add_argument("--workdir", help="build the repositories here (default: a new temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary repositories")
    ap.add_argument(
        "--inherit-pyc-env",
        action="store_true",
        help="run tm with the caller's PYTHONDONTWRITEBYTECODE/PYTHONPYCACHEPREFIX as they are"
        " (default: tm caches bytecode in a prefix under the work dir, like a normal install)",
    )
    args = ap.parse_args()
    args.runs = 3 if args.quick else 7
    args.init_runs = 1 if args.quick else 5  # pairs of `tm init` and `ctags -R`

    if not shutil.which("ctags"):
        raise SystemExit("ctags (Universal Ctags) is required: apt-get install universal-ctags")
    base = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="tm-bench."))
    base.mkdir(parents=True, exist_ok=True)
    if base.resolve().is_relative_to(PROJECT.resolve()):
        raise SystemExit("--workdir must be outside the project")
    configure_python_env(base, args.inherit_pyc_env)
    warm_bytecode(base)
    info = machine()
    log(f"workdir {base}; {info['tm']}; python {info['python']}; nproc {info['nproc']}")

    results: list[dict[str, Any]] = []
    bugs: list[str] = []
    try:
        if args.only in (None, "real"):
            log(f"building the real repository from {args.real_src}")
            repo = build_real(base, Path(args.real_src))
            results.append(bench_repo("real", repo, args, bugs))
            if not args.keep:
                shutil.rmtree(repo)
        if args.only in (None, "synth"):
            log(f"generating the synthetic repository ({args.files} files)")
            t0 = time.perf_counter()
            repo = build_synthetic(base, args.files)
            log(f"generated and committed in {time.perf_counter() - t0:.0f}s")
            results.append(bench_repo(f"synth-{args.files // 1000}k", repo, args, bugs))
        report(results, bugs, info, args)
    finally:
        if not args.keep:
            log(f"removing {base}")
            shutil.rmtree(base, ignore_errors=True)


def report(
    results: list[dict[str, Any]], bugs: list[str], info: dict[str, Any], args: argparse.Namespace
) -> None:
    rows = summarize(results)
    print()
    print(
        f"tinymem foundation benchmark, {info['date']}, nproc {info['nproc']},"
        f" Python {info['python']}, {info['tm']}, {info['git']}, {info['ctags']}"
    )
    print(f"medians of {args.runs} runs (init and ctags: {args.init_runs} pairs)")
    print()
    print_table(rows)
    if bugs:
        print("\nproblems:")
        for b in bugs:
            print(f"  - {b}")
    if args.out:
        doc = {"machine": info, "args": vars(args), "summary": rows, "raw": results, "bugs": bugs}
        Path(args.out).write_text(json.dumps(doc, indent=1, default=str) + "\n")
        log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
