"""Containers (`symbols.containers`) cached by blob id: showing a member of a large file under
its class header costs a lookup, not a tree-sitter parse of the whole file (mypy's
checker.py, 200 KB: ~0.5 s on every prompt that showed one of its methods).

Lives in `.git/tinymem/symbols.sqlite` beside the symbol cache, in a table of its own;
derived data only: any failure of the cache is a miss, never an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from functools import lru_cache

from tinymem.gitobjects import blob_id
from tinymem.symbols.containers import Container, containers
from tinymem.symbols.languages import GRAMMAR_LANGUAGES
from tinymem.symbols.model import EXTRACTOR_VERSION

__all__ = ["CONTAINERS_VERSION", "known_containers"]

# Bump when `containers` finds something else for the same text; the grammars' version is
# part of EXTRACTOR_VERSION.
CONTAINERS_VERSION = "containers-1"

# This process's, by key: `tm serve` and a section rendered again while it does not fit.
_KNOWN: dict[str, tuple[Container, ...]] = {}
_KNOWN_BOUND = 256


def known_containers(
    cache_dir: str | None, language: str | None, data: bytes
) -> tuple[Container, ...]:
    """`containers(language, data)`, parsed once per text and kept under `cache_dir`."""
    if language is None or language not in GRAMMAR_LANGUAGES or cache_dir is None:
        return containers(language, data)
    key = f"{CONTAINERS_VERSION}+{EXTRACTOR_VERSION}:{language}:{_text_id(data)}"
    found = _KNOWN.get(key)
    if found is not None:
        return found
    db = _open(cache_dir)
    try:
        found = _stored(db, key)
        if found is None:
            found = containers(language, data)
            _store(db, key, found)
    finally:
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()
    if len(_KNOWN) >= _KNOWN_BOUND:
        _KNOWN.clear()
    _KNOWN[key] = found
    return found


@lru_cache(maxsize=64)
def _text_id(data: bytes) -> str:
    # Kept for the texts rendered last: a request renders a file's part again as the state
    # section shrinks, and `tm serve` renders the same files request after request.
    return blob_id(data)


def forget() -> None:
    """Drop this process's copies (the cache on disk stays): what a new process starts with."""
    _KNOWN.clear()
    _text_id.cache_clear()


def _open(cache_dir: str) -> sqlite3.Connection | None:
    try:
        db = sqlite3.connect(os.path.join(cache_dir, "symbols.sqlite"), timeout=10)
    except sqlite3.Error:
        return None
    try:
        db.execute("CREATE TABLE IF NOT EXISTS containers (key TEXT PRIMARY KEY, value TEXT)")
    except sqlite3.Error:
        with contextlib.suppress(sqlite3.Error):
            db.close()
        return None
    return db


def _stored(db: sqlite3.Connection | None, key: str) -> tuple[Container, ...] | None:
    if db is None:
        return None
    try:
        row = db.execute("SELECT value FROM containers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        found = tuple(Container(*fields) for fields in json.loads(row[0]))
    except (sqlite3.Error, ValueError, TypeError):
        return None
    numbers = (int, type(None))
    if all(isinstance(c.header, str) and _all(numbers, c) for c in found):
        return found
    return None  # not what `_store` writes: parsed again


def _all(types: tuple[type, ...], c: Container) -> bool:
    return all(
        isinstance(v, types) and not isinstance(v, bool)
        for v in (c.start, c.end, c.head_first, c.head_last, c.closer)
    )


def _store(db: sqlite3.Connection | None, key: str, found: tuple[Container, ...]) -> None:
    if db is None:
        return
    value = json.dumps(
        [[c.start, c.end, c.header, c.head_first, c.head_last, c.closer] for c in found]
    )
    with contextlib.suppress(sqlite3.Error), db:
        db.execute("INSERT OR REPLACE INTO containers (key, value) VALUES (?, ?)", (key, value))
