#!/usr/bin/env python3
"""How long after `tm ask` starts its request reaches the model (issues 26 and 29).

Builds a small git repository in a temporary directory (never inside the project), `tm init`,
and starts the tests' loopback model server (OpenAI chat completions, streaming). Then,
interleaved over --runs rounds after one warm-up of each:

  reach     from spawning `tm ask "fix handler" -m openai/test --api-base LOOPBACK` to the
            moment the server received the chat request (both read CLOCK_MONOTONIC, which is
            one clock for every process on Linux)
  litellm   `python -c "import litellm"` with the environment tm sets before the import,
            start to exit

With --source DIR (e.g. an installed package's source) the repository also holds that tree, so
that hydration costs what it does on real code. With --baseline DIR (a directory holding
another version's `tinymem/` package, e.g. from `git archive COMMIT tinymem | tar -x -C DIR`),
`baseline` is the same `reach` with that version, interleaved in the same rounds: before and
after a change, in one run.

Target (issue 29): reach / litellm <= 1.1, i.e. the request leaves at about the time the
import alone would take, not after hydration plus the import. Medians and the median of
same-round ratios are printed and written as JSON.

Usage:
  .venv/bin/python bench/bench_reach.py [--runs 7] [--out FILE.json] [--baseline DIR] [--source DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_unreachable import IMPORT_LITELLM, one_file_repo  # noqa: E402

from tests.modelserver import ModelServer  # noqa: E402

REPLY = "Nothing to change.\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", default="bench/results/bench_reach.json")
    parser.add_argument("--baseline", help="a directory with another version's tinymem/")
    parser.add_argument(
        "--source", help="a source tree copied into the repository (hydration then costs more)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tm-bench-reach-") as tmp, ModelServer() as server:
        work, env = one_file_repo(Path(tmp), source=args.source)
        tm = [sys.executable, "-m", "tinymem"]
        ask = [*tm, "ask", "fix handler", "-m", "openai/test", "--api-base", server.openai_base]

        def reach(with_env: dict[str, str] = env) -> float:
            server.add(REPLY)
            before = len(server.chat_requests)
            start = time.monotonic()
            proc = subprocess.run(ask, cwd=work, env=with_env, capture_output=True, check=False)
            if proc.returncode != 0 or len(server.chat_requests) != before + 1:
                raise SystemExit(f"tm ask failed ({proc.returncode}): {proc.stderr.decode()}")
            return server.chat_requests[-1].time - start

        def litellm() -> float:
            start = time.monotonic()
            subprocess.run([sys.executable, "-c", IMPORT_LITELLM], env=env, check=True)
            return time.monotonic() - start

        old_env = {**env, "PYTHONPATH": str(Path(args.baseline).resolve())} if args.baseline else {}
        reach(), litellm()  # warm-up: page cache and bytecode
        times: dict[str, list[float]] = {"reach": [], "litellm": []}
        if old_env:
            reach(old_env)
            times["baseline"] = []
        for _ in range(args.runs):
            times["reach"].append(reach())
            times["litellm"].append(litellm())
            if old_env:
                times["baseline"].append(reach(old_env))
    ratios = [a / b for a, b in zip(times["reach"], times["litellm"], strict=True)]
    doc = {
        "runs": args.runs,
        "median_seconds": {k: statistics.median(v) for k, v in times.items()},
        "all_seconds": times,
        "reach_over_litellm_import": {
            "of_medians": statistics.median(times["reach"]) / statistics.median(times["litellm"]),
            "median_of_pairs": statistics.median(ratios),
        },
    }
    if "baseline" in times:
        doc["baseline_over_litellm_import"] = statistics.median(
            [a / b for a, b in zip(times["baseline"], times["litellm"], strict=True)]
        )
    for name, value in doc["median_seconds"].items():
        print(f"{name:8} median {value:.3f} s")
    print(f"reach / import litellm: {doc['reach_over_litellm_import']}")
    if "baseline" in times:
        print(f"baseline / import litellm (median of pairs): {doc['baseline_over_litellm_import']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
