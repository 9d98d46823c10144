"""What ranking reads of the entities it ranks, whatever holds them: the persistent index
(`index.py`) or a list in memory (`MemoryCorpus`, for `rank` and the fallback).

Docs are numbered; a prompt asks only for the postings of its own terms, the docs named by
its words and files, and the `DocInfo` of the docs those hit.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "FLAG_NONCODE",
    "FLAG_STUB",
    "FLAG_TEST",
    "Corpus",
    "DocInfo",
    "MemoryCorpus",
    "doc_flags",
    "last_name",
    "plain_symbol",
]

FLAG_TEST = 1  # in a test file or directory
FLAG_STUB = 2  # an `@overload` signature: the implementation is the entity that matters
FLAG_NONCODE = 4  # prose or data (rst, md, test data): shown when named or clearly the subject

# Comment lines may come first: an entity's span takes the comments above it.
_OVERLOAD = re.compile(
    rb"\A(?:[ \t]*(?:#[^\n]*)?\r?\n)*[ \t]*@(?:typing\.|t\.|typing_extensions\.)?overload\b"
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
        return i

    @property
    def size(self) -> int:
        return len(self.docs)

    @property
    def avgdl(self) -> float:
        return (self._total / len(self.docs)) if self.docs and self._total else 1.0

    def postings(self, term: str) -> dict[int, int]:
        return self._postings.get(term, {})

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
