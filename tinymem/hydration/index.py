"""The relevance index: what ranking needs of every live entity, kept between prompts.

Lives in `.git/tinymem/relevance.sqlite` beside the symbol cache; derived data only, never the
truth. A missing, unreadable or other-version file is rebuilt without a word; when SQLite
itself fails, ranking falls back to an index built in memory from the State Map.

- `terms`: the term counts of an entity's text, keyed by its artifact id. Content-addressed, so
  an entry never goes stale and an unchanged entity in a changed file costs a lookup.
- `docs` and `postings`: the live entities of the State Map at one tip (the `meta/` tree id in
  `info`), with an inverted index term -> (doc, tf, impact), also ordered by impact (an upper
  bound of what the posting adds to its doc's score: ranking reads the best first and stops
  early, `topk.py`). Document frequencies are kept per term in `df`, counted up and down with
  the postings; the corpus size and total length are counted from `docs`. A new tip is
  applied as the diff of the two `meta/` trees (`diff_blobs`: equal subtrees unread), so a
  tip with one changed file costs that file's entities, not the repository.

A prompt then reads the postings of its own terms, the docs named by its words and files,
and nothing else (`relevance.score`). A long-lived process (`tm serve`) keeps the open index
(`open_index`) and its decoded docs between requests.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import sqlite3
import subprocess
import sys
import threading
from array import array
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import pygit2

from tinymem.gitobjects import diff_blobs, walk_blobs
from tinymem.hydration.corpus import (
    Corpus,
    DocInfo,
    MemoryCorpus,
    doc_flags,
    impact,
    kind_factor,
    last_name,
)
from tinymem.hydration.lanesum import QUANT, best_lanes, multipliers, vector
from tinymem.hydration.relevance import doc_counts, terms
from tinymem.statemap import META, FileMeta, StateView

__all__ = [
    "INDEX_VERSION",
    "RelevanceIndex",
    "build_in_child",
    "corpus_for",
    "open_index",
    "rank_with",
]

T = TypeVar("T")

INDEX_VERSION = "4"
_FILENAME = "relevance.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS terms (artifact TEXT PRIMARY KEY, counts TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, base TEXT NOT NULL, symbol TEXT NOT NULL,
    last TEXT NOT NULL, length INTEGER NOT NULL, flags INTEGER NOT NULL, terms TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS docs_path ON docs (path);
CREATE INDEX IF NOT EXISTS docs_base ON docs (base);
CREATE INDEX IF NOT EXISTS docs_last ON docs (last);
CREATE TABLE IF NOT EXISTS postings (
    term TEXT NOT NULL, doc INTEGER NOT NULL, tf INTEGER NOT NULL, impact REAL NOT NULL,
    PRIMARY KEY (term, doc)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_impact ON postings (term, impact);
CREATE TABLE IF NOT EXISTS df (term TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
"""
_TABLES = ("info", "terms", "docs", "postings", "df")
_CHUNK = 500
_FILES_PER_BATCH = 2000
# A term's postings as one integer (`lanesum`) are kept between prompts when there are this
# many (fewer cost less to read again than to keep), up to this many bytes in all (a 50,000-
# file tree: ~0.9 MB a term, read in ~25 ms).
_KEPT_DF = 1000
_KEPT_BYTES = 64 * 2**20


@dataclass(frozen=True)
class _Lanes:
    """A term's postings held in memory (`lanesum`): each impact rounded up to 1..QUANT at
    `scale`, and how often the term occurs in each doc (None: a count over 65,535), which
    scoring then reads without a B-tree lookup per doc."""

    impacts: int
    scale: float
    counts: array[int] | None

    @property
    def size(self) -> int:
        return (self.impacts.bit_length() + 7) // 8 + (
            0 if self.counts is None else len(self.counts) * self.counts.itemsize
        )


@dataclass(frozen=True)
class _Entity:
    """One live entity as the index stores it: its combined term counts and what ranking reads."""

    path: str
    symbol: str
    counts: Counter[str]
    flags: int


