"""Writing git objects fast: ids computed here, small batches loose, large batches as one pack.

libgit2 writes every object as its own zlib-compressed loose file (~100 us each here). A
baseline import of a large repository creates hundreds of thousands of objects (entity
artifacts, per-file metadata, trees), so we hash them ourselves and, past a threshold, write a
single pack with its v2 index. Readers (libgit2, git) pick new packs up on their next lookup.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import sys
import tempfile
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from typing import TYPE_CHECKING, Final, NamedTuple

import pygit2

if TYPE_CHECKING:
    from concurrent.futures import Future
    from multiprocessing.process import BaseProcess

MODE_BLOB: Final = 0o100644
MODE_EXEC: Final = 0o100755
MODE_TREE: Final = 0o040000

_TYPE_CODES: Final = {"commit": 1, "tree": 2, "blob": 3}
_TYPE_NAMES: Final = {code: kind for kind, code in _TYPE_CODES.items()}
_PYGIT2_TYPES: Final = {
    "commit": pygit2.enums.ObjectType.COMMIT,
    "tree": pygit2.enums.ObjectType.TREE,
    "blob": pygit2.enums.ObjectType.BLOB,
}
# Below this many new objects, loose objects are cheaper than a pack plus its index.
PACK_THRESHOLD: Final = 256
# From this many spooled objects on, `seal_spooled` seals in other processes: starting one
# costs less than indexing these many objects here (~1 us each).
PARALLEL_SEAL_MIN: Final = 20_000


def object_id(kind: str, data: bytes) -> str:
    """The git object id (SHA-1 hex) of `data` as an object of `kind`."""
    h = hashlib.sha1(b"%s %d\x00" % (kind.encode(), len(data)))
    h.update(data)
    return h.hexdigest()


def blob_id(data: bytes) -> str:
    return object_id("blob", data)


def _tree_sort_key(item: tuple[str, int, str]) -> bytes:
    name, mode, _ = item
    raw = name.encode("utf-8", "surrogateescape")
    # git orders a subtree as if its name ended in "/".
    return raw + b"/" if mode == MODE_TREE else raw


def serialize_tree(entries: Iterable[tuple[str, int, str]]) -> bytes:
    """Canonical tree object bytes for (name, mode, hex id) entries."""
    out = bytearray()
    for name, mode, oid in sorted(entries, key=_tree_sort_key):
        out += b"%o %s\x00" % (mode, name.encode("utf-8", "surrogateescape"))
        out += bytes.fromhex(oid)
    return bytes(out)


@dataclass(frozen=True)
class SpooledObjects:
    """Objects appended to a pack spool, possibly by another process: the spool file and how
    many objects the append added. Their (id, offset, crc32), which the pack's index needs,
    are in the spool's ids file (`spool_index`), so they never travel between processes."""

    path: str
    count: int


