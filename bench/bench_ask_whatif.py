#!/usr/bin/env python3
"""What-if for `tm ask` hydration: a prototype ranking scored on the same task set.

NOT tm's code and not a measurement of tm: it re-ranks the entities of the corpus that
bench_ask.py builds, packs them greedily into the same budgets with the same part format and
fixed costs, and scores the tasks of bench/ask_tasks.json the same way (target hydrated in
full, or an enclosing entity is). It exists to quantify suggestions for tinymem/hydrate.py:

  A  lexical relevance: BM25 over each entity's symbol (x3), path and text, identifiers split
     at snake_case/camelCase, lower-cased, stop words dropped, crude plural folding;
     + a qualified name in the request (`Progress.add_task`) that equals or ends an entity's
       symbol: +1000;
     + a bare name in the request that is an entity's last name: +100 / (number of entities
       with that name), i.e. weighted by rarity (`update`, `__init__` are weak evidence);
     + the entity's file is named in the request: +30 (ranked inside the file by relevance,
       not by position);
  B  A, and entities under a top-level package named in the request (`rich:`, `httpx`) x1.5.

Caution: B was tried after seeing A's failures on this task set; treat its gain as optimistic.

Usage: .venv/bin/python bench/bench_ask_whatif.py CORPUS   (CORPUS: bench_ask.py --keep/--workdir)
"""

from __future__ import annotations

import collections
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_ask as B

from tinymem.hydration.hydrate import estimate_tokens
from tinymem.records import FILE_SYMBOL
from tinymem.repository import open_repo

_STOP_WORDS = (
    "a an the of to in on for and or is be as at by it its with from that this should when not"
    " no into so than then also only instead make made their them they are was can must like"
    " such any all one two"
)
STOP = frozenset(_STOP_WORDS.split())
_SUB = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_QUAL = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def toks(text: str) -> list[str]:
    out = []
    for w in B._WORD.findall(text):
        for p in _SUB.findall(w):
            p = p.lower()
            if len(p) < 2 or p in STOP:
                continue
            if p.endswith("s") and len(p) > 3 and not p.endswith("ss"):
                p = p[:-1]
            out.append(p)
    return out


class Ranker:
    def __init__(self, ents: dict[str, B.Ent]) -> None:
        self.ents = ents
        self.docs = {
            k: collections.Counter(toks(e.symbol) * 3 + toks(e.path) + toks(e.text))
            for k, e in ents.items()
        }
        self.n = len(self.docs)
        self.avgdl = sum(sum(c.values()) for c in self.docs.values()) / self.n
        self.df: collections.Counter[str] = collections.Counter()
        for c in self.docs.values():
            self.df.update(c.keys())
        self.ndefs = collections.Counter(e.symbol.rsplit(".", 1)[-1] for e in ents.values())

    def bm25(self, q: set[str], key: str) -> float:
        c = self.docs[key]
        dl = sum(c.values())
        s = 0.0
        for t in q:
            f = c.get(t)
            if f:
                idf = math.log(1 + (self.n - self.df[t] + 0.5) / (self.df[t] + 0.5))
                s += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * dl / self.avgdl))
        return s

    def rank(self, prompt: str, packages: bool) -> list[tuple[float, str]]:
        words = set(B._WORD.findall(prompt))
        quals = set(_QUAL.findall(prompt))
        paths = {p.strip("./") for p in B._PATHISH.findall(prompt)}
        q = set(toks(prompt))
        scored = []
        for k, e in self.ents.items():
            s = self.bm25(q, k)
            last = e.symbol.rsplit(".", 1)[-1]
            if e.symbol in quals or any(x.endswith("." + e.symbol) for x in quals):
                s += 1000
            elif last in words and e.symbol != FILE_SYMBOL:
                s += 100 / self.ndefs[last]
            if e.path in paths or e.path.rsplit("/", 1)[-1] in paths:
                s += 30
            top = e.path.split("/", 1)[0]
            if packages and (top in words or top.replace("_", "-") in prompt):
                s *= 1.5
            scored.append((s, k))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return scored


def pack(
    prompt: str, budget: int, scored: list[tuple[float, str]], ents: dict[str, B.Ent], langs: Any
) -> tuple[list[str], int]:
    fixed = B._fixed_tokens(prompt)
    room = budget - fixed - 16
    got: list[str] = []
    used = fixed
    for s, k in scored:
        if s <= 0:
            break
        e = ents[k]
        if any(
            ents[h].path == e.path and ents[h].start <= e.start and e.end <= ents[h].end
            for h in got
        ):
            continue
        cost = estimate_tokens(B._part(e.path, e.symbol, langs[e.path], e.text))
        if cost <= room:
            room -= cost
            got.append(k)
            used += cost
    return got, used


def main() -> None:
    corpus = sys.argv[1]
    ents, _files, langs = B.load_entities(open_repo(corpus))
    tasks = json.loads(B.TASKS_FILE.read_text())["tasks"]
    ranker = Ranker(ents)
    print("| variant | budget | requests | tokens | in full |")
    print("|---|---:|---|---:|---:|")
    fails: dict[str, list[str]] = {}
    for variant, packages in (("A", False), ("B", True)):
        res: dict[tuple[int, str], list[tuple[bool, int]]] = collections.defaultdict(list)
        for t in tasks:
            scored = ranker.rank(t["prompt"], packages)
            for b in B.BUDGETS:
                got, used = pack(t["prompt"], b, scored, ents, langs)
                ok = B.covered(ents[t["target"]], got, ents)
                res[(b, t["kind"])].append((ok, used))
                if b == 2000 and not ok:
                    pos = [k for _, k in scored].index(t["target"])
                    fails.setdefault(variant, []).append(f"{t['id']} (rank {pos + 1})")
        for b in B.BUDGETS:
            for kind in ("named", "described"):
                v = res[(b, kind)]
                print(
                    f"| {variant} | {b} | {kind} | {sum(u for _, u in v) / len(v):.0f}"
                    f" | {sum(o for o, _ in v) / len(v):.0%} |"
                )
    for variant, f in fails.items():
        print(f"{variant} misses at 2000: {', '.join(f)}")


if __name__ == "__main__":
    main()
