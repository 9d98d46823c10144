#!/usr/bin/env python3
r"""`tm accept` benchmark: a 10-file proposal set against a plain `git apply` of the same change.

Corpus: copies of installed packages no one here wrote (default: rich and pygments from the
venv's site-packages, ~440 files), without __pycache__, committed to a fresh git repository in
a temporary directory (never inside the project), then `tm init -q`.

A scripted model reply (REPLY below, hand-written) modifies one top-level function in each of
10 different rich files, as fenced blocks with `path=`. `tm ask` against the loopback model
server of tests/modelserver.py (`-m openai/test --api-base BASE`, OPENAI_API_KEY=x) turns it
into 10 pending proposals; that repository is the seed (its proposals are checked: 10, each
Gate A pass). Then, for each round (after --warm unmeasured rounds), on a fresh `cp -a` of the
seed (copy not timed):

  version   `tm --version` (Python start-up and tm's CLI import: the floor)
  accept    `tm accept --all` (checked: exit 0, 10 proposals promoted, exactly the 10 files
            changed)
  apply     the same change as a patch: `git diff > P` of the accepted result, then
            `git checkout -- .` (untimed), then `git apply P` (timed; checked: `git diff`
            equals P again)

Reported: medians, accept/apply and accept/version ratios (of the medians, and the median of
same-round pairs), accept - version. No target: issue 4 asks only for the ratio.

Then `python -m cProfile -m tinymem accept --all` on one more fresh copy splits tm's time:
start-up imports (tinymem.cli), loading the state and selecting proposals, the gates
(`accept.plan`: Gate A parse/parity, ETV, splice), the file writes (`atomic.write_atomic`,
temp + fsync + rename), the ledger commit (`ledger.commit_episode`: re-indexing the written
files, the State Map tree, the episode commit), and output, with call counts (how many times
each file is parsed). cProfile inflates Python-heavy parts, so shares are given as fractions
of the profiled total; the profile's tinymem functions by cumulative time and the callers of
the Python syntax check are printed too.

Usage:
  .venv/bin/python bench/bench_accept.py [--runs 9] [--warm 2] [--packages rich,pygments]
      [--out results.json] [--workdir DIR] [--keep] [--inherit-env]
"""

from __future__ import annotations

import argparse
import ast
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
SITE = Path(next(p for p in sys.path if p.endswith("site-packages")))

sys.path.insert(0, str(PROJECT))
from tests.modelserver import ModelServer  # noqa: E402

PROMPT = "Make these ten small robustness fixes in rich."

