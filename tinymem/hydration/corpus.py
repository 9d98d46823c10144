"""What ranking reads of the entities it ranks, whatever holds them: the persistent index
(`index.py`) or a list in memory (`MemoryCorpus`, for `rank` and the fallback).

Docs are numbered; a prompt asks only for the postings of its own terms, the docs named by
its words and files, and the `DocInfo` of the docs those hit. Each posting also carries an
`impact`: an upper bound of what it can add to its doc's score once the doc's own factors
are applied, so that ranking reads a term's postings best first and stops when nothing
unread can enter the top (`topk.py`).
"""

from __future__ import annotations

import bisect
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "FLAG_NONCODE",
    "FLAG_STUB",
    "FLAG_TEST",
    "Corpus",
    "DocInfo",
    "MemoryCorpus",
    "doc_flags",
    "impact",
    "kind_factor",
    "last_name",
    "plain_symbol",
    "vendored",
]

FLAG_TEST = 1  # in a test file or directory
FLAG_STUB = 2  # an `@overload` signature: the implementation is the entity that matters
FLAG_NONCODE = 4  # prose or data (rst, md, test data): shown when named or clearly the subject

# Comment lines may come first: an entity's span takes the comments above it.
_OVERLOAD = re.compile(
    rb"\A(?:[ \t]*(?:#[^\n]*)?\r?\n)*[ \t]*@(?:typing\.|t\.|typing_extensions\.)?overload\b"
)
# BM25's parameters and the factors a doc's kind puts on its score (`relevance.score`).
K1 = 1.2
B = 0.75
NONCODE_FACTOR = 0.2
TEST_FACTOR = 0.3
STUB_FACTOR = 0.05
VENDORED_FACTOR = 0.25

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
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "test-data"})
_NONCODE_EXTS = frozenset(
    """md rst txt text test json yaml yml toml ini cfg csv tsv xml html htm lock log svg po
    adoc asciidoc rdoc textile org in data out""".split()  # noqa: SIM905
)


def plain_symbol(symbol: str) -> str:
    """A symbol without the `#2` that numbers its redefinitions (overloads, setters)."""
    head, sep, tail = symbol.rpartition("#")
    return head if sep and tail.isdigit() else symbol


def last_name(symbol: str) -> str:
    return plain_symbol(symbol).rsplit(".", 1)[-1]


def is_test_path(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    if any(p in _TEST_DIRS for p in parts[:-1]):
        return True
    stem = name.rsplit(".", 1)[0]
    return (
        stem.startswith("test_")
        or stem.endswith(("_test", "_tests", ".test", ".spec"))
        or stem == "conftest"
    )


def is_noncode_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    if "." not in name.lstrip("."):
        return name.upper() == name or name in {"readme", "license", "changelog", "authors"}
    return name.rsplit(".", 1)[-1] in _NONCODE_EXTS


def vendored(path: str) -> bool:
    """Code the project carries but did not write: dependencies, stubs, typeshed."""
    parts = path.lower().split("/")
    if any(p in _VENDORED_DIRS for p in parts[:-1]):
        return True
    return parts[-1].endswith((".pyi", ".d.ts"))


def kind_factor(path: str, flags: int) -> float:
    """The factors that always apply to a doc the request neither names nor gives the file
    of (prose and data, stubs, vendored code). Tests' factor depends on the request, and the
    top-directory boost too: left out."""
    f = 1.0
    if flags & FLAG_NONCODE:
        f *= NONCODE_FACTOR
    if flags & FLAG_STUB:
        f *= STUB_FACTOR
    if vendored(path):
        f *= VENDORED_FACTOR
    return f


def impact(tf: int, length: int, kind: float, avgdl: float) -> float:
    """What one posting can add to its doc's score, before the term's idf, for a doc the
    request neither names nor gives the file of: BM25's term factor at mean length `avgdl`
    times the doc's `kind_factor`."""
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avgdl)) * kind


def impact_scale(avgdl: float, assumed: float) -> float:
    """How far an impact computed at mean length `assumed` may fall short of the real term
    factor at mean length `avgdl` (the index's mean moves with every tip).

    The length's share of the denominator scales by assumed / avgdl and nothing else in it
    does, so the factor grows by at most avgdl / assumed (and shrinks when it is less)."""
    return max(1.0, avgdl / assumed)


def doc_flags(path: str, head: bytes) -> int:
    """The kind of a doc from its path and the first bytes of its text."""
    flags = 0
    if is_test_path(path):
        flags |= FLAG_TEST
    if is_noncode_path(path):
        flags |= FLAG_NONCODE
    elif _OVERLOAD.match(head):
        flags |= FLAG_STUB
    return flags


@dataclass(frozen=True)
class DocInfo:
    id: int
    path: str
    symbol: str
    length: int  # terms counted, for BM25's length normalisation
    flags: int


