"""A stat cache for ETV: (size, mtime, ctime, inode) -> blob id, so an unchanged tree is checked
without reading files. Also remembers the State Map's file listing per files/ tree id.

Derived data in `.git/tinymem/statcache`; a corrupt or missing cache is an empty one.
Stored as a small header (format, tree, save time, count) and then columns (one string of
paths, one array of integers, two strings of binary ids): loading 50,000 entries is a handful
of large objects instead of 100,000 small ones, and a run that needs only the count or a few
files does not load them at all.
Entries whose mtime is too close to when the cache was written are not trusted ("racy git"):
a file modified in the same timestamp tick as the save could look unchanged.
"""

from __future__ import annotations

import marshal
import os
import stat
import tempfile
import time
from array import array
from bisect import bisect_left

_VERSION = 3
_RACY_NS = 2_000_000_000
_NO_ID = b"\x00" * 20

StatKey = tuple[int, int, int, int]


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class StatCache:
    def __init__(self, cache_dir: str) -> None:
        self.path = os.path.join(cache_dir, "statcache")
        self.tree: str | None = None
        self.count = 0  # entries in the listing of `tree`
        self._saved = 0
        self._loaded = False  # columns read (they are read only when needed: ~10 ms at 50k)
        self._paths: list[str] = []
        self._ints = array("q")
        self._snap = b""  # 20-byte snapshot ids, in path order
        self._seen = b""  # 20-byte work-tree ids last seen, in path order (zeros: unknown)
        self._updates: dict[str, tuple[StatKey, str]] = {}
        self._trust_before = 0
        self._dirty = False
        try:
            with open(self.path, "rb") as f:
                header = marshal.load(f)
            if header[0] == _VERSION:
                _, self.tree, self._saved, self.count = header
                self._trust_before = self._saved - _RACY_NS
        except (OSError, EOFError, ValueError, TypeError, IndexError, KeyError):
            self._reset()  # any unreadable cache (older format, truncated, garbage) is empty

    def _reset(self) -> None:
        self.tree, self.count, self._saved, self._loaded = None, 0, 0, True
        self._paths, self._ints, self._snap, self._seen = [], array("q"), b"", b""

    def _load(self) -> None:
        """Read the columns. The file may have been replaced since the header was read, so
        they count only when they carry the same tree and save time."""
        if self._loaded:
            return
        self._loaded = True
        try:
            with open(self.path, "rb") as f:
                marshal.load(f)
                tree, saved, paths, ints, self._snap, self._seen = marshal.load(f)
            if (tree, saved) != (self.tree, self._saved):
                raise ValueError("stat cache replaced while in use")
            self._paths = paths.decode("utf-8", "surrogateescape").split("\0") if paths else []
            self._ints = array("q")
            self._ints.frombytes(ints)
            n = len(self._paths)
            if n != self.count or len(self._ints) != 4 * n or len(self._snap) != 20 * n:
                raise ValueError("inconsistent stat cache")
        except (OSError, EOFError, ValueError, TypeError, IndexError, KeyError):
            self._reset()

    @property
    def loaded(self) -> bool:
        return self._loaded

    def listing_of(self, tree: str | None) -> bool:
        """Whether the cache holds the listing of this files/ tree (its columns are read)."""
        if tree is None or tree != self.tree:
            return False
        self._load()
        return self.tree == tree

    def _find(self, path: str) -> int:
        """The entry of `path`, or -1. Paths are kept sorted: a binary search costs less than
        building a 50,000-entry dict when a run looks up only a few paths."""
        i = bisect_left(self._paths, path)
        return i if i < len(self._paths) and self._paths[i] == path else -1

    def snapshots_for(self, paths: list[str]) -> dict[str, str]:
        self._load()
        snap = self._snap
        return {p: snap[20 * i : 20 * i + 20].hex() for p in paths if (i := self._find(p)) >= 0}

    def listing(self) -> dict[str, str]:
        self._load()
        snap = self._snap
        return {p: snap[20 * i : 20 * i + 20].hex() for i, p in enumerate(self._paths)}

    def suspects(self, root: str, listing_tree: str | None) -> list[str] | None:
        """Paths that may differ from their snapshot; None when the cache cannot tell.

        The fast path of ETV: one lstat per file, compared with the recorded stat, with no
        hashing and no per-file objects. Chunks run on threads because lstat releases the GIL
        (git does the same with core.preloadIndex).
        """
        if listing_tree is None or listing_tree != self.tree or self._updates:
            return None
        self._load()
        if self.tree is None:
            return None
        paths, ints, snap, seen = self._paths, self._ints, self._snap, self._seen
        trust = self._trust_before
        # One tuple per entry, and whether the last-seen blob was the snapshot, built once.
        keys = list(zip(ints[0::4], ints[1::4], ints[2::4], ints[3::4], strict=True))
        fresh = [seen[k : k + 20] == snap[k : k + 20] for k in range(0, len(seen), 20)]

        def chunk(lo: int, hi: int) -> list[str]:
            out: list[str] = []
            lstat = os.lstat
            regular = stat.S_IFREG
            for i in range(lo, hi):
                path = paths[i]
                try:
                    st = lstat(root + path)
                except OSError:
                    out.append(path)
                    continue
                mtime = st.st_mtime_ns
                if (
                    mtime >= trust
                    or not fresh[i]
                    or (st.st_size, mtime, st.st_ctime_ns, st.st_ino) != keys[i]
                    or st.st_mode & 0o170000 != regular
                ):
                    out.append(path)
            return out

        n = len(paths)
        if n < 4096:
            return chunk(0, n)
        from concurrent.futures import ThreadPoolExecutor

        step = (n + 7) // 8
        with ThreadPoolExecutor(max_workers=4) as pool:
            parts = pool.map(lambda lo: chunk(lo, min(lo + step, n)), range(0, n, step))
            return [p for part in parts for p in part]

    def lookup(self, path: str, key: StatKey) -> str | None:
        """The work-tree blob id recorded for this exact stat, if it can be trusted."""
        self._load()
        i = self._find(path)
        if i < 0 or key[1] >= self._trust_before:
            return None
        ints = self._ints
        if (ints[4 * i], ints[4 * i + 1], ints[4 * i + 2], ints[4 * i + 3]) != key:
            return None
        seen = self._seen[20 * i : 20 * i + 20]
        return None if seen == _NO_ID else seen.hex()

    def store(self, path: str, key: StatKey, oid: str) -> None:
        self._updates[path] = (key, oid)
        self._dirty = True

    def set_listing(self, tree: str | None, listing: dict[str, str]) -> None:
        if tree == self.tree:
            return
        self._load()
        old = {p: i for i, p in enumerate(self._paths)}
        paths = sorted(listing)
        ints = array("q")
        seen = bytearray()
        for p in paths:
            i = old.get(p)
            if i is None:
                ints.extend((-1, -1, -1, -1))
                seen += _NO_ID
            else:
                ints.extend(self._ints[4 * i : 4 * i + 4])
                seen += self._seen[20 * i : 20 * i + 20]
        self.tree = tree
        self.count = len(paths)
        self._paths = paths
        self._ints = ints
        self._snap = b"".join(bytes.fromhex(listing[p]) for p in paths)
        self._seen = bytes(seen)
        self._dirty = True

    def update_listing(self, tree: str, changes: list[tuple[str, str | None]]) -> None:
        """Move the listing to `tree`, given what changed since `self.tree` (path, new
        snapshot id or None when the file left the State Map). Stat data of unchanged paths
        is kept, and so is a changed path's: it still says what the work-tree file hashes to."""
        self._load()
        for path, oid in sorted(changes):
            i = bisect_left(self._paths, path)
            present = i < len(self._paths) and self._paths[i] == path
            if oid is None:
                if present:
                    del self._paths[i]
                    del self._ints[4 * i : 4 * i + 4]
                    self._snap = self._snap[: 20 * i] + self._snap[20 * i + 20 :]
                    self._seen = self._seen[: 20 * i] + self._seen[20 * i + 20 :]
            elif present:
                self._snap = self._snap[: 20 * i] + bytes.fromhex(oid) + self._snap[20 * i + 20 :]
            else:
                self._paths.insert(i, path)
                self._ints[4 * i : 4 * i] = array("q", (-1, -1, -1, -1))
                self._snap = self._snap[: 20 * i] + bytes.fromhex(oid) + self._snap[20 * i :]
                self._seen = self._seen[: 20 * i] + _NO_ID + self._seen[20 * i :]
        self.tree = tree
        self.count = len(self._paths)
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        self._load()
        if self._updates:
            seen = bytearray(self._seen)
            for path, (key, oid) in self._updates.items():
                i = self._find(path)
                if i < 0:
                    continue
                self._ints[4 * i : 4 * i + 4] = array("q", key)
                seen[20 * i : 20 * i + 20] = bytes.fromhex(oid)
            self._seen = bytes(seen)
            self._updates.clear()
        saved = time.time_ns()
        header = (_VERSION, self.tree, saved, self.count)
        columns = (
            self.tree,
            saved,
            "\0".join(self._paths).encode("utf-8", "surrogateescape"),
            self._ints.tobytes(),
            self._snap,
            self._seen,
        )
        try:
            fd, tmp = tempfile.mkstemp(prefix="statcache.", dir=os.path.dirname(self.path))
            with os.fdopen(fd, "wb") as f:
                marshal.dump(header, f)
                marshal.dump(columns, f)
            os.replace(tmp, self.path)
        except OSError:
            pass  # a cache that cannot be written is only slower next time