@dataclass
class ObjectWriter:
    """Buffers new objects; `flush` makes them durable in the repository's object database."""

    repo: pygit2.Repository
    _pending: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    # Pack spools that worker processes filled (`tm init`): sealed as packs by `flush`, so the
    # main process never handles their bytes. Spool path -> how many objects it holds.
    _spooled: dict[str, int] = field(default_factory=dict)
    # Spools that `seal_spooled` is sealing in other processes: path -> its pack's name.
    _sealing: dict[str, Future[str]] = field(default_factory=dict)
    # Their processes: stopped when one gives no result for `procpool.STALL_SECONDS`.
    _sealers: list[BaseProcess] = field(default_factory=list)
    # Pack entries made by `compress_ahead`.
    _ahead: dict[str, bytes] = field(default_factory=dict)

    def add(self, kind: str, data: bytes, *, known: bool = False, oid: str | None = None) -> str:
        """Queue an object. `known=True` when it probably exists already (a tracked file's
        snapshot): then the object database is asked first. Otherwise asking would cost a
        lookup per new object, and a duplicate in our pack is harmless (gc folds it).
        `oid`: the object's id, when the caller has it already (a WorktreeFile's)."""
        if oid is None:
            oid = object_id(kind, data)
        if oid in self._pending:
            return oid
        if not (known and oid in self.repo.odb):
            self._pending[oid] = (kind, data)
        return oid

    def blob(self, data: bytes, *, known: bool = False, oid: str | None = None) -> str:
        return self.add("blob", data, known=known, oid=oid)

    def tree(self, entries: Iterable[tuple[str, int, str]]) -> str:
        return self.add("tree", serialize_tree(entries))

    def spool(self, spool: PackSpool) -> SpooledObjects:
        """Append the queued objects to `spool` (compressed here, in this process); they are
        no longer queued. Another writer's `add_spooled` then makes them part of its flush."""
        part = spool.append(self._compressed())
        self._pending.clear()
        return part

    def add_spooled(self, part: SpooledObjects) -> None:
        self._spooled[part.path] = self._spooled.get(part.path, 0) + part.count

    def read(self, oid: str) -> bytes:
        pending = self._pending.get(oid)
        if pending is not None:
            return pending[1]
        obj = self.repo.odb.read(oid)
        return bytes(obj[1])

    def tree_entries(self, oid: str) -> list[tuple[str, int, str]]:
        """Entries of a tree that may still be pending or already stored."""
        if oid in self._pending:
            return list(parse_tree(self.read(oid)))
        return [(e.name or "", e.filemode, str(e.id)) for e in read_tree(self.repo, oid)]

    def seal_spooled(self) -> None:
        """Start sealing the spools added so far, each in a process of its own, while the caller
        goes on (building trees and the episode record); `flush` waits for them and raises
        what they raised. Indexing a large spool is Python work (~1 s per 300,000 objects):
        in a thread it would hold up the caller, in another process it does not.

        A pack, once sealed, stays even when the episode then fails: its objects are
        unreachable and `git gc` prunes them, as after a lost race. Deleting it could pull an
        object from under another process that found it there. Small spools are left to
        `flush` (a few objects are written loose there)."""
        if self._sealing or _count(self._spooled) < PARALLEL_SEAL_MIN:
            return
        # Imported here: read-only commands (tm status) never load the process machinery.
        from concurrent.futures import ProcessPoolExecutor

        from tinymem.procpool import pool_context, processes_of

        paths = list(self._spooled)
        self._spooled.clear()
        pool = ProcessPoolExecutor(
            max_workers=min(len(paths), os.cpu_count() or 1), mp_context=pool_context()
        )
        try:
            self._sealing = {path: pool.submit(finish_pack, path) for path in paths}
            self._sealers = processes_of(pool)
        finally:
            pool.shutdown(wait=False)  # its processes end once the last spool is sealed

    def _sealed(self) -> None:
        """Wait for every spool being sealed; a worker that gives no result for
        `procpool.STALL_SECONDS` is stopped, with the others, and raises WorkerStalledError
        (its spools are left for `discard`)."""
        from tinymem.procpool import wait_for

        for future in self._sealing.values():
            wait_for(future, self._sealers)

    def _wait_for_sealing(self) -> None:
        self._sealed()
        sealing, self._sealing = self._sealing, {}
        failures = [f.exception() for f in sealing.values()]  # done: no wait
        for failure in failures:
            if failure is not None:
                for path in sealing:
                    _remove_spool(path)  # the ones that failed; a sealed one is gone already
                raise failure

    def flush(self) -> None:
        packed: dict[str, bytes] | None = None
        try:
            if len(self._pending) >= PACK_THRESHOLD:
                packed = self._compressed()  # while other processes may still be sealing
            self._wait_for_sealing()
            loose_spools = len(self._pending) + _count(self._spooled) < PACK_THRESHOLD
            while self._spooled:
                path = next(iter(self._spooled))
                if loose_spools:
                    # A small import: loose objects, as git would write them, not a tiny pack.
                    for kind, data in read_spool(path):
                        self.repo.odb.write(_PYGIT2_TYPES[kind], data)
                    _remove_spool(path)
                else:
                    finish_pack(path)
                del self._spooled[path]
        except BaseException:
            self.discard()
            raise
        if not self._pending:
            return
        if packed is None:
            for kind, data in self._pending.values():
                self.repo.odb.write(_PYGIT2_TYPES[kind], data)
        else:
            write_pack(pack_dir(self.repo), packed)
        self._pending.clear()
        self._ahead.clear()

    def discard(self) -> None:
        """Forget what is queued and remove the spools not sealed yet (the episode failed),
        after any sealing under way has ended. Packs already sealed stay (`seal_spooled`)."""
        from tinymem.procpool import WorkerStalledError

        for future in self._sealing.values():
            future.cancel()
        # Those started: no spool may be half-sealed when removed (stopped ones are not).
        with contextlib.suppress(WorkerStalledError):
            self._sealed()
        for path in [*self._sealing, *self._spooled]:
            _remove_spool(path)
        self._sealing.clear()
        self._pending.clear()
        self._ahead.clear()
        self._spooled.clear()

    def compress_ahead(self, oid: str) -> None:
        """Compress a queued object now, for `flush` to use: run in a thread, this overlaps
        with the caller's Python work (zlib-ng releases the GIL on large inputs)."""
        kind, data = self._pending[oid]
        self._ahead[oid] = pack_entry(kind, data)

    def _compressed(self) -> dict[str, bytes]:
        ahead = self._ahead
        return {
            oid: ahead.get(oid) or pack_entry(kind, data)
            for oid, (kind, data) in self._pending.items()
        }