# One modified top-level function in each of 10 files of rich 15.x (names checked at start).
CHANGES: list[tuple[str, str, str]] = [
    (
        "rich/console.py",
        "detect_legacy_windows",
        r'''def detect_legacy_windows() -> bool:
    """Detect legacy Windows (a console without virtual terminal processing)."""
    if not WINDOWS:
        return False
    return not get_windows_console_features().vt''',
    ),
    (
        "rich/pretty.py",
        "is_expandable",
        r'''def is_expandable(obj: Any) -> bool:
    """Check if an object may be expanded by pretty print."""
    if isclass(obj):
        return False
    return bool(
        _safe_isinstance(obj, _CONTAINERS)
        or is_dataclass(obj)
        or hasattr(obj, "__rich_repr__")
        or _is_attr_object(obj)
    )''',
    ),
    (
        "rich/progress.py",
        "track",
        r'''def track(
    sequence: Iterable[ProgressType],
    description: str = "Working...",
    total: Optional[float] = None,
    completed: int = 0,
    auto_refresh: bool = True,
    console: Optional[Console] = None,
    transient: bool = False,
    get_time: Optional[Callable[[], float]] = None,
    refresh_per_second: float = 10,
    style: StyleType = "bar.back",
    complete_style: StyleType = "bar.complete",
    finished_style: StyleType = "bar.finished",
    pulse_style: StyleType = "bar.pulse",
    update_period: float = 0.1,
    disable: bool = False,
    show_speed: bool = True,
) -> Iterable[ProgressType]:
    """Track progress by iterating over a sequence.

    You can also track progress of an iterable, which might require that you additionally
    specify ``total``. A non-positive ``refresh_per_second`` falls back to 10.

    Returns:
        Iterable[ProgressType]: An iterable of the values in the sequence.
    """

    columns: List["ProgressColumn"] = (
        [TextColumn("[progress.description]{task.description}")] if description else []
    )
    columns.extend(
        (
            BarColumn(
                style=style,
                complete_style=complete_style,
                finished_style=finished_style,
                pulse_style=pulse_style,
            ),
            TaskProgressColumn(show_speed=show_speed),
            TimeRemainingColumn(elapsed_when_finished=True),
        )
    )
    if refresh_per_second <= 0:
        refresh_per_second = 10
    progress = Progress(
        *columns,
        auto_refresh=auto_refresh,
        console=console,
        transient=transient,
        get_time=get_time,
        refresh_per_second=refresh_per_second,
        disable=disable,
    )

    with progress:
        yield from progress.track(
            sequence,
            total=total,
            completed=completed,
            description=description,
            update_period=update_period,
        )''',
    ),
    (
        "rich/cells.py",
        "cell_len",
        r'''def cell_len(text: str, unicode_version: str = "auto") -> int:
    """Get the cell length of a string (length as it appears in the terminal).

    Args:
        text: String to measure.
        unicode_version: Unicode version, `"auto"` to auto detect, `"latest"` for the
            latest unicode version.

    Returns:
        Length of string in terminal cells.
    """
    if not text:
        return 0
    if len(text) < 512:
        return cached_cell_len(text, unicode_version)
    return _cell_len(text, unicode_version)''',
    ),
    (
        "rich/color.py",
        "blend_rgb",
        r'''def blend_rgb(
    color1: ColorTriplet, color2: ColorTriplet, cross_fade: float = 0.5
) -> ColorTriplet:
    """Blend one RGB color in to another (cross_fade is clamped to 0..1)."""
    cross_fade = min(1.0, max(0.0, cross_fade))
    r1, g1, b1 = color1
    r2, g2, b2 = color2
    return ColorTriplet(
        int(r1 + (r2 - r1) * cross_fade),
        int(g1 + (g2 - g1) * cross_fade),
        int(b1 + (b2 - b1) * cross_fade),
    )''',
    ),
    (
        "rich/control.py",
        "strip_control_codes",
        r'''def strip_control_codes(
    text: str, _translate_table: Dict[int, None] = _CONTROL_STRIP_TRANSLATE
) -> str:
    """Remove control codes from text.

    Args:
        text (str): A string possibly contain control codes.

    Returns:
        str: String with control codes removed.
    """
    if not text:
        return text
    return text.translate(_translate_table)''',
    ),
    (
        "rich/filesize.py",
        "pick_unit_and_suffix",
        r'''def pick_unit_and_suffix(size: int, suffixes: List[str], base: int) -> Tuple[int, str]:
    """Pick a suffix and base for the given size."""
    unit, suffix = 1, suffixes[0]
    for i, suffix in enumerate(suffixes):
        unit = base**i
        if size < unit * base:
            break
    return unit, suffix''',
    ),
    (
        "rich/markup.py",
        "escape",
        r'''def escape(
    markup: str,
    _escape: _EscapeSubMethod = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])").sub,
) -> str:
    """Escapes text so that it won't be interpreted as markup.

    Args:
        markup (str): Content to be inserted in to markup.

    Returns:
        str: Markup with square brackets escaped.
    """
    if "[" not in markup and not markup.endswith("\\"):
        return markup

    def escape_backslashes(match: Match[str]) -> str:
        """Called by re.sub replace matches."""
        backslashes, text = match.groups()
        return f"{backslashes}{backslashes}\\{text}"

    markup = _escape(escape_backslashes, markup)
    if markup.endswith("\\") and not markup.endswith("\\\\"):
        return markup + "\\"

    return markup''',
    ),
    (
        "rich/_ratio.py",
        "ratio_reduce",
        r'''def ratio_reduce(
    total: int, ratios: List[int], maximums: List[int], values: List[int]
) -> List[int]:
    """Divide an integer total in to parts based on ratios.

    Args:
        total (int): The total to divide.
        ratios (List[int]): A list of integer ratios.
        maximums (List[int]): List of maximums values for each slot.
        values (List[int]): List of values

    Returns:
        List[int]: A list of integers guaranteed to sum to total.
    """
    if not ratios:
        return []
    ratios = [ratio if _max else 0 for ratio, _max in zip(ratios, maximums)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return values[:]
    total_remaining = total
    result: List[int] = []
    append = result.append
    for ratio, maximum, value in zip(ratios, maximums, values):
        if ratio and total_ratio > 0:
            distributed = min(maximum, round(ratio * total_remaining / total_ratio))
            append(value - distributed)
            total_remaining -= distributed
            total_ratio -= ratio
        else:
            append(value)
    return result''',
    ),
    (
        "rich/_loop.py",
        "loop_first",
        r'''def loop_first(values: Iterable[T]) -> Iterable[Tuple[bool, T]]:
    """Iterate and generate a tuple with a flag for first value."""
    first = True
    for value in values:
        yield first, value
        first = False''',
    ),
]


