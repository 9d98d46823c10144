"""A new definition that another tracked file already has: the reply's path is likely wrong.

A small model asked to fix `merge_hooks` (in `sessions.py`) may name another file it was
shown (`structures.py`) or misspell the path (`session.py`, a new file): the definition would
be added there as a second copy, and the real one left as it was. So a definition a reply
adds to a file that lacks it is held for the user when:

- its name (class-qualified for a member: `Session.close`, so an override in a subclass of
  another name never counts) is defined in exactly one other live file, and is no name that
  files share by design: `main`, dunders (`__init__`), test set-up and tear-down, `test…`
  functions, nor in test files;
- that definition is a function, method or type (not a variable: `R = TypeVar("R")` reads
  alike everywhere), the other file is no header or type stub and this one no type stub (a
  declaration there, the definition in the source file, by design; but a C or C++ header
  given a definition with its body, `double Square::area() const {…}`, gets a second
  definition of what the source file defines), and the two texts share at least 70% of
  their identifiers (Jaccard).
  Measured on Python packages this project installs (`bench/bench_elsewhere.py`: click,
  aiohttp, jinja2, jsonschema, httpx, rich, _pytest, hypothesis): of the 39 names two of a
  package's files define, those that are not copies of each other score 0.56 at most, the
  3 copies 0.76 and up.

Not when the request names the file the reply adds it to (its path or file name, or a `-f`
file): it is then where the user asked for it (a platform's own implementation beside the
other's). A held proposal is INFERRED with placement `elsewhere`: `tm accept` blocks it
naming the other file, and `tm accept ID --path FILE` is the user confirming the second
definition.

The lookup is the relevance index's (`tinymem.hydration.index`: entities by last name, kept
at the State Map's tip); without a cache directory, the State Map's records are read once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tinymem.edits.alignment import leaf, plain
from tinymem.edits.namespaces import ENTRY_POINTS
from tinymem.hydration.corpus import Corpus, is_test_path
from tinymem.hydration.index import rank_with
from tinymem.statemap import StateView
from tinymem.symbols import identifiers, language_for_path

__all__ = ["SIMILAR", "Definitions", "defined_elsewhere", "similarity"]

SIMILAR = 0.7
# Names many files define on purpose: a program's entry point, test fixtures.
_SHARED = ENTRY_POINTS | frozenset(
    {
        "setUp",
        "tearDown",
        "setUpClass",
        "tearDownClass",
        "setup",
        "teardown",
        "setup_method",
        "teardown_method",
        "setup_module",
        "teardown_module",
    }
)
# Definitions that one name means once; not variables, nor containers a language reopens
# across files (Ruby modules, Rust impls, C++ namespaces).
_TYPES = frozenset({"function", "method", "class", "struct", "interface", "enum", "trait", "type"})
# Declarations that stand for a definition made elsewhere: a header, a type stub.
_DECLARING = (".h", ".hh", ".hpp", ".hxx", ".pyi", ".d.ts", ".d.mts", ".d.cts")
_STUBS = (".pyi", ".d.ts", ".d.mts", ".d.cts")


@dataclass
class Definitions:
    """Where each name is defined in the State Map: `(path, symbol)` by last name."""

    view: StateView
    cache_dir: str | None
    _scanned: dict[str, list[tuple[str, str]]] | None = field(default=None, repr=False)

    def named(self, lasts: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
        wanted = sorted(set(lasts))
        if not wanted:
            return {}
        if self.cache_dir is not None:
            return rank_with(self.view, self.cache_dir, lambda c: _from_corpus(c, wanted))
        if self._scanned is None:
            self._scanned = {}
            for meta in self.view.all_meta():
                if meta.deleted:
                    continue
                for rec in meta.live_entities():
                    self._scanned.setdefault(leaf(rec.symbol), []).append((meta.path, rec.symbol))
        return {n: self._scanned[n] for n in wanted if n in self._scanned}


def _from_corpus(corpus: Corpus, lasts: list[str]) -> dict[str, list[tuple[str, str]]]:
    ids = corpus.named(lasts)
    info = corpus.info(i for found in ids.values() for i in found)
    return {
        last: [(info[i].path, info[i].symbol) for i in found if i in info]
        for last, found in ids.items()
    }


def similarity(language: str | None, a: bytes, b: bytes) -> float:
    """Jaccard of the two texts' identifiers."""
    mine, theirs = identifiers(language, a), identifiers(language, b)
    union = mine | theirs
    return len(mine & theirs) / len(union) if union else 0.0


def _shared_by_design(symbol: str) -> bool:
    name = leaf(symbol)
    return (
        name in _SHARED
        or name.lower().startswith("test")
        or (name.startswith("__") and name.endswith("__"))
    )


def defined_elsewhere(
    definitions: Definitions, path: str, added: list[tuple[str, bytes]]
) -> tuple[str, str] | None:
    """(symbol, other file) for the first of `added` (symbol, text: definitions a proposal
    adds to `path`) that another live file already defines alike (module docstring)."""
    if is_test_path(path) or path.endswith(_STUBS):
        return None
    candidates = [(s, t) for s, t in added if not _shared_by_design(s)]
    if not candidates:
        return None
    found = definitions.named(leaf(s) for s, _ in candidates)
    view = definitions.view
    for symbol, text in candidates:
        same = [(p, s) for p, s in found.get(leaf(symbol), []) if plain(s) == plain(symbol)]
        files = {p for p, _ in same if p != path}
        if len(files) != 1 or any(p == path for p, _ in same):
            continue
        (other,) = files
        if is_test_path(other) or other.endswith(_DECLARING):
            continue
        meta = view.meta(other)
        if meta is None or meta.deleted:
            continue
        for _, s in same:
            rec = meta.entities.get(s)
            if rec is None or rec.kind not in _TYPES:
                continue
            theirs = view.blob(rec.artifact)
            if similarity(language_for_path(path), text, theirs) >= SIMILAR:
                return symbol, other
    return None