def _count(spooled: Mapping[str, int]) -> int:
    return sum(spooled.values())


def pack_dir(repo: pygit2.Repository) -> str:
    from tinymem.repository import common_git_dir

    # Linked worktrees share the common dir's object database.
    return os.path.join(common_git_dir(repo), "objects", "pack")


def read_blob(repo: pygit2.Repository, oid: str | pygit2.Oid) -> bytes:
    """The bytes of a stored blob; KeyError when it is missing or not a blob."""
    obj = repo[oid]
    if not isinstance(obj, pygit2.Blob):
        raise KeyError(f"{oid} is not a blob")
    return bytes(obj.data)


def read_tree(repo: pygit2.Repository, oid: str | pygit2.Oid) -> pygit2.Tree:
    obj = repo[oid]
    if not isinstance(obj, pygit2.Tree):
        raise KeyError(f"{oid} is not a tree")
    return obj


def parse_tree(data: bytes) -> Iterable[tuple[str, int, str]]:
    i = 0
    while i < len(data):
        sp = data.index(b" ", i)
        nul = data.index(b"\x00", sp)
        mode = int(data[i:sp], 8)
        name = data[sp + 1 : nul].decode("utf-8", "surrogateescape")
        oid = data[nul + 1 : nul + 21].hex()
        yield name, mode, oid
        i = nul + 21


