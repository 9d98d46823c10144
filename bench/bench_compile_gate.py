#!/usr/bin/env python3
"""What Gate A's compile check of Python (`tinymem.edits.splice.syntax.compile_problem`) adds
to the parse it already does, on the largest real Python files of tests/data/realcode.

Per file, in the same run: tree-sitter + `ast` (what `analyze` did before, the baseline) and
the bytecode compile added on top (compile_problem asks it of the file before and of the merged
text after; both are cached by text, so an accept compiles each text once). Printed: the
median of `--repeat` runs in ms and the ratio compile / baseline. Caches are bypassed.

Usage:
  .venv/bin/python bench/bench_compile_gate.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tinymem.symbols.pycheck import python_compile_problem, python_problem  # noqa: E402
from tinymem.symbols.treesitter import analyze as ts_analyze  # noqa: E402

REALCODE = HERE.parent / "tests" / "data" / "realcode"


def _ms(run: Callable[[], None], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    files = sorted(REALCODE.rglob("*.py"), key=lambda p: p.stat().st_size, reverse=True)[:3]
    print(f"{'file':45} {'bytes':>7} {'parse ms':>9} {'compile ms':>11} {'ratio':>6}")
    for path in files:
        data = path.read_bytes()
        assert python_compile_problem.__wrapped__(data) is None, path

        def parse(data: bytes = data) -> None:
            ts_analyze("python", data)
            python_problem.__wrapped__(data)

        def compiled(data: bytes = data) -> None:
            python_compile_problem.__wrapped__(data)

        base, extra = _ms(parse, args.repeat), _ms(compiled, args.repeat)
        name = str(path.relative_to(REALCODE))
        print(f"{name:45} {len(data):>7} {base:>9.2f} {extra:>11.2f} {extra / base:>6.2f}")


if __name__ == "__main__":
    main()