class Corpus(ABC):
    @property
    @abstractmethod
    def size(self) -> int:
        """How many docs."""

    @property
    @abstractmethod
    def avgdl(self) -> float:
        """Their mean length in terms."""

    @abstractmethod
    def postings(self, term: str) -> dict[int, int]:
        """Doc id -> how often `term` occurs in it."""

    @property
    @abstractmethod
    def impact_avgdl(self) -> float:
        """The mean length the impacts of `by_impact` and `above` were computed at."""

    @abstractmethod
    def df(self, terms: Iterable[str]) -> dict[str, int]:
        """How many docs hold each term (absent: none), without reading the postings."""

    @abstractmethod
    def by_impact(
        self, term: str, after: tuple[float, int] | None, limit: int
    ) -> list[tuple[float, int]]:
        """Up to `limit` of `term`'s postings as (impact, doc), by impact descending (ties in
        one fixed order of doc ids), from the first after `after`, a row this returned."""

    @abstractmethod
    def above(
        self, weights: Mapping[str, float], at_least: float, limit: int | None
    ) -> list[tuple[float, int]]:
        """(bound, doc) of the docs whose postings of the terms of `weights`, each impact
        times its term's weight, add up to `at_least` or more: the `limit` highest (all with
        None), by that bound descending. A bound may be a little over the sum (the index
        rounds up: `lanesum`), never under it; ranking scores the docs it names exactly."""

    def bounds_at_hand(self, terms: Sequence[str]) -> bool:
        """Whether `above` over `terms` costs no reading of their postings (kept from an
        earlier request): ranking then starts from the summed bounds."""
        return False

    @abstractmethod
    def tfs(self, ids: Sequence[int], terms: Iterable[str]) -> dict[int, dict[str, int]]:
        """How often each of `terms` occurs in each of the docs `ids` (absent: not at all)."""

    @property
    @abstractmethod
    def tops(self) -> frozenset[str]:
        """The top-level directories docs may sit in (more is harmless: a bound is looser)."""

    @abstractmethod
    def named(self, lasts: Iterable[str]) -> dict[str, list[int]]:
        """Last name -> the docs whose symbol ends in it (`#N` left out)."""

    @abstractmethod
    def in_files(self, paths: Iterable[str], bases: Iterable[str]) -> list[int]:
        """The docs of the files at `paths` or whose file name is one of `bases`."""

    @abstractmethod
    def info(self, ids: Iterable[int]) -> dict[int, DocInfo]:
        """What ranking reads of each doc."""


class MemoryCorpus(Corpus):
    """Docs in memory: for `rank` over a list, and the fallback when the index file cannot be
    used."""

    def __init__(self) -> None:
        self.docs: list[DocInfo] = []
        self._postings: dict[str, dict[int, int]] = {}
        self._by_last: dict[str, list[int]] = {}
        self._by_path: dict[str, list[int]] = {}
        self._by_base: dict[str, list[int]] = {}
        self._total = 0
        self._tops: set[str] = set()
        self._ordered: dict[str, list[tuple[float, int]]] = {}  # by_impact's, made when asked

    def add(self, path: str, symbol: str, counts: Counter[str], flags: int) -> int:
        i = len(self.docs)
        length = sum(counts.values())
        self.docs.append(DocInfo(i, path, symbol, length, flags))
        self._total += length
        for t, f in counts.items():
            self._postings.setdefault(t, {})[i] = f
        self._by_last.setdefault(last_name(symbol), []).append(i)
        self._by_path.setdefault(path, []).append(i)
        self._by_base.setdefault(path.rsplit("/", 1)[-1], []).append(i)
        if "/" in path:
            self._tops.add(path.split("/", 1)[0])
        self._ordered.clear()
        return i

    @property
    def size(self) -> int:
        return len(self.docs)

    @property
    def avgdl(self) -> float:
        return (self._total / len(self.docs)) if self.docs and self._total else 1.0

    def postings(self, term: str) -> dict[int, int]:
        return self._postings.get(term, {})

    @property
    def impact_avgdl(self) -> float:
        return self.avgdl  # the impacts are computed again after every `add`

    def df(self, terms: Iterable[str]) -> dict[str, int]:
        return {t: len(self._postings[t]) for t in set(terms) if t in self._postings}

    def by_impact(
        self, term: str, after: tuple[float, int] | None, limit: int
    ) -> list[tuple[float, int]]:
        ordered = self._ordered.get(term)
        avgdl = self.avgdl
        if ordered is None:
            docs = self.docs
            ordered = sorted(
                (
                    (-impact(f, docs[i].length, kind_factor(docs[i].path, docs[i].flags), avgdl), i)
                    for i, f in self._postings.get(term, {}).items()
                ),
            )
            ordered = self._ordered[term] = [(-m, i) for m, i in ordered]
        start = 0
        if after is not None:
            start = bisect.bisect_right(ordered, (-after[0], after[1]), key=lambda p: (-p[0], p[1]))
        return ordered[start : start + limit]

    def above(
        self, weights: Mapping[str, float], at_least: float, limit: int | None
    ) -> list[tuple[float, int]]:
        sums: dict[int, float] = {}
        for t, w in weights.items():
            for m, i in self.by_impact(t, None, len(self._postings.get(t, ()))):
                sums[i] = sums.get(i, 0.0) + m * w
        found = sorted(((s, i) for i, s in sums.items() if s >= at_least), reverse=True)
        return found if limit is None else found[:limit]

    def tfs(self, ids: Sequence[int], terms: Iterable[str]) -> dict[int, dict[str, int]]:
        out: dict[int, dict[str, int]] = {i: {} for i in ids}
        for t in set(terms):
            p = self._postings.get(t, {})
            for i in ids:
                f = p.get(i)
                if f:
                    out[i][t] = f
        return out

    @property
    def tops(self) -> frozenset[str]:
        return frozenset(self._tops)

    def named(self, lasts: Iterable[str]) -> dict[str, list[int]]:
        return {n: self._by_last[n] for n in set(lasts) if n in self._by_last}

    def in_files(self, paths: Iterable[str], bases: Iterable[str]) -> list[int]:
        out: list[int] = []
        for p in set(paths):
            out.extend(self._by_path.get(p, ()))
        for b in set(bases):
            out.extend(self._by_base.get(b, ()))
        return out

    def info(self, ids: Iterable[int]) -> dict[int, DocInfo]:
        return {i: self.docs[i] for i in ids}