# Most objects are small and many share a size: a hit costs a sixth of computing the header.
@lru_cache(maxsize=8192)
def _pack_header(type_code: int, size: int) -> bytes:
    byte = (type_code << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


# zlib-ng's compress, bound on first use: it writes standard zlib streams ~3x faster than the
# standard library's on small objects, and commands that only read (tm status) never load it.
_compress: Callable[[bytes, int, int], bytes] | None = None
_SMALL_OBJECT: Final = 3072  # under zlib's largest match distance for a 4 KiB window


def pack_entry(kind: str, data: bytes) -> bytes:
    """One object as it is stored in a pack: type-and-size header, then zlib data."""
    global _compress
    if _compress is None:
        from zlib_ng import zlib_ng

        _compress = zlib_ng.compress
    # A 4 KiB window loses nothing on an object this small (every match is nearer), and
    # setting up the stream is a good part of compressing one: ~15% less time per object.
    wbits = 12 if len(data) <= _SMALL_OBJECT else 15
    return _pack_header(_TYPE_CODES[kind], len(data)) + _compress(data, 1, wbits)


def unpack_entry(entry: bytes) -> tuple[str, bytes]:
    """(kind, data) of a `pack_entry`."""
    i = 0
    while entry[i] & 0x80:
        i += 1
    return _TYPE_NAMES[(entry[0] >> 4) & 0x07], zlib.decompress(entry[i + 1 :])


def read_spool(path: str) -> Iterator[tuple[str, bytes]]:
    """(kind, data) of every object in a spool."""
    with open(path, "rb") as f:
        content = f.read()
    starts = sorted(offset for _, offset, _ in spool_index(path))
    for start, end in zip(starts, [*starts[1:], len(content)], strict=True):
        yield unpack_entry(content[start:end])


# Beside each spool, its ids file: per append, the count (4 bytes), the raw object ids (20
# bytes each), their offsets (8 bytes each) and crc32s (4 bytes each), in this machine's
# byte order. It never leaves the machine, and whole columns pack and unpack in C.
_IDS_SUFFIX: Final = ".ids"


class IndexColumns(NamedTuple):
    ids: bytes  # raw 20-byte object ids, one after the other
    offsets: array[int]
    crcs: array[int]


def _read_ids(path: str) -> IndexColumns:
    """The ids file of the spool at `path`, as columns."""
    with open(path + _IDS_SUFFIX, "rb") as f:
        raw = f.read()
    ids: list[bytes] = []
    offsets, crcs = array("Q"), array("I")
    at = 0
    while at < len(raw):
        (n,) = struct.unpack_from("=I", raw, at)
        ids.append(raw[at + 4 : at + 4 + 20 * n])
        offsets.frombytes(raw[at + 4 + 20 * n : at + 4 + 28 * n])
        crcs.frombytes(raw[at + 4 + 28 * n : at + 4 + 32 * n])
        at += 4 + 32 * n
    return IndexColumns(b"".join(ids), offsets, crcs)


def spool_index(path: str) -> list[tuple[str, int, int]]:
    """(id, offset, crc32) of every object in the spool at `path`, from its ids file."""
    ids, offsets, crcs = _read_ids(path)
    hexes = ids.hex()
    return list(
        zip((hexes[i : i + 40] for i in range(0, len(hexes), 40)), offsets, crcs, strict=True)
    )


def _remove_spool(path: str) -> None:
    for name in (path, path + _IDS_SUFFIX):
        with contextlib.suppress(OSError):
            os.unlink(name)


class PackSpool:
    """A pack being written one batch of entries at a time by one process; `finish_pack` seals
    it (in any process) once nothing more is appended. Until then it is a `tmp_pack_` file
    (with its ids file), which git ignores and `git gc` removes once it is two weeks old, if
    we die. (So a `git gc --prune=now` during a long `tm init` makes the init fail when it
    seals; no ref has moved by then.)"""

    def __init__(self, directory: str, prefix: str = "tmp_pack_") -> None:
        os.makedirs(directory, exist_ok=True)
        fd, self.path = tempfile.mkstemp(prefix=prefix, dir=directory)
        self._file = os.fdopen(fd, "wb")
        try:
            self._ids = open(self.path + _IDS_SUFFIX, "xb")  # noqa: SIM115 (closed by close)
        except BaseException:
            self._file.close()
            os.unlink(self.path)
            raise
        self._file.write(_PACK_HEAD + struct.pack(">I", 0))  # the count is set by finish_pack
        self._end = _PACK_HEAD_SIZE
        self._stored: set[str] = set()

    def append(self, entries: Mapping[str, bytes]) -> SpooledObjects:
        """Write `pack_entry`s (id -> entry) not yet in this spool; the bytes are handed to the
        OS before this returns, so another process can seal the spool."""
        oids = [oid for oid in entries if oid not in self._stored]
        self._stored.update(oids)
        chunks = [entries[oid] for oid in oids]
        # In batches, so the per-object work (write, crc, length) runs in C loops.
        crcs = array("I")
        offsets = array("Q")
        end = self._end
        for i in range(0, len(chunks), 4096):
            batch = chunks[i : i + 4096]
            self._file.write(b"".join(batch))
            crcs.extend(map(zlib.crc32, batch))
            lengths = list(map(len, batch))
            offsets.extend(accumulate(lengths[:-1], initial=end))
            end += sum(lengths)
        self._file.flush()
        self._end = end
        if oids:
            self._ids.write(struct.pack("=I", len(oids)) + bytes.fromhex("".join(oids)))
            self._ids.write(offsets.tobytes() + crcs.tobytes())
            self._ids.flush()
        return SpooledObjects(self.path, len(oids))

    def close(self) -> None:
        self._file.close()
        self._ids.close()


_PACK_HEAD: Final = b"PACK" + struct.pack(">I", 2)
_PACK_HEAD_SIZE: Final = 12


def finish_pack(path: str) -> str:
    """Seal a spool written by `PackSpool` as a pack with its v2 index; returns the pack name
    ("" when it holds nothing). The spool and its ids file are gone afterwards, sealed or not.

    The index is renamed into place after the pack, so a concurrent reader never sees an index
    without its pack.
    """
    directory = os.path.dirname(path)
    try:
        columns = _read_ids(path)
        count = len(columns.offsets)
        if not count:
            return ""  # nothing was spooled: no pack
        pack_hash = hashlib.sha1()
        with open(path, "r+b") as f:
            f.seek(len(_PACK_HEAD))
            f.write(struct.pack(">I", count))
            f.seek(0)
            while block := f.read(1 << 20):
                pack_hash.update(block)
            pack_sum = pack_hash.digest()
            f.write(pack_sum)
            f.flush()
            os.fsync(f.fileno())
        name = "pack-" + pack_sum.hex()
        idx = pack_index(columns, pack_sum)
        os.chmod(path, 0o444)
        os.replace(path, os.path.join(directory, name + ".pack"))
        fd_idx, tmp_idx = tempfile.mkstemp(prefix="tmp_idx_", dir=directory)
        with os.fdopen(fd_idx, "wb") as f:
            f.write(idx)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp_idx, 0o444)
        os.replace(tmp_idx, os.path.join(directory, name + ".idx"))
        return name
    finally:
        _remove_spool(path)