def _entities_of(view: StateView, meta: FileMeta, known: dict[str, Counter[str]]) -> list[_Entity]:
    """The live entities of one file record. `known`: text term counts by artifact, filled
    with what had to be counted here."""
    out: list[_Entity] = []
    snapshot = view.blob(meta.snapshot)
    for rec in meta.live_entities():
        text_counts = known.get(rec.artifact)
        if text_counts is None:
            text = snapshot[rec.start : rec.end].decode("utf-8", "replace")
            text_counts = known[rec.artifact] = Counter(terms(text))
        counts = doc_counts(meta.path, rec.symbol, text_counts)
        flags = doc_flags(meta.path, snapshot[rec.start : rec.start + 200])
        out.append(_Entity(meta.path, rec.symbol, counts, flags))
    return out


def _memory_corpus(view: StateView) -> MemoryCorpus:
    corpus = MemoryCorpus()
    known: dict[str, Counter[str]] = {}
    for meta in view.all_meta():
        if meta.deleted:
            continue
        for e in _entities_of(view, meta, known):
            corpus.add(e.path, e.symbol, e.counts, e.flags)
    return corpus


class RelevanceIndex(Corpus):
    """The index file, brought to one State Map tip by `refresh`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tip: str | None = None
        self._db: sqlite3.Connection | None = None
        self._size = 0
        self._total = 0
        self._docs: dict[int, DocInfo] = {}  # decoded once per process: `tm serve` reuses them
        # SQLite's data_version when this process last brought the file to `tip`: another
        # process's commit (a `tm ask` in another terminal moving the file to its own tip)
        # changes it, and then neither `tip` nor the decoded docs can be trusted.
        self._seen: int | None = None
        self._tops: frozenset[str] = frozenset()
        # The mean length the stored impacts assume: the first batch's, kept after (the real
        # one is known only once every doc is in, and moves with every tip).
        self._impact_avgdl: float | None = None
        # term -> its postings' impacts as lanes (`lanesum.vector`) and the scale they were
        # rounded at; least recently used first. Valid while its postings are unchanged.
        self._lanes: OrderedDict[str, _Lanes] = OrderedDict()
        self._lane_bytes = 0

    # -- opening ---------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # Shared by `tm serve`'s request threads, one at a time (`rank_with`).
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")
            db.executescript(_SCHEMA)
            row = db.execute("SELECT value FROM info WHERE key = 'version'").fetchone()
            if row is None or row[0] != INDEX_VERSION:
                # Another version's tables may have other columns: made again, not emptied.
                for table in _TABLES:
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                db.executescript(_SCHEMA)
                db.execute("INSERT INTO info VALUES ('version', ?)", (INDEX_VERSION,))
            db.execute("SELECT count(*) FROM docs LIMIT 1").fetchone()
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _open(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        try:
            self._db = self._connect()
        except sqlite3.Error:
            # Unreadable (truncated, garbled, not a database): it holds nothing that cannot be
            # rebuilt, so it is replaced.
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.remove(self.path + suffix)
            self._db = self._connect()
        return self._db

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None
        self.tip = None
        self._seen = None
        self._docs.clear()
        self._forget(None)

    def discard(self) -> None:
        """Close and remove the file: it failed while being read (damaged after it opened);
        the next prompt builds it again."""
        self.close()
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.remove(self.path + suffix)

    # -- bringing it to a tip ----------------------------------------------------------------

    def refresh(self, view: StateView) -> None:
        """Make the index describe `view`'s live entities: nothing when it already does, the
        diff of the two `meta/` trees when it describes another tip, everything otherwise."""
        target = view.subtree(META) or ""
        db = self._open()
        if self.tip == target and self._seen is not None and _data_version(db) == self._seen:
            return
        n = _CHILD_MIN_FILES
        large = n is not None and _changes_at_least(view.repo, _stored_tip(db), target, n)
        if large and view.commit_id is not None:
            # Whatever the child does not do (it fails, or is killed) is done below.
            _build_in_child(self.path, view.repo.path, view.commit_id)
        db.execute("BEGIN IMMEDIATE")
        try:
            stored = _stored_tip(db)
            if stored != self.tip or _data_version(db) != self._seen:
                # Written by another process since (another terminal's `tm ask`, or a child
                # building for this one): its ids may name other entities now.
                self._docs.clear()
                self._forget(None)
            if stored != target:
                self._apply(db, view, stored, target)
            size, total = _stats(db)
            assumed = _assumed(db)
            # Read under the write lock: this connection's own commit leaves it as it is,
            # anyone else's later commit changes it.
            seen = _data_version(db)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            self._docs.clear()
            self._forget(None)
            self.tip = self._seen = None
            raise
        self._size, self._total = size, total
        self._impact_avgdl = assumed
        self._tops = _tops(view.repo, target)
        self.tip, self._seen = target, seen

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[bool]:
        """One read transaction over the file, so that a prompt's reads (postings, names,
        docs) all see one state: True when that state is still the one `refresh` brought it
        to (no other process wrote it in between)."""
        db = self._db_open()
        db.execute("BEGIN")
        try:
            _stored_tip(db)  # starts the read
            yield _data_version(db) == self._seen
        finally:
            with contextlib.suppress(sqlite3.Error):
                db.execute("COMMIT")

    def _apply(self, db: sqlite3.Connection, view: StateView, old: str | None, new: str) -> None:
        repo = view.repo
        changed, from_nothing = _changes(repo, old, new)
        if from_nothing:
            _clear(db)
            db.execute("INSERT INTO info VALUES ('version', ?)", (INDEX_VERSION,))
            self._forget(None)
        pending: list[tuple[str, str | None]] = list(changed)
        self._docs.clear()  # ids of removed docs may be reused
        gone = [p for p, _ in pending]
        for i in range(0, len(gone), _CHUNK):
            chunk = gone[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            # Postings are keyed (term, doc), one B-tree: a doc lists its own terms.
            rows = db.execute(f"SELECT id, terms FROM docs WHERE path IN ({marks})", chunk)
            drop = [(t, i) for i, listed in rows.fetchall() for t in listed.split()]
            if self._lanes:
                self._forget({t for t, _ in drop})
            db.executemany("DELETE FROM postings WHERE term = ? AND doc = ?", drop)
            fewer = Counter(t for t, _ in drop)
            db.executemany("UPDATE df SET n = n - ? WHERE term = ?", _swapped(fewer))
            db.execute(f"DELETE FROM docs WHERE path IN ({marks})", chunk)
        self._impact_avgdl = _assumed(db)
        row = db.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()
        next_id = int(row[0]) + 1
        added = [oid for _, oid in pending if oid is not None]
        # A batch of files at a time: the first prompt of a 50,000-file tree builds ~200,000
        # docs and millions of postings, and a long-lived process (`tm serve`) kept the peak
        # of holding them all at once (the allocator does not give it back).
        for i in range(0, len(added), _FILES_PER_BATCH):
            next_id = self._add(db, view, added[i : i + _FILES_PER_BATCH], next_id)
        db.execute("INSERT OR REPLACE INTO info VALUES ('tip', ?)", (new,))

    def _add(self, db: sqlite3.Connection, view: StateView, oids: list[str], next_id: int) -> int:
        """Index the live entities of these file records, from doc id `next_id`; the next id."""
        metas: list[FileMeta] = []
        for oid in oids:
            meta = FileMeta.from_bytes(view.blob(oid))
            if not meta.deleted:
                metas.append(meta)
        known = _known_terms(db, [r.artifact for m in metas for r in m.live_entities()])
        before = set(known)
        docs: list[tuple[str, str, str, str, int, int, str]] = []
        postings: list[tuple[str, int, int]] = []
        for meta in metas:
            for e in _entities_of(view, meta, known):
                base = e.path.rsplit("/", 1)[-1]
                length = sum(e.counts.values())
                listed = " ".join(e.counts)
                docs.append((e.path, base, e.symbol, last_name(e.symbol), length, e.flags, listed))
                postings.extend((t, next_id, f) for t, f in e.counts.items())
                next_id += 1
        if self._impact_avgdl is None and docs:
            self._impact_avgdl = max(1.0, sum(d[4] for d in docs) / len(docs))
            db.execute(
                "INSERT OR REPLACE INTO info VALUES ('impact_avgdl', ?)", (str(self._impact_avgdl),)
            )
        assumed = self._impact_avgdl or 1.0
        first = next_id - len(docs)
        kinds = [kind_factor(d[0], d[5]) for d in docs]
        db.executemany(
            "INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(first + k, *d) for k, d in enumerate(docs)],
        )
        postings.sort()  # in key order: appended to the B-tree, not scattered through it
        if self._lanes:
            self._forget({t for t, _, _ in postings})
        # Each impact made as its row is inserted: a list of them all raised the peak that a
        # long-lived process keeps (+68 MB building mypy's index in one batch).
        db.executemany(
            "INSERT INTO postings VALUES (?, ?, ?, ?)",
            (
                (t, i, f, impact(f, docs[i - first][4], kinds[i - first], assumed))
                for t, i, f in postings
            ),
        )
        db.executemany(
            "INSERT INTO df VALUES (?, ?) ON CONFLICT (term) DO UPDATE SET n = n + excluded.n",
            Counter(t for t, _, _ in postings).items(),
        )
        db.executemany(
            "INSERT OR IGNORE INTO terms VALUES (?, ?)",
            [(a, _encode(c)) for a, c in known.items() if a not in before],
        )
        return next_id

    # -- what ranking reads ------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self._size

    @property
    def avgdl(self) -> float:
        return (self._total / self._size) if self._size and self._total else 1.0

    def _db_open(self) -> sqlite3.Connection:
        assert self._db is not None, "refresh first"
        return self._db

    def postings(self, term: str) -> dict[int, int]:
        rows = self._db_open().execute("SELECT doc, tf FROM postings WHERE term = ?", (term,))
        return dict(rows)

    def df(self, terms: Iterable[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in _chunks(sorted(set(terms))):
            marks = ",".join("?" * len(chunk))
            rows = self._db_open().execute(
                f"SELECT term, n FROM df WHERE term IN ({marks}) AND n > 0", chunk
            )
            out.update(rows)
        return out

    def by_impact(
        self, term: str, after: tuple[float, int] | None, limit: int
    ) -> list[tuple[float, int]]:
        # `postings_impact` read backwards from `after`: ties of impact by doc, descending.
        if after is None:
            rows = self._db_open().execute(
                "SELECT impact, doc FROM postings WHERE term = ? "
                "ORDER BY impact DESC, doc DESC LIMIT ?",
                (term, limit),
            )
        else:
            rows = self._db_open().execute(
                "SELECT impact, doc FROM postings WHERE term = ? AND (impact, doc) < (?, ?) "
                "ORDER BY impact DESC, doc DESC LIMIT ?",
                (term, after[0], after[1], limit),
            )
        return rows.fetchall()

    def above(
        self, weights: Mapping[str, float], at_least: float, limit: int | None
    ) -> list[tuple[float, int]]:
        held = [(w, got) for t, w in weights.items() if (got := self._lanes_of(t)) is not None]
        made = multipliers([w / lanes.scale for w, lanes in held])
        if made is None:
            return self._summed(weights, at_least, limit)
        factors, c = made
        total = sum(lanes.impacts * k for (_, lanes), k in zip(held, factors, strict=True))
        # A hair under `at_least`: rounding the floor up could leave out a doc that reaches it.
        floor = math.floor(at_least * c * (1 - 1e-9)) if at_least > 0 else 0
        return [(q / c, doc) for q, doc in best_lanes(total, floor, limit)]

    def bounds_at_hand(self, terms: Sequence[str]) -> bool:
        return all(t in self._lanes for t in terms)

    def _summed(
        self, weights: Mapping[str, float], at_least: float, limit: int | None
    ) -> list[tuple[float, int]]:
        """`above` summed by SQLite: for what lanes cannot hold (a weight that is not
        positive, thousands of terms)."""
        if not weights:
            return []
        cases = " ".join("WHEN ? THEN ?" for _ in weights)
        marks = ",".join("?" * len(weights))
        rows = self._db_open().execute(
            f"SELECT sum(impact * CASE term {cases} END) AS bound, doc FROM postings "
            f"WHERE term IN ({marks}) GROUP BY doc HAVING bound >= ? "
            "ORDER BY bound DESC, doc DESC LIMIT ?",
            (
                *(x for tw in weights.items() for x in tw),
                *weights,
                at_least,
                -1 if limit is None else limit,
            ),
        )
        return rows.fetchall()

    def _lanes_of(self, term: str) -> _Lanes | None:
        """`term`'s postings in memory: each impact times a scale rounded down, plus one
        (1..QUANT: what a lane adds only ever rounds up), and each doc's count; None when
        the term has no postings."""
        kept = self._lanes.get(term)
        if kept is not None:
            self._lanes.move_to_end(term)
            return kept
        db = self._db_open()
        (top,) = db.execute("SELECT max(impact) FROM postings WHERE term = ?", (term,)).fetchone()
        if top is None:
            return None
        scale = (QUANT - 1) / top if top > 0 else 1.0
        (width,) = db.execute("SELECT coalesce(max(id), 0) + 1 FROM docs").fetchone()
        rows = db.execute(
            "SELECT doc, CAST(impact * ? AS INTEGER) + 1, tf FROM postings WHERE term = ?",
            (scale, term),
        ).fetchall()
        impacts = vector(((d, q) for d, q, _ in rows), int(width))
        counts = array("H", bytes(2 * int(width)))
        try:
            for doc, _, tf in rows:
                counts[doc] = tf
        except OverflowError:  # a count past 65,535: read from the file, then
            made = _Lanes(impacts, scale, None)
        else:
            made = _Lanes(impacts, scale, counts)
        if len(rows) >= _KEPT_DF:
            self._lanes[term] = made
            self._lane_bytes += made.size
            while self._lane_bytes > _KEPT_BYTES and self._lanes:
                _, old = self._lanes.popitem(last=False)
                self._lane_bytes -= old.size
        return made

    def _forget(self, terms: Iterable[str] | None) -> None:
        """Drop the kept lanes of `terms` (None: all): their postings changed."""
        if terms is None:
            self._lanes.clear()
            self._lane_bytes = 0
            return
        for t in terms:
            gone = self._lanes.pop(t, None)
            if gone is not None:
                self._lane_bytes -= gone.size

    def tfs(self, ids: Sequence[int], terms: Iterable[str]) -> dict[int, dict[str, int]]:
        out: dict[int, dict[str, int]] = {i: {} for i in ids}
        wanted = sorted(set(ids))
        for t in set(terms):
            kept = self._lanes.get(t)
            if kept is not None and kept.counts is not None:
                # Kept in memory: a B-tree lookup per doc was most of scoring at 50,000 files.
                counts = kept.counts
                for i in wanted:
                    if i < len(counts) and counts[i]:
                        out[i][t] = counts[i]
                continue
            for chunk in _chunks(wanted):
                marks = ",".join("?" * len(chunk))
                rows = self._db_open().execute(
                    f"SELECT doc, tf FROM postings WHERE term = ? AND doc IN ({marks})",
                    (t, *chunk),
                )
                for i, f in rows:
                    out[i][t] = f
        return out

    @property
    def tops(self) -> frozenset[str]:
        return self._tops

    @property
    def impact_avgdl(self) -> float:
        return self._impact_avgdl or 1.0

    def named(self, lasts: Iterable[str]) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for chunk in _chunks(sorted(set(lasts))):
            marks = ",".join("?" * len(chunk))
            rows = self._db_open().execute(
                f"SELECT last, id FROM docs WHERE last IN ({marks})", chunk
            )
            for last, i in rows:
                out.setdefault(last, []).append(i)
        return out

    def in_files(self, paths: Iterable[str], bases: Iterable[str]) -> list[int]:
        out: list[int] = []
        for column, values in (("path", paths), ("base", bases)):
            for chunk in _chunks(sorted(set(values))):
                marks = ",".join("?" * len(chunk))
                rows = self._db_open().execute(
                    f"SELECT id FROM docs WHERE {column} IN ({marks})", chunk
                )
                out.extend(i for (i,) in rows)
        return out

    def info(self, ids: Iterable[int]) -> dict[int, DocInfo]:
        wanted = set(ids)
        missing = sorted(wanted - self._docs.keys())
        for chunk in _chunks(missing):
            marks = ",".join("?" * len(chunk))
            rows = self._db_open().execute(
                f"SELECT id, path, symbol, length, flags FROM docs WHERE id IN ({marks})", chunk
            )
            for i, path, symbol, length, flags in rows:
                self._docs[i] = DocInfo(i, path, symbol, length, flags)
        if len(self._docs) > 200_000:  # a long-lived process: bounded
            keep = {i: self._docs[i] for i in wanted if i in self._docs}
            self._docs.clear()
            self._docs.update(keep)
        return {i: self._docs[i] for i in wanted if i in self._docs}


def _chunks(values: list[str] | list[int]) -> Iterator[list[str] | list[int]]:
    for i in range(0, len(values), _CHUNK):
        yield values[i : i + _CHUNK]


def _clear(db: sqlite3.Connection) -> None:
    for table in _TABLES:
        db.execute(f"DELETE FROM {table}")


def _data_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA data_version").fetchone()[0])


def _stats(db: sqlite3.Connection) -> tuple[int, int]:
    n, total = db.execute("SELECT count(*), coalesce(sum(length), 0) FROM docs").fetchone()
    return int(n), int(total)


def _stored_tip(db: sqlite3.Connection) -> str | None:
    # fetchall: a statement left unfinished would hold a read snapshot open.
    rows = db.execute("SELECT value FROM info WHERE key = 'tip'").fetchall()
    return str(rows[0][0]) if rows else None


def _changes(
    repo: pygit2.Repository, old: str | None, new: str
) -> tuple[Iterable[tuple[str, str | None]], bool]:
    """The file records to apply to move an index at `old` to `new`, and whether it is built
    from nothing: `old` names no tree of this repository (nothing recorded, or another
    repository's), so every record of `new` comes and what the file holds goes."""
    from_nothing = old is None or not (old == "" or _has_tree(repo, old))
    if from_nothing or old == "":
        return (walk_blobs(repo, new) if new else iter(())), from_nothing
    assert old is not None
    if new == "":
        return ((p, None) for p, _ in walk_blobs(repo, old)), False
    return diff_blobs(repo, old, new), False


def _changes_at_least(repo: pygit2.Repository, old: str | None, new: str, n: int) -> bool:
    """Whether moving the index from `old` to `new` touches `n` file records or more; reads
    only the trees that list the first `n`."""
    if old == new:
        return False
    changed, _ = _changes(repo, old, new)
    return sum(1 for _ in itertools.islice(changed, n)) >= n


def _build_in_child(path: str, git_dir: str, commit_id: str) -> bool:
    """Bring the index file at `path` to the State Map of `commit_id` in a child process;
    whether it did. The build's peak (every entity of a large tree read, tokenised and
    inserted; the allocator keeps what it once held) is then the child's, and a long-lived
    process only opens the result."""
    argv = [sys.executable, "-m", _CHILD, git_dir, path, commit_id]
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=_CHILD_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        # Killed (SIGKILL): its transaction never committed, so the file is as it was, and
        # the caller builds it as it does after a child that failed.
        return False
    except OSError:
        return False
    return done.returncode == 0


def _assumed(db: sqlite3.Connection) -> float | None:
    row = db.execute("SELECT value FROM info WHERE key = 'impact_avgdl'").fetchone()
    return float(row[0]) if row is not None else None


def _tops(repo: pygit2.Repository, meta: str) -> frozenset[str]:
    """The top-level directories of the `meta/` tree: where a file's record sits is its path."""
    if not meta:
        return frozenset()
    tree = repo[meta]
    assert isinstance(tree, pygit2.Tree)
    return frozenset(str(e.name) for e in tree if e.type_str == "tree")


def _swapped(counts: Counter[str]) -> list[tuple[int, str]]:
    return [(n, t) for t, n in counts.items()]


def _has_tree(repo: pygit2.Repository, oid: str) -> bool:
    try:
        return isinstance(repo[oid], pygit2.Tree)
    except (KeyError, ValueError):
        return False


def _encode(counts: Counter[str]) -> str:
    return " ".join(f"{t}:{n}" for t, n in counts.items())


def _decode(text: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for item in text.split():
        t, _, n = item.rpartition(":")
        out[t] = int(n)
    return out


def _known_terms(db: sqlite3.Connection, artifacts: list[str]) -> dict[str, Counter[str]]:
    found: dict[str, Counter[str]] = {}
    for chunk in _chunks(sorted(set(artifacts))):
        marks = ",".join("?" * len(chunk))
        rows = db.execute(f"SELECT artifact, counts FROM terms WHERE artifact IN ({marks})", chunk)
        for artifact, counts in rows:
            found[artifact] = _decode(counts)
    return found


# The open index of each cache directory, one per process: a long-lived process (`tm serve`)
# keeps it, with its decoded docs, and each request only applies what the tip changed. Its
# request threads take turns (`_TURN`): one index per thread held a connection and up to
# 200,000 decoded docs each (648 MB of serve at 50k files), and ranking is CPU work the GIL
# would serialise anyway.
_OPEN: dict[str, RelevanceIndex] = {}
# From how many changed file records a refresh runs in a child process (`build_in_child`);
# None: always in this one, as a short-lived `tm ask` does.
_CHILD_MIN_FILES: int | None = None
_CHILD = "tinymem.hydration.indexchild"
# Seconds the child may take before it is killed and the build done here: it runs while the
# process's turn (`_TURN`) is held, so a child that stalls would hold every prompt of `tm
# serve`, and its stop. The first build of a 50,000-file tree takes ~100 s on 2 cores.
_CHILD_TIMEOUT = 900.0
_OPEN_BOUND = 4
_TURN = threading.RLock()


def open_index(cache_dir: str) -> RelevanceIndex:
    with _TURN:
        found = _OPEN.get(cache_dir)
        if found is None:
            # A process that works in many repositories (the test suite runs tm in process)
            # keeps only the last few open: each holds a connection and its files.
            while len(_OPEN) >= _OPEN_BOUND:
                _OPEN.pop(next(iter(_OPEN))).close()
            found = _OPEN[cache_dir] = RelevanceIndex(os.path.join(cache_dir, _FILENAME))
        return found


def build_in_child(min_files: int | None) -> None:
    """From now on in this process, a refresh that changes at least `min_files` file records
    (the first build of a large tree) runs in a child process (None: never). For `tm serve`,
    which would otherwise keep the build's peak of memory for as long as it runs; below one
    batch of files (`_FILES_PER_BATCH`) the peak is no higher than a request's."""
    global _CHILD_MIN_FILES
    _CHILD_MIN_FILES = min_files


_ATTEMPTS = 3  # another process moving the file between refresh and read, again and again


def rank_with(view: StateView, cache_dir: str | None, rank: Callable[[Corpus], T]) -> T:
    """`rank(corpus)` over the index brought to `view`'s tip, its reads one snapshot of the
    file that still describes that tip; over an index in memory when SQLite fails, and then
    a file that fails while read (damaged after it opened) is removed, to be built again.
    Holds the process's turn: another thread's prompt must neither move the shared index to
    its own tip nor use its connection meanwhile."""
    with _TURN:
        if cache_dir is not None:
            index = open_index(cache_dir)
            try:
                for _ in range(_ATTEMPTS):
                    index.refresh(view)
                    with index._snapshot() as current:
                        if current:
                            return rank(index)
            except sqlite3.OperationalError:
                index.close()  # locked or out of space: the file may be sound
            except sqlite3.DatabaseError:
                index.discard()
        return rank(_memory_corpus(view))


def corpus_for(view: StateView, cache_dir: str | None) -> Corpus:
    """The index for `view`, brought to its tip; an index in memory when there is no cache
    directory or SQLite fails (a cache is never an error)."""
    if cache_dir is not None:
        index = open_index(cache_dir)
        try:
            index.refresh(view)
            return index
        except sqlite3.Error:
            index.close()
    return _memory_corpus(view)
