#!/usr/bin/env python3
"""How long `tm ask` takes to say that nothing listens at the model endpoint (issue 26).

Builds a small git repository in a temporary directory (never inside the project), `tm init`,
then takes a loopback port that nothing listens on and runs, interleaved (--runs rounds after
one warm-up of each):

  ask       `tm ask "fix it" -m openai/test --api-base http://127.0.0.1:PORT/v1` as a process,
            from its start to its exit (expected: exit 6, "nothing listens at ...")
  litellm   `python -c "import litellm"` with the environment tm sets before the import
  version   `tm --version` (Python start-up and tm's CLI import: the floor)

Medians and the median of same-round ratios ask / litellm are printed and written as JSON.
Bytecode caching is on (this sandbox exports PYTHONDONTWRITEBYTECODE=1; the script unsets it
and sets PYTHONPYCACHEPREFIX under its temp dir), so no run pays for compiling.

Usage:
  .venv/bin/python bench/bench_unreachable.py [--runs 7] [--out FILE.json] [--tinymem-from DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMPORT_LITELLM = (
    "import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True');"
    " os.environ.setdefault('LITELLM_MODE', 'PRODUCTION'); import litellm"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, str]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, proc.returncode, proc.stderr.strip()


def one_file_repo(
    tmp: Path, tinymem_from: str | None = None, source: str | None = None
) -> tuple[Path, dict[str, str]]:
    """A one-file repository after `tm init`, and the environment its commands run with:
    bytecode cached under `tmp`, no user configuration, an API key for the loopback model.
    `source`: a directory copied in beside that file (under `src/`) before the commit."""
    work = tmp / "work"
    work.mkdir()
    if source:
        shutil.copytree(source, work / "src", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tinymem_from:
        env["PYTHONPATH"] = os.path.abspath(tinymem_from)
    env.update(
        {
            "PYTHONPYCACHEPREFIX": str(tmp / "pyc"),
            "HOME": str(tmp),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "b",
            "GIT_AUTHOR_EMAIL": "b@example.com",
            "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@example.com",
            "OPENAI_API_KEY": "sk-bench",
        }
    )
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=work, check=True)
    (work / "app.py").write_text("def handler(x):\n    return x + 1\n")
    subprocess.run(["git", "add", "."], cwd=work, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=work, check=True, env=env)
    subprocess.run([sys.executable, "-m", "tinymem", "init", "-q"], cwd=work, check=True, env=env)
    return work, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", default="bench/results/bench_unreachable.json")
    parser.add_argument(
        "--tinymem-from",
        help="a directory holding another tinymem package (e.g. an older commit's, from"
        " `git archive`), put first on PYTHONPATH to measure it instead",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tm-bench-unreachable-") as tmp:
        work, env = one_file_repo(Path(tmp), args.tinymem_from)
        tm = [sys.executable, "-m", "tinymem"]
        port = _free_port()
        base = f"http://127.0.0.1:{port}/v1"
        commands = {
            "ask": [*tm, "ask", "fix handler", "-m", "openai/test", "--api-base", base],
            "litellm": [sys.executable, "-c", IMPORT_LITELLM],
            "version": [*tm, "--version"],
        }
        for argv in commands.values():  # warm-up: page cache and bytecode
            _timed(argv, work, env)
        times: dict[str, list[float]] = {k: [] for k in commands}
        last: dict[str, tuple[int, str]] = {}
        for _ in range(args.runs):
            for name, argv in commands.items():
                seconds, code, err = _timed(argv, work, env)
                times[name].append(seconds)
                last[name] = (code, err)
        ratios = [a / b for a, b in zip(times["ask"], times["litellm"], strict=True)]
        doc = {
            "tinymem_from": args.tinymem_from,
            "runs": args.runs,
            "median_seconds": {k: statistics.median(v) for k, v in times.items()},
            "all_seconds": times,
            "ask_over_litellm_import": {
                "of_medians": statistics.median(times["ask"]) / statistics.median(times["litellm"]),
                "median_of_pairs": statistics.median(ratios),
            },
            "ask_exit": last["ask"][0],
            "ask_stderr": last["ask"][1],
        }
    for name, value in doc["median_seconds"].items():
        print(f"{name:8} median {value:.3f} s")
    print(f"ask / import litellm: {doc['ask_over_litellm_import']}")
    print(f"ask exit {doc['ask_exit']}: {doc['ask_stderr']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