def pack_index(columns: IndexColumns, pack_sum: bytes) -> bytes:
    """The v2 index of a pack holding the objects in `columns`, whose trailer is `pack_sum`."""
    # Column by column, in C loops (slice, sort, bisect, array): per-object Python work cost
    # ~1 s for the 300,000 objects of a 50,000-file baseline.
    raw = columns.ids
    keys = [raw[i : i + 20] for i in range(0, len(raw), 20)]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    ids = [keys[i] for i in order]
    offsets = [columns.offsets[i] for i in order]
    crcs = array("I", [columns.crcs[i] for i in order])
    n = len(ids)
    fanout = [bisect_left(ids, bytes([b + 1])) for b in range(255)] + [n]
    if offsets and max(offsets) >= 0x80000000:
        small = array("I", [off if off < 0x80000000 else 0 for off in offsets])
        large = array("Q", [off for off in offsets if off >= 0x80000000])
        k = 0
        for i, off in enumerate(offsets):
            if off >= 0x80000000:
                small[i] = 0x80000000 | k  # the offset's place in the 64-bit table
                k += 1
    else:
        small, large = array("I", offsets), array("Q")
    if sys.byteorder == "little":
        for column in (crcs, small, large):
            column.byteswap()  # the index is big-endian
    idx = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    idx += struct.pack(">256I", *fanout)
    idx += b"".join(ids)
    idx += crcs.tobytes()
    idx += small.tobytes()
    idx += large.tobytes()
    idx += pack_sum
    idx += hashlib.sha1(idx).digest()
    return bytes(idx)


def write_pack(directory: str, entries: Mapping[str, bytes]) -> str:
    """Write objects (id -> `pack_entry`) as one pack with a v2 index; returns the pack name."""
    spool = PackSpool(directory)
    try:
        spool.append(entries)
    except BaseException:
        spool.close()
        _remove_spool(spool.path)
        raise
    spool.close()
    return finish_pack(spool.path)


def discard_spools(directory: str, prefix: str) -> None:
    """Remove the unsealed spools named with `prefix`, and their ids files (an import that
    failed part-way)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            if name.startswith(prefix):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(directory, name))


# A change to a tree: path -> (mode, id) to set, or None to remove.
TreeChanges = Mapping[str, "tuple[int, str] | None"]


class UnnamedEntriesError(ValueError):
    """A change set would replace a directory by a file, or a file by a directory, holding
    entries the caller did not name: `edit_tree` never drops them silently. A tm bug when it
    is raised (an internal invariant: the ledger commits no such tree), never a user's."""


