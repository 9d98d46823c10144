#!/usr/bin/env python3
"""`tm ask` benchmark: end-to-end overhead and hydration quality, with baselines in the same run.

Corpus: copies of installed packages no one here wrote (default: rich, typer, click,
markdown_it, httpx, httpcore, jinja2, anyio from the venv's site-packages; ~350 files, ~3.9 MB),
without __pycache__, committed to a fresh git repository in a temporary directory, then
`tm init -q`. Nothing is written inside the project.

1. Hydration quality (in-process, no model call; runs first, on the fresh State Map).
   For every task of bench/ask_tasks.json and every budget (800 / 2000 / 8000) it calls
   `tinymem.ask.prepare()` and records the prompt tokens (`hydration.tokens`) and whether the
   target entity is hydrated IN FULL (its key is in `hydration.hydrated`, or an entity of the
   same file whose span encloses it, e.g. its class, is). Baselines, computed here:
     file  whole-file hydration of the target's file: tokens = the same fixed part tm pays
           (system prompt, framing, request) + the file as one fenced part; success iff the
           total fits the budget;
     all   every entity of the repository (the original system): the fixed part + every
           top-level entity (nested methods are inside their class, not counted twice) as a
           fenced part; success iff it fits.
   Targets at 2000 tokens: >= 95 % for requests that name the symbol or file, >= 70 % for
   requests that only describe it.

2. Overhead (end to end, separate processes, loopback model server from tests/modelserver.py
   that answers instantly with a fixed reply, streamed in 16-character chunks):
     tm    `tm ask PROMPT -m openai/test --api-base BASE` (OPENAI_API_KEY=x)
     bare  a fresh Python process that imports litellm (same LITELLM_* settings tm uses),
           sends the messages tm sends (taken from `tm ask --dry-run --json`) with
           stream=True and consumes the stream;
   interleaved, after warm-up; medians and the ratio tm/bare (target <= 1.3). Also: tm's own
   time without the litellm import, two ways: `tm ask --dry-run` (a fresh process doing
   everything tm does before the call; litellm is not imported), and, in one process where
   litellm is already imported and warmed by a call, tinymem.ask.ask() (ETV, hydration, call,
   reply parsing, proposals, ledger commit) against the same bare call: ask() - bare is tm's
   own time excluding litellm; prepare() (ETV + hydration) is shown alone too.

Usage:
  .venv/bin/python bench/bench_ask.py [--runs 7] [--only quality|overhead] [--out results.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
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
PYTHON = sys.executable
SITE = Path(next(p for p in sys.path if p.endswith("site-packages")))
TASKS_FILE = HERE / "ask_tasks.json"

sys.path.insert(0, str(PROJECT))
from tests.modelserver import ModelServer, ScriptedReply  # noqa: E402
from tinymem.ask import AskOptions, prepare  # noqa: E402
from tinymem.hydration.hydrate import estimate_tokens  # noqa: E402
from tinymem.hydration.prompt import system_prompt  # noqa: E402
from tinymem.ledger import current  # noqa: E402
from tinymem.records import FILE_SYMBOL, split_key  # noqa: E402
from tinymem.repository import open_repo  # noqa: E402

BUDGETS = (800, 2000, 8000)
TARGET_RATIO = 1.3
TARGET_NAMED = 0.95
TARGET_DESCRIBED = 0.70
DEFAULT_PACKAGES = ("rich", "typer", "click", "markdown_it", "httpx", "httpcore", "jinja2", "anyio")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
CHILD_ENV: dict[str, str] = {
    k: v for k, v in os.environ.items() if not k.startswith("TM_") and k != "OPENAI_API_BASE"
}
CHILD_ENV.update(GIT_ENV)
CHILD_ENV["OPENAI_API_KEY"] = "x"
# The same switches tm's llm.import_litellm sets, for both sides.
CHILD_ENV["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
CHILD_ENV["LITELLM_MODE"] = "PRODUCTION"

OVERHEAD_PROMPT = (
    "In rich/filesize.py, change decimal() so that the default precision is 2 decimal places."
)
REPLY = '''Here is the updated function with a default precision of 2:

```python path=rich/filesize.py
def decimal(
    size: int,
    *,
    precision: Optional[int] = 2,
    separator: Optional[str] = " ",
) -> str:
    """Convert a filesize in to a string (powers of 1000, SI prefixes).

    In this convention, ``1000 B = 1 kB``.

    Arguments:
        int (size): A file size.
        int (precision): The number of decimal places to include (default = 2).
        str (separator): The string to separate the value from the units (default = " ").

    Returns:
        `str`: A string containing a abbreviated file size and units.
    """
    return _to_str(
        size,
        ("kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"),
        1000,
        precision=precision,
        separator=separator,
    )
```

Only the default of `precision` and its docstring changed.
'''

BARE_SCRIPT = r"""
import json, sys
import litellm
litellm.suppress_debug_info = True
litellm.telemetry = False
messages = json.load(open(sys.argv[2]))
stream = litellm.completion(model="openai/test", api_base=sys.argv[1], api_key="x",
    messages=messages, stream=True, temperature=0, num_retries=0, max_retries=0,
    stream_options={"include_usage": True})
