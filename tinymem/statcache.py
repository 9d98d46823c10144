"""A stat cache for ETV: (size, mtime, ctime, inode) -> blob id, so an unchanged tree is checked
without reading files. Also remembers the State Map's file listing per files/ tree id.

Derived data in `.git/tinymem/statcache`; a corrupt or missing cache is an empty one.
Entries whose mtime is too close to when the cache was written are not trusted ("racy git"):
a file modified in the same timestamp tick as the save could look unchanged.
"""

from __future__ import annotations

import marshal
import os
import tempfile
import time

_VERSION = 1
_RACY_NS = 2_000_000_000

StatKey = tuple[int, int, int, int]


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class StatCache:
    def __init__(self, cache_dir: str) -> None:
        self.path = os.path.join(cache_dir, "statcache")
        self.tree: str | None = None
        self.listing: dict[str, str] = {}
        self.stats: dict[str, tuple[int, int, int, int, str]] = {}
        self._trust_before = 0
        self._dirty = False
        try:
            with open(self.path, "rb") as f:
                doc = marshal.load(f)
            if doc.get("v") == _VERSION:
                self.tree = doc["tree"]
                self.listing = doc["listing"]
                self.stats = doc["stats"]
                self._trust_before = doc["saved"] - _RACY_NS
        except (OSError, EOFError, ValueError, TypeError, KeyError):
            pass

    def lookup(self, path: str, key: StatKey) -> str | None:
        hit = self.stats.get(path)
        if hit is None or hit[:4] != key or key[1] >= self._trust_before:
            return None
        return hit[4]

    def store(self, path: str, key: StatKey, oid: str) -> None:
        self.stats[path] = (*key, oid)
        self._dirty = True

    def set_listing(self, tree: str | None, listing: dict[str, str]) -> None:
        if tree != self.tree:
            self.tree = tree
            self.listing = listing
            self._dirty = True

    def save(self) -> None:
        if not self._dirty and self._trust_before > 0:
            return
        live = self.listing
        stats = {p: v for p, v in self.stats.items() if p in live}
        doc = {
            "v": _VERSION,
            "saved": time.time_ns(),
            "tree": self.tree,
            "listing": live,
            "stats": stats,
        }
        try:
            fd, tmp = tempfile.mkstemp(prefix="statcache.", dir=os.path.dirname(self.path))
            with os.fdopen(fd, "wb") as f:
                marshal.dump(doc, f)
            os.replace(tmp, self.path)
        except OSError:
            pass  # a cache that cannot be written is only slower next time