def reply_text() -> str:
    parts = ["Here are the ten changes, one function per file:\n"]
    for path, name, code in CHANGES:
        parts.append(f"In `{path}`, `{name}`:\n\n```python path={path}\n{code}\n```\n")
    return "\n".join(parts)


# --------------------------------------------------------------------------- running & timing


@dataclass
class Run:
    seconds: float
    rc: int
    stdout: bytes
    stderr: bytes


CHILD_ENV: dict[str, str] = {}


def configure_env(base: Path, inherit: bool) -> None:
    """Isolated git identity/config; OPENAI_API_KEY for the loopback server.

    Unless `inherit`, tm's Python caches bytecode as on a normal install (in a prefix under
    `base`): sandboxes often set PYTHONDONTWRITEBYTECODE=1, which would make every start
    compile tm's modules.
    """
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = bench\n\temail = bench@example.invalid\n[init]\n\tdefaultBranch = main\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TM_", "GIT_")) and k != "OPENAI_API_BASE"
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        PATH=str(VENV_BIN) + os.pathsep + env.get("PATH", ""),
        OPENAI_API_KEY="x",
        COLUMNS="200",
    )
    if not inherit:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
    CHILD_ENV.clear()
    CHILD_ENV.update(env)


def run(cmd: Sequence[str], cwd: Path) -> Run:
    t0 = time.perf_counter()
    proc = subprocess.run(
        list(cmd), cwd=cwd, env=CHILD_ENV, stdin=subprocess.DEVNULL, capture_output=True
    )
    return Run(time.perf_counter() - t0, proc.returncode, proc.stdout, proc.stderr)


def must(cmd: Sequence[str], cwd: Path) -> Run:
    r = run(cmd, cwd)
    if r.rc != 0:
        raise SystemExit(
            f"command failed ({r.rc}): {' '.join(cmd)} in {cwd}\n"
            f"{r.stdout.decode(errors='replace')[-1000:]}\n"
            f"{r.stderr.decode(errors='replace')[-2000:]}"
        )
    return r