for chunk in stream:
    if chunk.choices and chunk.choices[0].delta.content:
        sys.stdout.write(chunk.choices[0].delta.content)
        sys.stdout.flush()
sys.stdout.write("\n")
"""


WARM_SCRIPT = r"""
import io, json, os, sys, time
project, base, corpus, messages_file, runs, prompt = sys.argv[1:7]
sys.path.insert(0, project)
from tinymem.llm import import_litellm
from tinymem.ask import AskOptions, ask, prepare
from tinymem.repository import open_repo

litellm = import_litellm()
messages = json.load(open(messages_file))
sink = io.StringIO()


def bare():
    stream = litellm.completion(model="openai/test", api_base=base, api_key="x",
        messages=messages, stream=True, temperature=0, num_retries=0, max_retries=0,
        stream_options={"include_usage": True})
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            sink.write(chunk.choices[0].delta.content)


repo = open_repo(corpus)
opts = AskOptions(prompt=prompt, flags={"model": "openai/test", "apiBase": base})


def tm():
    r = ask(repo, opts, on_text=sink.write)
    assert r.error is None and r.call is not None, r.error


def prep():
    prepare(repo, opts)


steps = {"ask": tm, "bare": bare, "prepare": prep}
times = {k: [] for k in steps}
for f in steps.values():  # warm-up: litellm's lazy imports, caches
    f()
for i in range(int(runs)):
    for name in (list(steps) if i % 2 == 0 else list(reversed(list(steps)))):
        t0 = time.perf_counter()
        steps[name]()
        times[name].append(time.perf_counter() - t0)
