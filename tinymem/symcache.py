"""Symbol extraction cached by blob id: re-indexing an unchanged file costs one lookup.

Lives in `.git/tinymem/symbols.sqlite`; derived data only. Any failure of the cache is a miss,
never an error: the cache can always be deleted and rebuilt.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable

from tinymem.symbols import EXTRACTOR_VERSION, Extraction, Symbol, extract, language_for_path


def _lang_key(path: str) -> str:
    lang = language_for_path(path)
    if lang is not None:
        return lang
    base = os.path.basename(path).lower()
    ext = os.path.splitext(base)[1]
    return "ext" + (ext or ":" + base)


def _worth_caching(path: str) -> bool:
    """Whether extracting costs more than a lookup. With no grammar and no regex patterns for
    its extension (Markdown, JSON, text), a file is one entity whatever it holds."""
    if language_for_path(path) is not None:
        return True
    # Imported here: the regex fallback's module and its imports cost ~6 ms, which `tm status` on
    # modified source files never needs.
    from tinymem.symbols.regex import regex_language_for_path

    return regex_language_for_path(path) is not None


def _encode(ex: Extraction) -> str:
    return json.dumps(
        [
            ex.language,
            ex.method,
            ex.clean,
            ex.reason,
            [[s.name, s.kind, s.start, s.end, s.parent] for s in ex.symbols],
        ]
    )


def _decode(raw: str) -> Extraction:
    language, method, clean, reason, symbols = json.loads(raw)
    return Extraction(
        language=language,
        method=method,
        symbols=tuple(Symbol(n, k, s, e, p) for n, k, s, e, p in symbols),
        clean=clean,
        reason=reason,
    )


def _set_up(db: sqlite3.Connection) -> None:
    """WAL mode and the table. Processes that open a new cache at the same moment (the
    workers of a first `tm init`) contend for the lock that turning WAL on takes, and SQLite
    refuses the loser at once instead of waiting: it retries, or it would run without a cache.
    Only for a second: a lock held longer has already cost the busy timeout, and is an error."""
    deadline = time.monotonic() + _SETUP_RETRY_SECONDS
    pause = 0.005
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")
            db.execute("CREATE TABLE IF NOT EXISTS symbols (key TEXT PRIMARY KEY, value TEXT)")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause *= 1.5


_SETUP_RETRY_SECONDS = 1.0


class SymbolCache:
    def __init__(self, cache_dir: str) -> None:
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[str, str]] = []
        self._prefetched: dict[str, Extraction | None] = {}  # None: looked up, not there
        # Nothing stored by this extractor version when opened (a first `tm init`): then every
        # lookup would miss, and 50,000 of them cost ~0.3 CPU-s, so none is made. Rows that
        # other processes add meanwhile are only missed: a miss costs a parse, never a result.
        self._nothing_stored = False
        db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(os.path.join(cache_dir, "symbols.sqlite"), timeout=10)
            _set_up(db)
            prefix = f"{EXTRACTOR_VERSION}:"
            found = db.execute(
                "SELECT 1 FROM symbols WHERE key >= ? AND key < ? LIMIT 1",
                (prefix, prefix[:-1] + chr(ord(":") + 1)),
            ).fetchone()
            self._nothing_stored = found is None
            self._db = db
        except sqlite3.Error:
            if db is not None:
                with contextlib.suppress(sqlite3.Error):
                    db.close()

    def key(self, path: str, oid: str) -> str:
        return f"{EXTRACTOR_VERSION}:{_lang_key(path)}:{oid}"

    def get_many(self, keys: Iterable[str]) -> dict[str, Extraction]:
        found: dict[str, Extraction] = {}
        if self._db is None or self._nothing_stored:
            return found
        wanted = list(keys)
        try:
            for i in range(0, len(wanted), 500):
                chunk = wanted[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, value FROM symbols WHERE key IN ({marks})", chunk
                )
                for key, value in rows:
                    found[key] = _decode(value)
        except (sqlite3.Error, ValueError):
            return {}
        return found

    def put(self, key: str, ex: Extraction) -> None:
        self._pending.append((key, _encode(ex)))

    def prefetch(self, files: Iterable[tuple[str, str]]) -> None:
        """Look up many (path, blob id) at once: one query per 500 instead of one per file."""
        if self._db is None or self._nothing_stored:
            return  # every lookup would miss
        keys = [self.key(p, o) for p, o in files if _worth_caching(p)]
        found = self.get_many(keys)
        for key in keys:
            self._prefetched[key] = found.get(key)

    def extract(self, path: str, oid: str, data: bytes) -> Extraction:
        if not _worth_caching(path):
            return extract(path, data)
        key = self.key(path, oid)
        known = key in self._prefetched
        hit = self._prefetched[key] if known else self.get_many([key]).get(key)
        if hit is not None:
            return hit
        ex = extract(path, data)
        self.put(key, ex)
        return ex

    def commit(self) -> None:
        """Store what was extracted since the last commit (and forget what was prefetched, so a
        long-lived cache does not grow)."""
        self._prefetched.clear()
        if self._db is None or not self._pending:
            self._pending.clear()
            return
        try:
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO symbols (key, value) VALUES (?, ?)", self._pending
                )
        except sqlite3.Error:
            pass
        self._pending.clear()

    def close(self) -> None:
        self.commit()
        if self._db is None:
            return
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
        self._db = None


def extraction_for(
    cache: SymbolCache, path: str, oid: str, data: bytes, kind: str
) -> Extraction | None:
    """Entities of a file's text; None for binary and over-size files (snapshot only)."""
    if kind != "text":
        return None
    return cache.extract(path, oid, data)