def edit_tree(writer: ObjectWriter, base: str | None, changes: TreeChanges) -> str:
    """Apply `changes` below the tree `base` (None: empty) and return the new tree's id.

    Removals (None) apply first, then every other change; so a path and one below it can both
    be named when one of them is a removal, in either order. A set that would drop what is
    there without the change set naming it raises UnnamedEntriesError: a blob over a
    directory holding blobs not removed by `changes`, or a path below a blob that is not
    removed. (A tree set over a tree replaces it whole: entity trees are written so.)
    Only the subtrees on the changed paths are read and rewritten, so a one-file change to a
    50,000-file State Map costs a handful of tree objects. Directories left empty vanish.
    """
    removed = {path for path, value in changes.items() if value is None}
    nested = _Dir()
    # Each directory is walked to once, not once per path below it (a baseline: 150,000 paths
    # in ~1,500 directories).
    dirs: dict[str, _Dir] = {"": nested}
    sets = [(path, value) for path, value in changes.items() if value is not None]
    for path, value in sets:
        head, _, name = path.rpartition("/")
        node = _dir_at(dirs, nested, head, path)
        if isinstance(node.children.get(name), _Dir):
            raise UnnamedEntriesError(f"{path} is set and so is a path below it")
        node.children[name] = value
    for path in removed:
        head, _, name = path.rpartition("/")
        node = nested
        covered = False  # below a path set or removed: the removal only names what goes
        for part in head.split("/") if head else ():
            if part not in node.children:
                node.children[part] = _Dir()
            child = node.children[part]
            if not isinstance(child, _Dir):
                covered = True  # set, or removed itself
                break
            node = child
        if covered:
            continue
        current = node.children.get(name)
        if isinstance(current, _Dir):
            current.fresh = True  # removed first, then the paths set below it
        elif current is None:
            node.children[name] = None
    result = _edit(writer, base, nested, removed)
    return result if result is not None else writer.tree([])


class _Dir:
    """A directory of `edit_tree`'s changes; `fresh`: removed before anything is set in it."""

    __slots__ = ("children", "fresh", "sets")

    def __init__(self) -> None:
        self.children: dict[str, _Dir | tuple[int, str] | None] = {}
        self.fresh = False
        self.sets = False  # something is set below it (else it only removes)


def _dir_at(dirs: dict[str, _Dir], root: _Dir, head: str, path: str) -> _Dir:
    node = dirs.get(head)
    if node is not None:
        return node
    node = root
    for part in head.split("/"):
        child = node.children.get(part)
        if child is None:
            child = node.children[part] = _Dir()
        elif not isinstance(child, _Dir):
            raise UnnamedEntriesError(f"{path} is set and so is {head}, a path above it")
        child.sets = True
        node = child
    dirs[head] = node
    return node


def _edit(writer: ObjectWriter, base: str | None, changes: _Dir, removed: set[str]) -> str | None:
    """The tree `base` with the nested `changes` applied; None when nothing is left. Iterative,
    a frame per directory on the changed paths: a path git committed a thousand directories
    deep must not reach Python's recursion limit (#29)."""
    stack = [_open_level(writer, base, changes, "", removed)]
    while True:
        entries, subdirs, prefix = stack[-1]
        if subdirs:
            sub_name, sub_changes = subdirs.pop()
            current = entries.get(sub_name)
            path = prefix + sub_name
            sub_base = None
            if current is not None and not sub_changes.fresh:
                if current[0] == MODE_TREE:
                    sub_base = current[1]
                elif sub_changes.sets:
                    # A file where the changes need a directory: only if they remove it.
                    raise UnnamedEntriesError(
                        f"{path} is a file; a change below it names no removal of it"
                    )
                else:
                    continue  # removals below a file: nothing there to remove
            stack.append(_open_level(writer, sub_base, sub_changes, path + "/", removed))
            continue
        stack.pop()
        oid = writer.tree((n, mode, o) for n, (mode, o) in entries.items()) if entries else None
        if not stack:
            return oid
        parent, _, parent_prefix = stack[-1]
        name = prefix[len(parent_prefix) : -1]
        if oid is None:
            parent.pop(name, None)
        else:
            parent[name] = (MODE_TREE, oid)