print(json.dumps(times))
"""

# --------------------------------------------------------------------------- helpers


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def med(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


@dataclass
class Run:
    seconds: float
    rc: int
    stdout: bytes
    stderr: bytes


def run(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    t0 = time.perf_counter()
    p = subprocess.run(
        list(cmd),
        cwd=cwd,
        env={**CHILD_ENV, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    return Run(time.perf_counter() - t0, p.returncode, p.stdout, p.stderr)


def must(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    r = run(cmd, cwd, env)
    if r.rc != 0:
        raise SystemExit(
            f"command failed ({r.rc}): {' '.join(cmd)} in {cwd}\n"
            f"{r.stderr.decode(errors='replace')[-3000:]}"
        )
    return r


def build_corpus(dest: Path, packages: Sequence[str]) -> dict[str, Any]:
    dest.mkdir(parents=True)
    for name in packages:
        src = SITE / name
        if not src.is_dir():
            raise SystemExit(f"package {name} is not installed in {SITE}")
        shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    files = [p for p in dest.rglob("*") if p.is_file()]
    must(["git", "init", "-q", "-b", "main"], dest)
    must(["git", "add", "-A"], dest)
    must(["git", "commit", "-qm", "import"], dest)
    t = must([TM, "init", "-q"], dest).seconds
    return {
        "packages": list(packages),
        "files": len(files),
        "py_files": sum(1 for p in files if p.suffix == ".py"),
        "bytes": sum(p.stat().st_size for p in files),
        "tm_init_seconds": round(t, 2),
    }


# --------------------------------------------------------------------------- quality

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATHISH = re.compile(r"[\w./-]+\.[A-Za-z0-9]+")


def _part(path: str, symbol: str, language: str | None, text: str) -> str:
    # The exact shape hydrate.py gives a hydrated entity (artifact id: 12 hex digits).
    head = f"### {path}::{symbol} (artifact {'0' * 12})\n"
    return head + f"```{language or ''} path={path}\n{text}\n```\n"


def _fixed_tokens(prompt: str) -> int:
    """What every prompt pays besides the hydrated code: system prompt, framing, request."""
    system = system_prompt()
    user = "[CURRENT STATE: AUTHORITATIVE]\n[END STATE]\n" + f"\n[REQUEST]\n{prompt}\n"
    return estimate_tokens(system) + estimate_tokens(user)


@dataclass
class Ent:
    path: str
    symbol: str
    start: int
    end: int
    text: str


def load_entities(repo: Any) -> tuple[dict[str, Ent], dict[str, str], dict[str, str | None]]:
    view = current(repo)
    ents: dict[str, Ent] = {}
    files: dict[str, str] = {}
    langs: dict[str, str | None] = {}
    for meta in view.all_meta():
        if meta.deleted:
            continue
        snap = view.blob(meta.snapshot)
        files[meta.path] = snap.decode("utf-8", "replace")
        langs[meta.path] = meta.language
        for rec in meta.live_entities():
            ents[f"{meta.path}::{rec.symbol}"] = Ent(
                meta.path,
                rec.symbol,
                rec.start,
                rec.end,
                snap[rec.start : rec.end].decode("utf-8", "replace"),
            )
    return ents, files, langs


def all_entities_tokens(ents: dict[str, Ent], langs: dict[str, str | None]) -> int:
    by_path: dict[str, list[Ent]] = {}
    for e in ents.values():
        by_path.setdefault(e.path, []).append(e)
    total = 0
    for path, es in by_path.items():
        es.sort(key=lambda e: (e.start, -e.end))
        reach = -1
        for e in es:
            if e.end <= reach and e.symbol != FILE_SYMBOL:
                continue  # nested in an entity already counted
            reach = max(reach, e.end)
            total += estimate_tokens(_part(path, e.symbol, langs[path], e.text))
    return total


def check_described(task: dict[str, Any]) -> list[str]:
    """Identifiers of the target that a 'described' request must not contain."""
    path, symbol = split_key(task["target"])
    forbidden = {s for s in symbol.split(".") if s}
    base = path.rsplit("/", 1)[-1]
    words = set(_WORD.findall(task["prompt"]))
    paths = {p.strip("./") for p in _PATHISH.findall(task["prompt"])}
    hits = sorted(forbidden & words)
    if path in paths or base in paths or any(p.endswith("/" + base) for p in paths):
        hits.append(base)
    return hits


def covered(target: Ent, hydrated: list[str], ents: dict[str, Ent]) -> bool:
    for key in hydrated:
        h = ents.get(key)
        if h is None:
            continue
        if key == f"{target.path}::{target.symbol}":
            return True
        if h.path == target.path and h.start <= target.start and target.end <= h.end:
            return True
    return False


def quality(corpus: Path, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    repo = open_repo(str(corpus))
    ents, files, langs = load_entities(repo)
    names = {e.symbol.rsplit(".", 1)[-1] for e in ents.values() if e.symbol != FILE_SYMBOL}
    all_code = all_entities_tokens(ents, langs)
    problems = []
    for t in tasks:
        if t["target"] not in ents:
            problems.append(f"{t['id']}: target {t['target']} is not an entity of the corpus")
        if t["kind"] == "described" and (hits := check_described(t)):
            problems.append(f"{t['id']}: a 'described' request names {hits}")
    if problems:
        raise SystemExit("task set invalid:\n" + "\n".join(problems))
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for budget in BUDGETS:
        for t in tasks:
            target = ents[t["target"]]
            prep = prepare(repo, AskOptions(prompt=t["prompt"], flags={"budget": str(budget)}))
            hyd = prep.hydration
            keys = [h["entity"] for h in hyd.hydrated]
            fixed = _fixed_tokens(t["prompt"])
            file_tokens = fixed + estimate_tokens(
                _part(target.path, FILE_SYMBOL, langs[target.path], files[target.path])
            )
            own = fixed + estimate_tokens(
                _part(target.path, target.symbol, langs[target.path], target.text)
            )
            words = set(_WORD.findall(t["prompt"]))
            rows.append(
                {
                    "id": t["id"],
                    "kind": t["kind"],
                    "budget": budget,
                    "target": t["target"],
                    "tokens": hyd.tokens,
                    "ok": covered(target, keys, ents),
                    "mapped": t["target"] in hyd.mapped,
                    "feasible": own <= budget,  # the target alone fits this budget
                    "n_hydrated": len(keys),
                    "hydrated_head": keys[:8],
                    "name_hits": sorted(words & names),
                    "file_tokens": file_tokens,
                    "file_ok": file_tokens <= budget,
                    "all_tokens": fixed + all_code,
                    "all_ok": fixed + all_code <= budget,
                }
            )
    seconds = time.perf_counter() - t0
    return {
        "entities": len(ents),
        "files": len(files),
        "all_entities_code_tokens": all_code,
        "prepare_seconds_mean": round(seconds / max(1, len(rows)), 3),
        "rows": rows,
    }


def summarize_quality(q: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for budget in BUDGETS:
        for kind in ("named", "described", "all"):
            rs = [r for r in q["rows"] if r["budget"] == budget and kind in ("all", r["kind"])]
            n = len(rs)
            out.append(
                {
                    "budget": budget,
                    "kind": kind,
                    "n": n,
                    "tm_tokens": statistics.mean(r["tokens"] for r in rs),
                    "tm_ok": sum(r["ok"] for r in rs) / n,
                    "feasible": sum(r["feasible"] for r in rs) / n,
                    "file_tokens": statistics.mean(r["file_tokens"] for r in rs),
                    "file_ok": sum(r["file_ok"] for r in rs) / n,
                    "all_tokens": statistics.mean(r["all_tokens"] for r in rs),
                    "all_ok": sum(r["all_ok"] for r in rs) / n,
                }
            )
    return out


def print_quality(q: dict[str, Any], summary: list[dict[str, Any]]) -> list[str]:
    lines = [
        f"Hydration quality: {len({r['id'] for r in q['rows']})} tasks, corpus of {q['files']}"
        f" files / {q['entities']} entities; prepare() {q['prepare_seconds_mean']} s per call",
        "",
        "| budget | requests | n | tm tokens | tm in full | target alone fits"
        " | whole file: tokens | fits | all entities: tokens | fits |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in summary:
        lines.append(
            f"| {s['budget']} | {s['kind']} | {s['n']} | {s['tm_tokens']:.0f} | {s['tm_ok']:.0%}"
            f" | {s['feasible']:.0%} | {s['file_tokens']:.0f} | {s['file_ok']:.0%}"
            f" | {s['all_tokens']:.0f} | {s['all_ok']:.0%} |"
        )
    at = {(s["budget"], s["kind"]): s for s in summary}
    named, described = at[(2000, "named")]["tm_ok"], at[(2000, "described")]["tm_ok"]
    lines += [
        "",
        f"Target at 2000 tokens, named: {named:.0%} (>= {TARGET_NAMED:.0%}):"
        f" {'MET' if named >= TARGET_NAMED else 'MISSED'};"
        f" described: {described:.0%} (>= {TARGET_DESCRIBED:.0%}):"
        f" {'MET' if described >= TARGET_DESCRIBED else 'MISSED'}",
        "",
        "Failures at 2000 tokens (target not hydrated in full):",
    ]
    for r in q["rows"]:
        if r["budget"] == 2000 and not r["ok"]:
            lines.append(
                f"- {r['id']} {r['target']}: {r['n_hydrated']} hydrated"
                f" ({', '.join(r['hydrated_head'][:4])}{', ...' if r['n_hydrated'] > 4 else ''});"
                f" target {'in the signature map' if r['mapped'] else 'not shown'};"
                f" prompt words that are entity names: {r['name_hits'][:10]}"
            )
    for line in lines:
        print(line)
    return lines


# --------------------------------------------------------------------------- overhead


def overhead(corpus: Path, runs: int, work: Path) -> dict[str, Any]:
    with ModelServer(default=ScriptedReply(text=REPLY)) as server:
        base = server.openai_base
        flags = ["-m", "openai/test", "--api-base", base]
        dry = must([TM, "ask", OVERHEAD_PROMPT, *flags, "--dry-run", "--json"], corpus)
        plan = json.loads(dry.stdout)
        messages_file = work / "messages.json"
        messages_file.write_text(json.dumps(plan["messages"]))
        script = work / "bare.py"
        script.write_text(BARE_SCRIPT)
        cmds = {
            "tm": [TM, "ask", OVERHEAD_PROMPT, *flags],
            "bare": [PYTHON, str(script), base, str(messages_file)],
            "dry": [TM, "ask", OVERHEAD_PROMPT, *flags, "--dry-run"],
            "import": [PYTHON, "-c", "import litellm"],
            "python": [PYTHON, "-c", "pass"],
        }
        times: dict[str, list[float]] = {k: [] for k in cmds}
        log("overhead: warm-up")
        for name in ("tm", "bare", "dry", "import", "tm", "bare"):
            r = must(cmds[name], corpus)
        for name in ("tm", "bare"):
            r = must(cmds[name], corpus)
            if REPLY.strip()[:60] not in r.stdout.decode(errors="replace"):
                raise SystemExit(f"{name}: the reply did not reach stdout:\n{r.stdout[-500:]!r}")
        for i in range(runs):
            order = ["tm", "bare", "dry", "import", "python"]
            if i % 2:
                order.reverse()
            for name in order:
                times[name].append(must(cmds[name], corpus).seconds)
            log(
                f"overhead run {i + 1}/{runs}: "
                + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items())
            )
        # tm's own time without the litellm import: one process imports litellm and warms it
        # with a call first, then times tinymem.ask.ask() and the same bare call in turn.
        warm_script = work / "warm.py"
        warm_script.write_text(WARM_SCRIPT)
        wr = must(
            [
                PYTHON,
                str(warm_script),
                str(PROJECT),
                base,
                str(corpus),
                str(messages_file),
                str(runs),
                OVERHEAD_PROMPT,
            ],
            corpus,
        )
        warm = json.loads(wr.stdout.decode().strip().splitlines()[-1])
        chat_requests = len(server.chat_requests)
    m = {k: med(v) for k, v in times.items()}
    result = {
        "runs": runs,
        "reply_chars": len(REPLY),
        "prompt_tokens": plan["tokens"],
        "budget": plan["budget"],
        "chat_requests_served": chat_requests,
        "median_seconds": {k: round(v, 3) for k, v in m.items()},
        "all_seconds": {k: [round(x, 3) for x in v] for k, v in times.items()},
        "ratio_tm_over_bare": round(m["tm"] / m["bare"], 3),
        # Each run's tm and bare ran back to back: their ratio cancels slow drifts of the load.
        "paired_ratio_median": round(
            med([t / b for t, b in zip(times["tm"], times["bare"], strict=True)]), 3
        ),
        "tm_minus_bare_seconds": round(m["tm"] - m["bare"], 3),
        "warm_in_process_median_seconds": {k: round(med(v), 4) for k, v in warm.items()},
        "warm_in_process_seconds": {k: [round(x, 4) for x in v] for k, v in warm.items()},
    }
    return result


def print_overhead(o: dict[str, Any]) -> list[str]:
    m = o["median_seconds"]
    w = o["warm_in_process_median_seconds"]
    ratio = o["ratio_tm_over_bare"]
    lines = [
        f"Overhead: medians of {o['runs']} interleaved runs; reply {o['reply_chars']} chars;"
        f" prompt {o['prompt_tokens']} tokens (budget {o['budget']})",
        "",
        "| command | median s | runs (s) |",
        "|---|---:|---|",
        f"| tm ask (end to end) | {m['tm']:.3f} | {o['all_seconds']['tm']} |",
        f"| bare litellm stream, fresh process | {m['bare']:.3f} | {o['all_seconds']['bare']} |",
        f"| tm ask --dry-run (tm without litellm) | {m['dry']:.3f} | {o['all_seconds']['dry']} |",
        f"| python -c 'import litellm' | {m['import']:.3f} | {o['all_seconds']['import']} |",
        f"| python -c pass | {m['python']:.3f} | {o['all_seconds']['python']} |",
        "",
        f"Ratio tm ask / bare: {ratio:.2f} (<= {TARGET_RATIO}):"
        f" {'MET' if ratio <= TARGET_RATIO else 'MISSED'};"
        f" difference {o['tm_minus_bare_seconds']:+.3f} s; median of the per-run ratios"
        f" (tm and bare back to back): {o['paired_ratio_median']:.2f}",
        "",
        "tm's own time, litellm already imported and warmed (one process, medians):",
        "",
        "| in-process step | median s |",
        "|---|---:|",
        f"| tinymem.ask.ask() (ETV, hydration, call, parse, proposals, ledger) | {w['ask']:.3f} |",
        f"| tinymem.ask.prepare() (ETV + hydration only) | {w['prepare']:.3f} |",
        f"| bare litellm.completion stream, same messages | {w['bare']:.3f} |",
        f"| ask() - bare: tm's own time excluding litellm | {w['ask'] - w['bare']:.3f} |",
    ]
    for line in lines:
        print(line)
    return lines


# --------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="timed runs per command (default 7)")
    ap.add_argument("--only", choices=["quality", "overhead"])
    ap.add_argument("--packages", default=",".join(DEFAULT_PACKAGES))
    ap.add_argument("--workdir", help="build the corpus here (default: a new temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary corpus")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--text-out", help="write the printed tables here")
    ap.add_argument(
        "--inherit-bytecode-env",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as it is (default: let tm cache bytecode in a"
        " prefix under the work directory, as on a normal install)",
    )
    args = ap.parse_args()
    tasks = json.loads(TASKS_FILE.read_text())["tasks"]
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="tm-bench-ask."))
    work.mkdir(parents=True, exist_ok=True)
    if not args.inherit_bytecode_env:
        CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    text: list[str] = []
    try:
        corpus = work / "corpus"
        log(f"building the corpus in {corpus}")
        results["corpus"] = build_corpus(corpus, args.packages.split(","))
        c = results["corpus"]
        text.append(
            f"Corpus: {', '.join(c['packages'])}: {c['files']} files ({c['py_files']} .py),"
            f" {c['bytes'] / 1e6:.1f} MB; tm init {c['tm_init_seconds']} s"
        )
        print(text[-1] + "\n")
        if args.only != "overhead":
            log("quality: prepare() for every task and budget")
            q = quality(corpus, tasks)
            results["quality"] = q
            results["quality_summary"] = summary = summarize_quality(q)
            text += print_quality(q, summary)
            print()
            text.append("")
        if args.only != "quality":
            results["overhead"] = o = overhead(corpus, args.runs, work)
            text += print_overhead(o)
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    if args.text_out:
        Path(args.text_out).write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
