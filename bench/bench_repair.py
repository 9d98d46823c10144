#!/usr/bin/env python3
r"""Repair rounds: how many tasks end applied with `--repair 0` and with `--repair 1`, and what
a round costs in tokens.

Tasks: every reply of the corpus (`tests/edits/data/realreplies/`, replies as small models
write them against real files of public projects, see tests/edits/realcorpus.py) that lands
as it stands, turned into a two-turn script: the first reply is that reply broken the way
small models break it, the second is the reply itself. Breakages, chosen by the reply's
format and cycled over the code replies:

  syntax    the first `(` of its first block removed (the block no longer parses)
  elision   a line inside the first definition of its first block replaced by
            `... existing code ...` in the language's comment syntax
  hunk      (diffs, SEARCH/REPLACE) a context / SEARCH line changed so it matches nowhere

Each task runs `tinymem.ask.ask()` in this process (real litellm, real tree-sitter) against the
loopback model server of tests/modelserver.py, in a fresh repository holding the file, then
accepts every proposal for the file that passes its gates (what a user running `tm accept`
on the table would get). "applied" when the file then changes exactly as the case expects
(`realcorpus.effects`), "blocked" when nothing is written, "wrong" otherwise. A breakage that
does not block the first reply (the reply still lands) is reported as "not broken".

Tokens are tm's estimate (about four characters a token; the loopback server's counts are
words): the prompt of round 0 (system + hydrated request), the follow-up message, and the
whole prompt of round 1 (the conversation re-sent, follow-up included) plus its reply, which
is the extra cost of a round for an endpoint without prompt caching.

Nothing is timed. Usage:
  .venv/bin/python bench/bench_repair.py [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.edits.realcorpus import Case, effects, load_cases, make_repo  # noqa: E402
from tests.modelserver import ModelServer  # noqa: E402
from tinymem.accept import accept  # noqa: E402
from tinymem.ask import AskOptions, AskResult, ask  # noqa: E402
from tinymem.errors import TinymemError  # noqa: E402
from tinymem.hydration.hydrate import estimate_tokens  # noqa: E402
from tinymem.repository import open_repo  # noqa: E402
from tinymem.symbols import language_for_path  # noqa: E402

FENCE = "```"
HASH_COMMENT = {"python", "ruby"}


def _blocks(reply: str) -> list[tuple[int, int]]:
    """(first line, closing line) of each fenced block, as indexes into reply lines."""
    lines = reply.split("\n")
    out: list[tuple[int, int]] = []
    start: int | None = None
    for i, line in enumerate(lines):
        if line.lstrip().startswith(FENCE):
            if start is None:
                start = i + 1
            else:
                out.append((start, i))
                start = None
    return out


def _is_edit(reply: str) -> bool:
    return "<<<<<<< SEARCH" in reply or "\n@@ " in reply or reply.startswith("@@ ")


def break_reply(case: Case, kind: str) -> str | None:
    """The case's reply broken as `kind` says, or None when that breakage does not apply."""
    reply = case.reply
    lines = reply.split("\n")
    blocks = _blocks(reply)
    if not blocks:
        return None
    first, last = blocks[0]
    body = range(first, last)
    if kind == "hunk":
        for i in body:
            line = lines[i]
            if line.startswith(" ") and line.strip() and not line.startswith("  @@"):
                lines[i] = line + "  # changed"
                return "\n".join(lines)
            if line.startswith("<<<<<<< SEARCH") and i + 1 < last:
                lines[i + 1] = lines[i + 1] + " /* changed */"
                return "\n".join(lines)
        return None
    if kind == "syntax":
        for i in body:
            if "(" in lines[i]:
                lines[i] = lines[i].replace("(", "", 1)
                return "\n".join(lines)
        return None
    if kind == "elision":
        language = language_for_path(case.path) or ""
        mark = "# ... existing code ..." if language in HASH_COMMENT else "// ... existing code ..."
        code = [i for i in body if lines[i].strip()]
        # A line strictly inside the first definition: after its signature, before its end.
        heads = [i for i in code if "(" in lines[i]]
        if not heads:
            return None
        inner = [
            i
            for i in code
            if i > heads[0]
            and lines[i].strip() not in ("}", "end", "};")
            # never a definition's own header or decorator: that is a different breakage
            and not lines[i].rstrip().endswith((":", "{"))
            and not lines[i].lstrip().startswith("@")
        ]
        if len(inner) < 2:
            return None
        target = inner[len(inner) // 2 - 1] if len(inner) > 2 else inner[0]
        indent = lines[target][: len(lines[target]) - len(lines[target].lstrip())]
        lines[target] = indent + mark
        return "\n".join(lines)
    raise ValueError(kind)


def breakages(case: Case, index: int) -> list[str]:
    if _is_edit(case.reply):
        return ["hunk"]
    order = ["syntax", "elision"]
    return order[index % 2 :] + order[: index % 2]


def run(case: Case, broken: str, repair: int, where: Path, server: ModelServer) -> dict[str, Any]:
    repo_dir = make_repo(where, [case.file])
    repo = open_repo(str(repo_dir))
    before = (repo_dir / case.path).read_bytes()
    server.clear()
    server.add(broken, case.reply)
    flags: dict[str, str | None] = {
        "model": "openai/test",
        "apiBase": server.openai_base,
        "repair": str(repair),
    }
    result = ask(repo, AskOptions(prompt=case.request or "change it", flags=flags))
    ids = [p.id for p in result.live if p.path == case.path and p.blocked is None]
    if ids:
        try:
            accept(repo, ids)
        except TinymemError as exc:
            return {"outcome": "blocked", "detail": str(exc), **_tokens(result)}
    after = (repo_dir / case.path).read_bytes()
    if after == before:
        outcome, detail = "blocked", "; ".join(str(p.blocked) for p in result.live if p.blocked)
    else:
        problem = effects(case, before, after)
        outcome, detail = ("wrong", problem) if problem else ("applied", "")
    return {"outcome": outcome, "detail": detail, **_tokens(result)}


def _tokens(result: AskResult) -> dict[str, Any]:
    def prompt(messages: list[dict[str, str]]) -> int:
        return sum(estimate_tokens(m["content"]) for m in messages)

    rounds = result.rounds
    out: dict[str, Any] = {"rounds": len(rounds), "round0_prompt": prompt(rounds[0].messages)}
    if len(rounds) > 1 and rounds[0].follow_up is not None:
        reply = rounds[1].call.text if rounds[1].call is not None else ""
        out.update(
            follow_up=rounds[0].follow_up.tokens,
            round1_prompt=prompt(rounds[1].messages),
            round1_reply=estimate_tokens(reply),
        )
    out["stopped"] = result.stopped
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_repair.json")
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    cases = [c for c in load_cases() if "applied" in c.expect]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="tm-repair-") as tmp, ModelServer() as server:
        base = Path(tmp)
        for index, case in enumerate(cases):
            for kind in breakages(case, index):
                broken = break_reply(case, kind)
                if broken is None:
                    continue
                row: dict[str, Any] = {"case": case.name, "breakage": kind}
                for repair in (0, 1):
                    got = run(case, broken, repair, base / f"{case.name}-{repair}", server)
                    row[f"repair{repair}"] = got
                rows.append(row)
                break
    return report(rows, len(cases), args.out)


