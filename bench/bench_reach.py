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

Target (issue 29): reach / litellm <= 1.1, i.e. the request leaves at about the time the
import alone would take, not after hydration plus the import. Medians and the median of
same-round ratios are printed and written as JSON.

Usage:
  .venv/bin/python bench/bench_reach.py [--runs 7] [--out FILE.json]
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tm-bench-reach-") as tmp, ModelServer() as server:
        work, env = one_file_repo(Path(tmp))
        tm = [sys.executable, "-m", "tinymem"]
        ask = [*tm, "ask", "fix handler", "-m", "openai/test", "--api-base", server.openai_base]

        def reach() -> float:
            server.add(REPLY)
            before = len(server.chat_requests)
            start = time.monotonic()
            proc = subprocess.run(ask, cwd=work, env=env, capture_output=True, check=False)
            if proc.returncode != 0 or len(server.chat_requests) != before + 1:
                raise SystemExit(f"tm ask failed ({proc.returncode}): {proc.stderr.decode()}")
            return server.chat_requests[-1].time - start

        def litellm() -> float:
            start = time.monotonic()
            subprocess.run([sys.executable, "-c", IMPORT_LITELLM], env=env, check=True)
            return time.monotonic() - start

        reach(), litellm()  # warm-up: page cache and bytecode
        times: dict[str, list[float]] = {"reach": [], "litellm": []}
        for _ in range(args.runs):
            times["reach"].append(reach())
            times["litellm"].append(litellm())
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
    for name, value in doc["median_seconds"].items():
        print(f"{name:8} median {value:.3f} s")
    print(f"reach / import litellm: {doc['reach_over_litellm_import']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