_Level = tuple[dict[str, tuple[int, str]], list[tuple[str, _Dir]], str]


def _open_level(
    writer: ObjectWriter, base: str | None, changes: _Dir, prefix: str, removed: set[str]
) -> _Level:
    """One directory of `_edit`: its entries with the changes to blobs applied, the changed
    subdirectories still to do, and its path with a trailing slash."""
    entries: dict[str, tuple[int, str]] = {}
    if base is not None:
        for entry_name, mode, oid in writer.tree_entries(base):
            entries[entry_name] = (mode, oid)
    subdirs: list[tuple[str, _Dir]] = []
    for child, change in changes.children.items():
        if isinstance(change, _Dir):
            subdirs.append((child, change))
        elif change is None:
            entries.pop(child, None)
        else:
            current = entries.get(child)
            if current is not None and current[0] == MODE_TREE and change[0] != MODE_TREE:
                _check_named(writer, current[1], prefix + child + "/", removed)
            entries[child] = change
    return entries, subdirs, prefix


def _check_named(writer: ObjectWriter, tree: str, prefix: str, removed: set[str]) -> None:
    """Every blob below `tree` (at `prefix`) is removed by the change set, itself or by a
    directory above it: a file may then take the directory's place."""
    stack = [(tree, prefix)]
    while stack:
        oid, at = stack.pop()
        if at[:-1] in removed:
            continue
        for name, mode, child in writer.tree_entries(oid):
            if mode == MODE_TREE:
                stack.append((child, at + name + "/"))
            elif at + name not in removed:
                raise UnnamedEntriesError(
                    f"{at + name} would be dropped: a file takes the place of its directory"
                )


def walk_blobs(
    repo: pygit2.Repository, tree_id: str, prefix: str = ""
) -> Iterable[tuple[str, str]]:
    """(path, blob id) of every blob below a stored tree, depth first."""
    stack: list[tuple[str, pygit2.Tree]] = [(prefix, read_tree(repo, tree_id))]
    while stack:
        base, tree = stack.pop()
        for entry in tree:
            name = entry.name or ""
            if entry.filemode == MODE_TREE:
                stack.append((base + name + "/", read_tree(repo, entry.id)))
            else:
                yield base + name, str(entry.id)


def diff_blobs(
    repo: pygit2.Repository, old: str, new: str, prefix: str = ""
) -> Iterator[tuple[str, str | None]]:
    """(path, blob id in `new`, or None when gone) of every blob that differs between two
    stored trees. Equal subtrees are skipped unread: after a one-file change to a 50,000-file
    tree this reads a handful of trees, where listing either tree reads a thousand. Iterative
    (a stack of levels): a committed path can be deeper than Python's recursion limit."""
    stack = [_diff_level(repo, old, new, prefix)]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
        elif isinstance(step, _Descend):
            stack.append(_diff_level(repo, step.old, step.new, step.prefix))
        else:
            yield step


class _Descend(NamedTuple):
    """Two subtrees `diff_blobs` compares next, before the rest of their parents."""

    old: str
    new: str
    prefix: str


def _diff_level(
    repo: pygit2.Repository, old: str, new: str, prefix: str
) -> Iterator[tuple[str, str | None] | _Descend]:
    before = {e.name or "": (e.filemode, str(e.id)) for e in read_tree(repo, old)}
    after = {e.name or "": (e.filemode, str(e.id)) for e in read_tree(repo, new)}
    for name in sorted(before.keys() | after.keys()):
        a, b = before.get(name), after.get(name)
        if a == b:
            continue
        path = prefix + name
        a_tree = a is not None and a[0] == MODE_TREE
        b_tree = b is not None and b[0] == MODE_TREE
        if a is not None and b is not None and a_tree and b_tree:
            yield _Descend(a[1], b[1], path + "/")
            continue
        if a is not None:
            if a_tree:
                yield from ((p, None) for p, _ in walk_blobs(repo, a[1], path + "/"))
            elif b is None or b_tree:
                yield path, None
        if b is not None:
            if b_tree:
                yield from walk_blobs(repo, b[1], path + "/")
            else:
                yield path, b[1]
