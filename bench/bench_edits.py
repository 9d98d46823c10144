#!/usr/bin/env python3
r"""Edit success on real code: how often a reply lands exactly, is blocked, or would write
wrong code, per reply shape and language. Target: 0 wrong.

Two sources, both against files of public projects no one here wrote
(`tests/data/realcode/`, see SOURCES.md there):

1. the reply corpus (`tests/edits/data/realreplies/`, 85 replies in nine languages, written
   the way small models write them; see tests/edits/realcorpus.py): judged by its effects
   through the real pipeline (proposals built on a real State Map, then the accept plan):
   "applied" (every expected effect, nothing else), "blocked" (nothing would be written) or
   "wrong"; a case whose expectation is a block counts as "blocked as expected";
2. generated edits (tests/edits/generated.py, as the property test): for N members of
   every corpus file drawn with a fixed seed, a comment line put in the member's body, sent
   in six shapes — the member at its class's indentation, dedented, re-indented with another
   unit, inside tm's own excerpt, as a unified diff, as a SEARCH/REPLACE block: "applied"
   when the file after accept equals the expected file (indented, excerpt, diff, S/R) or
   every other definition keeps its bytes and the member holds the new text (dedented,
   re-indented), "blocked", or "wrong".

Nothing is timed. Usage:
  .venv/bin/python bench/bench_edits.py [--members 12] [--seed 1] [--corpus-only] [--out FILE]
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.edits import generated as gen  # noqa: E402
from tests.edits.generated import outcome as judge_generated  # noqa: E402
from tests.edits.realcorpus import judge, load_cases, make_repo, repos_for  # noqa: E402
from tinymem.symbols import language_for_path  # noqa: E402

Table = dict[tuple[str, str], collections.Counter[str]]


def corpus(base: Path) -> tuple[Table, list[str]]:
    table: Table = collections.defaultdict(collections.Counter)
    wrong: list[str] = []
    for repo, group in repos_for(load_cases(), base):
        for case in group:
            verdict = judge(repo, case)
            outcome = verdict.outcome
            if outcome == "blocked" and "blocked" in case.expect:
                outcome = "blocked as expected"
            elif outcome == "applied" and "blocked" in case.expect:
                outcome = "wrong"  # it should have been refused
            table[(case.shape, case.language)][outcome] += 1
            if outcome == "wrong":
                wrong.append(f"{case.name}: {verdict.detail} {verdict.reasons}")
    return table, wrong


def generated(base: Path, members: int, seed: int) -> tuple[Table, list[str]]:
    table: Table = collections.defaultdict(collections.Counter)
    wrong: list[str] = []
    repo = make_repo(base / "generated", gen.FILES, keep_project=True)
    rng = random.Random(seed)
    for file in gen.FILES:
        pool = gen.members(file)
        chosen = rng.sample(pool, min(members, len(pool)))
        language = language_for_path(file) or "other"
        for sym in chosen:
            for shape in gen.SHAPES:
                outcome, detail = judge_generated(repo, file, sym, shape)
                if outcome == "skip":
                    continue
                table[(shape, language)][outcome] += 1
                if outcome == "wrong":
                    wrong.append(f"{file} {sym.name} {shape}: {detail}")
    return table, wrong


def render(title: str, table: Table, columns: list[str]) -> str:
    lines = [f"### {title}", "", "| shape | language | " + " | ".join(columns) + " |"]
    lines.append("| --- | --- | " + " | ".join("---:" for _ in columns) + " |")
    totals: collections.Counter[str] = collections.Counter()
    for (shape, language), counts in sorted(table.items()):
        totals.update(counts)
        cells = " | ".join(str(counts.get(c, 0)) for c in columns)
        lines.append(f"| {shape} | {language} | {cells} |")
    lines.append("| **all** | | " + " | ".join(f"**{totals.get(c, 0)}**" for c in columns) + " |")
    return "\n".join(lines)


def by_language(table: Table) -> Table:
    """The same verdicts summed per language (every shape)."""
    out: Table = collections.defaultdict(collections.Counter)
    for (_shape, language), counts in table.items():
        out[("(every shape)", language)].update(counts)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--members", type=int, default=12, help="members drawn per corpus file")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus-only", action="store_true", help="skip the generated edits")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_edits.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tm-edits-") as tmp:
        base = Path(tmp)
        corpus_table, corpus_wrong = corpus(base)
        gen_table, gen_wrong = (
            ({}, []) if args.corpus_only else generated(base, args.members, args.seed)
        )
    columns = ["applied", "blocked as expected", "blocked", "wrong"]
    print(render("Reply corpus", corpus_table, columns))
    print()
    print(render("Reply corpus per language", by_language(corpus_table), columns))
    if not args.corpus_only:
        print()
        print(render("Generated edits", gen_table, ["applied", "blocked", "wrong"]))
    for line in corpus_wrong + gen_wrong:
        print("WRONG:", line)
    report: dict[str, Any] = {
        "members_per_file": args.members,
        "seed": args.seed,
        "corpus": {f"{s}/{lang}": dict(c) for (s, lang), c in sorted(corpus_table.items())},
        "generated": {f"{s}/{lang}": dict(c) for (s, lang), c in sorted(gen_table.items())},
        "wrong": corpus_wrong + gen_wrong,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 1 if corpus_wrong or gen_wrong else 0


if __name__ == "__main__":
    sys.exit(main())
