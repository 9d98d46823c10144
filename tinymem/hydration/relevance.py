"""How relevant each entity is to a request: the ranking behind hydration.

Scores add up, so evidence combines:
  - lexical relevance (BM25) of the request against each entity's symbol (counted three
    times), path and text, identifiers split at snake_case and camelCase, stop words dropped;
  - a qualified name in the request (`Progress.add_task`) that is, or ends, an entity's symbol:
    +1000, the strongest evidence there is;
  - a bare name that is an entity's last name: +100 divided by how many entities share that
    name (`update` or `__init__` alone say little), and a tenth of that when the name is also
    a common English word ("make", "get", "close") written plainly: in backticks, or with its
    file named, it counts in full;
  - the entity's file named in the request or given with --file: +30 (the file's entities are
    then ordered by relevance, not by position);
  - a top-level directory named in the request (`rich`, `httpx`): x1.5;
  - vendored code and stubs (`node_modules/`, `vendor/`, `third_party/`, typeshed, `.pyi`,
    `.d.ts`): x0.25, below the project's own code.
Measured on bench/ask_tasks.json (see bench/README.md). Pure and deterministic.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_QUALIFIED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_PATHISH = re.compile(r"[\w./-]+\.[A-Za-z0-9]+")
_STOP = frozenset(
    """a an the of to in on for and or is be as at by it its with from that this should when
    not no into so than then also only instead make made their them they are was can must like
    such any all one two""".split()  # noqa: SIM905
)
# Words of plain English that are also common method names: in a request they are usually
# the English word ("make the retry optional"), rarely a reference to `Foo.make`.
COMMON_WORDS = frozenset(
    """
    add all any apply build call cancel change check clean clear close copy count create
    data default delete do done draw dump empty end error exit fail fetch file fill filter
    find first fix flush format get handle has help hide index info init insert is item join
    keep key last leave length let list load lock log make map match merge move name new next
    open parse pass path pop print process push put read reload remove render repeat replace
    report request reset resolve response restore result retry return run save search send
    set setup show size skip sort split start state status step stop store test text
    time to type update use validate value view wait walk watch write
    """.split()  # noqa: SIM905
)
_VENDORED_DIRS = frozenset(
    {
        "node_modules",
        "vendor",
        "vendored",
        "third_party",
        "third-party",
        "thirdparty",
        "typeshed",
        "site-packages",
        "dist-packages",
        "bower_components",
    }
)
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_K1 = 1.2
_B = 0.75


_NORMAL: dict[str, str] = {}  # word part -> its term ("" when dropped); parts repeat a lot


def _normal(part: str) -> str:
    t = part.lower()
    if len(t) < 2 or t in _STOP:
        t = ""
    elif t.endswith("s") and len(t) > 3 and not t.endswith("ss"):
        t = t[:-1]
    _NORMAL[part] = t
    return t


def terms(text: str) -> list[str]:
    """Lower-cased word parts of identifiers and words, stop words dropped, plurals folded.

    One regex pass over the whole text: `_` and punctuation separate parts anyway.
    """
    known = _NORMAL
    out: list[str] = []
    for part in _PART.findall(text):
        t = known.get(part)
        if t is None:
            t = _normal(part)
        if t:
            out.append(t)
    return out


@dataclass(frozen=True)
class Doc:
    key: str
    path: str
    symbol: str  # qualified, "." separated; FILE_SYMBOL for a file-level entity
    text: str
    artifact: str = ""  # the text's blob id, when known: its terms are then counted once


# Term counts by (path, symbol, artifact): the same for every prompt, and a long-lived
# process (`tm serve`) ranks the same entities on every request. Keyed by content, so an
# entry is never stale; cleared whole when it grows past the bound.
_COUNTS: dict[tuple[str, str, str], tuple[Counter[str], int]] = {}
_COUNTS_BOUND = 400_000


def _counts(d: Doc) -> tuple[Counter[str], int]:
    key = (d.path, d.symbol, d.artifact)
    if d.artifact:
        hit = _COUNTS.get(key)
        if hit is not None:
            return hit
    c = Counter(terms(d.symbol) * 3 + terms(d.path) + terms(d.text))
    found = (c, sum(c.values()))
    if d.artifact:
        if len(_COUNTS) >= _COUNTS_BOUND:
            _COUNTS.clear()
        _COUNTS[key] = found
    return found


@dataclass(frozen=True)
class Request:
    words: frozenset[str]
    qualified: frozenset[str]
    paths: frozenset[str]
    terms: frozenset[str]
    code: frozenset[str]  # words written in backticks: meant as code, never as English

    @classmethod
    def parse(cls, prompt: str) -> Request:
        quoted = " ".join(_BACKTICKED.findall(prompt))
        return cls(
            words=frozenset(_WORD.findall(prompt)),
            qualified=frozenset(_QUALIFIED.findall(prompt)),
            paths=frozenset(p.strip("./") for p in _PATHISH.findall(prompt)),
            terms=frozenset(terms(prompt)),
            code=frozenset(_WORD.findall(quoted)),
        )


def vendored(path: str) -> bool:
    """Code the project carries but did not write: dependencies, stubs, typeshed."""
    parts = path.lower().split("/")
    if any(p in _VENDORED_DIRS for p in parts[:-1]):
        return True
    return parts[-1].endswith((".pyi", ".d.ts"))


def _file_named(path: str, req: Request, files: frozenset[str]) -> bool:
    return path in files or path in req.paths or path.rsplit("/", 1)[-1] in req.paths


@dataclass
class _Index:
    """What ranking needs of a set of docs whatever the prompt: their term counts, the
    statistics BM25 takes, and which docs hold a term, end in a name or sit in a file."""

    counted: list[tuple[Counter[str], int]]
    avgdl: float
    defs: Counter[str]  # last name part -> how many docs define it
    by_term: dict[str, list[int]]
    by_last: dict[str, list[int]]
    by_path: dict[str, list[int]]


# The index of the last docs ranked: a long-lived process (`tm serve`) ranks the same
# entities on every request, and only those sharing something with the prompt are scored.
_INDEX: tuple[tuple[str, ...], _Index] | None = None


def _index(docs: Sequence[Doc]) -> _Index:
    global _INDEX
    ident = tuple(f"{d.key}\0{d.artifact}" for d in docs)
    if _INDEX is not None and _INDEX[0] == ident and all(d.artifact for d in docs):
        return _INDEX[1]
    counted = [_counts(d) for d in docs]
    by_term: dict[str, list[int]] = {}
    by_last: dict[str, list[int]] = {}
    by_path: dict[str, list[int]] = {}
    for i, (d, (c, _)) in enumerate(zip(docs, counted, strict=True)):
        for t in c:
            by_term.setdefault(t, []).append(i)
        by_last.setdefault(d.symbol.rsplit(".", 1)[-1], []).append(i)
        by_path.setdefault(d.path, []).append(i)
    n = len(docs) or 1
    index = _Index(
        counted,
        (sum(dl for _, dl in counted) / n) or 1.0,
        Counter({last: len(found) for last, found in by_last.items()}),
        by_term,
        by_last,
        by_path,
    )
    _INDEX = (ident, index)
    return index


def rank(
    docs: Sequence[Doc],
    prompt: str,
    *,
    files: Sequence[str] = (),
    file_symbol: str = "@file",
) -> dict[str, float]:
    """Score of every doc (0 when nothing in the request points at it)."""
    req = Request.parse(prompt)
    given = frozenset(files)
    index = _index(docs)
    n = len(docs) or 1
    avgdl = index.avgdl
    df = {t: len(index.by_term.get(t, ())) for t in req.terms}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in req.terms}
    defs = index.defs
    scores = dict.fromkeys((d.key for d in docs), 0.0)
    # Only docs that share a term, a name or a named file with the request can score.
    named_files = [p for p in index.by_path if _file_named(p, req, given)]
    lasts = set(req.words) | {q.rsplit(".", 1)[-1] for q in req.qualified}
    pointed: set[int] = set()
    for t in req.terms:
        pointed.update(index.by_term.get(t, ()))
    for last in lasts:
        pointed.update(index.by_last.get(last, ()))
    for named_file in named_files:
        pointed.update(index.by_path[named_file])
    # What depends on the path alone, once per file rather than once per entity.
    per_path: dict[str, tuple[bool, float]] = {}
    for i in pointed:
        d = docs[i]
        c, dl = index.counted[i]
        s = 0.0
        for t in req.terms:
            f = c.get(t)
            if f:
                s += idf[t] * f * (_K1 + 1) / (f + _K1 * (1 - _B + _B * dl / avgdl))
        last = d.symbol.rsplit(".", 1)[-1]
        if d.symbol in req.qualified or any(q.endswith("." + d.symbol) for q in req.qualified):
            s += 1000
        elif last in req.words and d.symbol != file_symbol:
            named = _file_named(d.path, req, given)
            plain_word = last.lower() in COMMON_WORDS and last not in req.code and not named
            s += (10 if plain_word else 100) / defs[last]
        path = per_path.get(d.path)
        if path is None:
            top = d.path.split("/", 1)[0]
            boost = (
                1.5
                if "/" in d.path and (top in req.words or top.replace("_", "-") in prompt)
                else 1.0
            )
            path = per_path[d.path] = (
                _file_named(d.path, req, given),
                boost * (0.25 if vendored(d.path) else 1.0),
            )
        in_named_file, factor = path
        if in_named_file:
            s += 30
        scores[d.key] = s * factor
    return scores