def _share(n: int, group: list[dict[str, Any]]) -> str:
    return f"{n} ({100 * n / len(group):.0f} %)" if group else str(n)


def report(rows: list[dict[str, Any]], total: int, out: Path) -> int:
    broken = [r for r in rows if r["repair0"]["outcome"] != "applied"]
    print(f"corpus replies that land as they stand: {total}; broken into tasks: {len(rows)}")
    print(f"breakages that did not block the first reply (not counted): {len(rows) - len(broken)}")
    print()
    print("| breakage | tasks | applied, --repair 0 | applied, --repair 1 | wrong |")
    print("| --- | --- | --- | --- | --- |")
    kinds = sorted({r["breakage"] for r in broken})
    wrong_total = 0
    for kind in [*kinds, "all"]:
        group = [r for r in broken if kind in ("all", r["breakage"])]
        a0 = sum(r["repair0"]["outcome"] == "applied" for r in group)
        a1 = sum(r["repair1"]["outcome"] == "applied" for r in group)
        wrong = sum(r[k]["outcome"] == "wrong" for r in group for k in ("repair0", "repair1"))
        if kind == "all":
            wrong_total = wrong
        print(f"| {kind} | {len(group)} | {_share(a0, group)} | {_share(a1, group)} | {wrong} |")
    costs = [r["repair1"] for r in broken if "round1_prompt" in r["repair1"]]
    summary: dict[str, Any] = {}
    if costs:
        for key in ("round0_prompt", "follow_up", "round1_prompt", "round1_reply"):
            summary[key] = statistics.median(c[key] for c in costs)
        extra = [c["round1_prompt"] + c["round1_reply"] for c in costs]
        ratio = [c["round1_prompt"] / c["round0_prompt"] for c in costs]
        summary["extra_median"] = statistics.median(extra)
        summary["round1_over_round0_median"] = round(statistics.median(ratio), 2)
        print()
        print(
            "tokens (estimate, median over tasks with a repair round): round 0 prompt"
            f" {summary['round0_prompt']}, follow-up {summary['follow_up']}, round 1 prompt"
            f" {summary['round1_prompt']} ({summary['round1_over_round0_median']}x round 0),"
            f" round 1 reply {summary['round1_reply']}; extra per round"
            f" {summary['extra_median']}"
        )
    not_sent = [r["case"] for r in broken if r["repair1"].get("stopped")]
    failed = [
        f"{r['case']} ({r['breakage']}): {r['repair1']['outcome']}: {r['repair1']['detail']}"
        for r in broken
        if r["repair1"]["outcome"] != "applied"
    ]
    for line in failed:
        print("NOT APPLIED WITH A ROUND:", line)
    if not_sent:
        print("follow-up not sent:", ", ".join(not_sent))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "tasks": rows}, indent=1) + "\n")
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
