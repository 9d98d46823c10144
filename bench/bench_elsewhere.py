#!/usr/bin/env python3
"""How often the second-definition rule (`tinymem/edits/elsewhere.py`) would hold a definition
that real projects define in two files on purpose.

For each installed Python package named, every full symbol name that exactly two of its
files define (a function, method or type, no name shared by design, no test file, header or
stub, as the rule reads them) is a pair a real project keeps; the rule holds a reply adding
one of them beside the other when their identifiers' Jaccard reaches `SIMILAR`. Printed: the
pairs, how many the rule would hold, and those it holds (expected: copies of each other).
Nothing is timed.

Usage:
  .venv/bin/python bench/bench_elsewhere.py [PACKAGE ...]   # default: a few installed ones
"""

from __future__ import annotations

import sys
import sysconfig
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tinymem.edits.elsewhere import (  # noqa: E402
    _DECLARING,
    _TYPES,
    SIMILAR,
    _shared_by_design,
    similarity,
)
from tinymem.hydration.corpus import is_test_path  # noqa: E402
from tinymem.symbols import extract  # noqa: E402

DEFAULT = ["click", "aiohttp", "jinja2", "jsonschema", "httpx", "rich", "_pytest", "hypothesis"]


def main(packages: list[str]) -> None:
    site = Path(sysconfig.get_paths()["purelib"])
    pairs = 0
    held: list[tuple[float, str, str, str, str]] = []
    for package in packages:
        by_name: dict[str, dict[str, tuple[str, bytes]]] = defaultdict(dict)
        for file in sorted((site / package).rglob("*.py")):
            rel = str(file.relative_to(site))
            if is_test_path(rel) or rel.endswith(_DECLARING):
                continue
            data = file.read_bytes()
            for sym in extract(rel, data).symbols:
                by_name[sym.name.split("#")[0]].setdefault(
                    rel, (sym.kind, data[sym.start : sym.end])
                )
        for name, files in by_name.items():
            if len(files) != 2 or _shared_by_design(name):
                continue
            (a, (kind_a, text_a)), (b, (kind_b, text_b)) = files.items()
            if kind_a not in _TYPES or kind_b not in _TYPES:
                continue
            pairs += 1
            score = similarity("python", text_a, text_b)
            if score >= SIMILAR:
                held.append((round(score, 2), package, name, a, b))
    print(f"{pairs} names two files of one package define; the rule holds {len(held)}:")
    for row in sorted(held, reverse=True):
        print("  ", *row)


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT)