def med(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- setup


def build_repo(base: Path, packages: list[str]) -> Path:
    repo = base / "seed"
    repo.mkdir()
    for pkg in packages:
        shutil.copytree(
            SITE / pkg, repo / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    must(["git", "init", "-q", "-b", "main"], repo)
    must(["git", "add", "-A"], repo)
    must(["git", "commit", "-q", "--no-verify", "-m", "import"], repo)
    must(["git", "repack", "-adq"], repo)
    # The reply's functions must exist, undecorated and top level, in the copied files.
    for path, name, _code in CHANGES:
        tree = ast.parse((repo / path).read_text())
        if not any(
            isinstance(n, ast.FunctionDef) and n.name == name and not n.decorator_list
            for n in tree.body
        ):
            raise SystemExit(f"{path} has no top-level function {name}: update CHANGES")
    return repo


def ask(repo: Path) -> list[dict[str, Any]]:
    with ModelServer() as server:
        server.add(reply_text())
        r = must(
            [TM, "ask", PROMPT, "--json", "-m", "openai/test", "--api-base", server.openai_base],
            repo,
        )
    doc = json.loads(r.stdout)
    props: list[dict[str, Any]] = doc["proposals"]
    return props


def changed_files(repo: Path) -> list[str]:
    return sorted(must(["git", "diff", "--name-only"], repo).stdout.decode().split())


# --------------------------------------------------------------------------- measurements


def one_round(seed: Path, work: Path, i: int, errors: list[str]) -> dict[str, float] | None:
    copy = work / f"round-{i}"
    must(["cp", "-a", str(seed), str(copy)], work)
    try:
        version = run([TM, "--version"], copy)
        acc = run([TM, "accept", "--all"], copy)
        if acc.rc != 0:
            errors.append(f"tm accept exited {acc.rc}: {acc.stderr.decode(errors='replace')}")
            return None
        promoted = acc.stdout.decode(errors="replace").count("promoted ")
        expected = sorted(p for p, _n, _c in CHANGES)
        files = changed_files(copy)
        if promoted != len(CHANGES) or files != expected:
            errors.append(f"tm accept promoted {promoted}, changed {files}")
            return None
        patch = work / f"round-{i}.patch"
        patch.write_bytes(must(["git", "diff", "--binary"], copy).stdout)
        must(["git", "checkout", "--", "."], copy)
        if changed_files(copy):
            errors.append("git checkout -- . left changes")
            return None
        app = run(["git", "apply", str(patch)], copy)
        if app.rc != 0:
            errors.append(f"git apply exited {app.rc}: {app.stderr.decode(errors='replace')}")
            return None
        if must(["git", "diff", "--binary"], copy).stdout != patch.read_bytes():
            errors.append("git apply did not reproduce tm accept's result")
            return None
        return {"version": version.seconds, "accept": acc.seconds, "apply": app.seconds}
    finally:
        shutil.rmtree(copy, ignore_errors=True)


# Functions whose cumulative time splits `tm accept` (file suffix, function name).
SPLIT = [
    ("total", "tinymem/__main__.py", "<module>"),
    ("start-up: import tinymem.cli", "tinymem/cli.py", "<module>"),
    ("command (tinymem.accept.accept)", "tinymem/accept.py", "accept"),
    ("  load state (ledger.current)", "tinymem/ledger.py", "current"),
    ("  select proposals", "tinymem/accept.py", "select"),
    ("  gates (accept.plan)", "tinymem/accept.py", "plan"),
    ("    read work-tree files (_disk)", "tinymem/accept.py", "_disk"),
    ("    merge/splice (_merge)", "tinymem/accept.py", "_merge"),
    ("    Gate A (_gate_a)", "tinymem/accept.py", "_gate_a"),
    ("  apply (writes + ledger)", "tinymem/accept.py", "apply"),
    ("    writes (writing.atomic.write_atomic)", "tinymem/writing/atomic.py", "write_atomic"),
    ("    ledger commit (commit_episode)", "tinymem/ledger.py", "commit_episode"),
    ("      re-index written files (record_file)", "tinymem/transitions.py", "record_file"),
    ("      symbol extraction (extraction_for)", "tinymem/symcache.py", "extraction_for"),
    ("  open_repo", "tinymem/repository.py", "open_repo"),
    ("symbols.extract (all callers)", "tinymem/symbols/core.py", "extract"),
    ("symbols.analyze (all callers)", "tinymem/symbols/__init__.py", "analyze"),
    ("pycheck.python_problem (all callers)", "tinymem/symbols/pycheck.py", "python_problem"),
    ("os.fsync (all callers)", "~", "<built-in method posix.fsync>"),
]


def profile_split(seed: Path, work: Path) -> dict[str, Any]:
    copy = work / "profile"
    must(["cp", "-a", str(seed), str(copy)], work)
    prof = work / "accept.prof"
    try:
        must([PYTHON, "-m", "cProfile", "-o", str(prof), "-m", "tinymem", "accept", "--all"], copy)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    st = pstats.Stats(str(prof))
    raw: dict[Any, Any] = st.stats  # type: ignore[attr-defined]
    split: dict[str, float | None] = {}
    calls: dict[str, int] = {}
    for label, suffix, func in SPLIT:
        hits = [
            (ct, nc)
            for (fn, _line, f), (_cc, nc, _tt, ct, _callers) in raw.items()
            if f == func and fn.endswith(suffix)
        ]
        split[label] = max(h[0] for h in hits) if hits else None
        calls[label] = sum(h[1] for h in hits)
    s = io.StringIO()
    st2 = pstats.Stats(str(prof), stream=s)
    st2.sort_stats("cumulative").print_stats(r"tinymem", 25)
    st2.sort_stats("tottime").print_stats(10)
    st2.print_callers(r"python_problem|builtins.compile")
    return {"split_s": split, "calls": calls, "top": s.getvalue()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9, help="measured rounds per median")
    ap.add_argument("--warm", type=int, default=2, help="warm-up rounds (not measured)")
    ap.add_argument("--packages", default="rich,pygments", help="site-packages to copy")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--workdir", help="work here (default: a new temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary repositories")
    ap.add_argument(
        "--inherit-env",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE etc. as inherited (default: cache bytecode)",
    )
    args = ap.parse_args()
    packages = [p for p in args.packages.split(",") if p]
    if "rich" not in packages:
        raise SystemExit("the reply edits rich: --packages must include rich")
    if args.workdir:
        base = Path(args.workdir).resolve()
        base.mkdir(parents=True, exist_ok=True)
    else:
        base = Path(tempfile.mkdtemp(prefix="tm-bench-accept."))
    configure_env(base, args.inherit_env)
    log(f"work directory {base}")
    try:
        seed = build_repo(base, packages)
        n_files = len(must(["git", "ls-files"], seed).stdout.splitlines())
        r = must([TM, "init", "-q"], seed)
        log(f"seed: {n_files} files; tm init {r.seconds:.1f}s; tm ask ...")
        props = ask(seed)
        paths = sorted(str(p.get("path")) for p in props)
        if paths != sorted(p for p, _n, _c in CHANGES):
            raise SystemExit(f"tm ask made proposals for {paths}: {json.dumps(props)[:2000]}")
        log(f"seed: {len(props)} pending proposals")
        rounds: list[dict[str, float]] = []
        errors: list[str] = []
        for i in range(args.warm + args.runs):
            res_i = one_round(seed, base, i, errors)
            if res_i is None:
                log(f"round {i}: ERROR {errors[-1][:500]}")
                continue
            if i >= args.warm:
                rounds.append(res_i)
            log(
                f"round {i}{' (warm-up)' if i < args.warm else ''}: "
                + "  ".join(f"{k} {v * 1000:.1f}ms" for k, v in res_i.items())
            )
        if not rounds:
            raise SystemExit("no successful round: " + "; ".join(errors))
        m = {k: med([r[k] for r in rounds]) for k in rounds[0]}
        log("profiling one more accept ...")
        prof = profile_split(seed, base)
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
            "packages": packages,
            "files": n_files,
            "proposals": len(props),
            "runs": len(rounds),
            "bytecode_cache": not args.inherit_env,
            "samples_s": {k: [r[k] for r in rounds] for k in rounds[0]},
            "median_s": m,
            "accept_vs_apply": m["accept"] / m["apply"],
            "accept_vs_version": m["accept"] / m["version"],
            # Same-round pairs cancel slow drifts of a shared machine's load.
            "accept_vs_apply_paired": med([r["accept"] / r["apply"] for r in rounds]),
            "accept_vs_version_paired": med([r["accept"] / r["version"] for r in rounds]),
            "accept_minus_version_s": m["accept"] - m["version"],
            "profile": prof,
            "errors": sorted(set(errors)),
        }
        print(
            f"\ntm accept --all of 10 proposals in 10 files ({n_files}-file repo),"
            f" medians of {len(rounds)} rounds (ms)"
        )
        print(
            f"{'tm --version':>14} {'tm accept':>10} {'git apply':>10} {'acc/apply':>10}"
            f" {'(paired)':>9} {'acc/version':>12} {'(paired)':>9} {'acc-version':>12}"
        )
        print(
            f"{m['version'] * 1000:>14.0f} {m['accept'] * 1000:>10.0f} {m['apply'] * 1000:>10.1f}"
            f" {res['accept_vs_apply']:>10.0f} {res['accept_vs_apply_paired']:>9.0f}"
            f" {res['accept_vs_version']:>12.2f} {res['accept_vs_version_paired']:>9.2f}"
            f" {res['accept_minus_version_s'] * 1000:>12.0f}"
        )
        total = prof["split_s"].get("total") or float("nan")
        print(f"\ncProfile split of one `tm accept --all` (profiled total {total * 1000:.0f} ms)")
        for label, v in prof["split_s"].items():
            if v is None:
                print(f"  {label:<46} -")
            else:
                print(
                    f"  {label:<46} {v * 1000:>7.0f} ms  {v / total:>6.1%}"
                    f"  {prof['calls'][label]:>5} calls"
                )
        print(prof["top"])
        for e in res["errors"]:
            print(f"ERROR {e}")
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
