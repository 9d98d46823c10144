from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zlib
from array import array
from pathlib import Path

import pygit2
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.conftest import git
from tinymem.gitobjects import (
    MODE_BLOB,
    PACK_THRESHOLD,
    PARALLEL_SEAL_MIN,
    IndexColumns,
    ObjectWriter,
    PackSpool,
    SpooledObjects,
    UnnamedEntriesError,
    blob_id,
    diff_blobs,
    edit_tree,
    pack_dir,
    pack_entry,
    pack_index,
    spool_index,
    walk_blobs,
)

_KINDS = {1: "commit", 2: "tree", 3: "blob"}


def _unpack_entry(entry: bytes) -> tuple[str, bytes]:
    # The reading side of git's pack entry format, written from its documentation.
    kind = _KINDS[(entry[0] >> 4) & 0x07]
    size, shift, i = entry[0] & 0x0F, 4, 0
    while entry[i] & 0x80:
        i += 1
        size |= (entry[i] & 0x7F) << shift
        shift += 7
    data = zlib.decompress(entry[i + 1 :])
    assert len(data) == size
    return kind, data


@given(st.sampled_from(["blob", "tree", "commit"]), st.binary(max_size=5000))
def test_a_pack_entry_unpacks_to_its_object(kind: str, data: bytes) -> None:
    assert _unpack_entry(pack_entry(kind, data)) == (kind, data)


def _spool_in_two_workers(git_repo: pygit2.Repository, texts: list[bytes]) -> list[SpooledObjects]:
    directory = pack_dir(git_repo)
    count = len(texts)
    parts = []
    for worker_texts in (texts[: count // 2], texts[count // 2 :]):
        spool = PackSpool(directory, "tmp_pack_test-")
        worker = ObjectWriter(git_repo)
        for t in worker_texts:
            worker.blob(t)
        worker.blob(texts[0])  # the same object in two spools is harmless
        parts.append(worker.spool(spool))
        worker.blob(texts[0])
        parts.append(worker.spool(spool))  # appended to a spool once
        assert not worker.spool(spool).count  # handed over, not kept
        spool.close()
    assert parts[1].count == 0 and parts[3].count == 0
    assert {oid for oid, _, _ in spool_index(parts[0].path)} == {
        blob_id(t) for t in texts[: count // 2]
    }
    return parts


@pytest.mark.parametrize("early", [False, True])  # sealed in `flush`; sealing started before
@pytest.mark.parametrize(
    "count", [3, PACK_THRESHOLD + 5, 2 * 4096 + 3, PARALLEL_SEAL_MIN + 3]
)  # loose; packs; packs sealed in other processes when `early`
def test_objects_spooled_by_workers_are_sealed_by_another_writer(
    repo: Path, count: int, early: bool
) -> None:
    git_repo = pygit2.Repository(str(repo))
    directory = pack_dir(git_repo)
    texts = [f"text {i}\n".encode() for i in range(count)]
    parts = _spool_in_two_workers(git_repo, texts)
    main = ObjectWriter(git_repo)
    for part in parts:
        main.add_spooled(part)
    if early:
        main.seal_spooled()  # a small import is left to `flush`
        assert bool(main._sealing) == (count >= PARALLEL_SEAL_MIN)
    ids = [blob_id(t) for t in texts]
    tree = main.tree([(f"f{i}", 0o100644, oid) for i, oid in enumerate(ids)])
    main.flush()
    assert not [n for n in os.listdir(directory) if n.startswith("tmp_")]
    for oid, text in zip(ids, texts, strict=True):
        assert bytes(git_repo.odb.read(oid)[1]) == text
    git(repo, "update-ref", "refs/tinymem/test", git(repo, "commit-tree", tree, "-m", "t").strip())
    git(repo, "fsck", "--strict", "--no-dangling")
    packs = [str(p) for p in Path(directory).glob("*.idx")]
    if count + 1 < PACK_THRESHOLD:
        assert not packs  # a few objects are written loose, as git would
    else:
        assert len(packs) == 2  # one per spool
        git(repo, "verify-pack", *packs)
    assert not [n for n in os.listdir(directory) if n.startswith("tmp_")]  # ids files too


def test_an_object_compressed_ahead_is_stored_as_compressed(repo: Path) -> None:
    git_repo = pygit2.Repository(str(repo))
    writer = ObjectWriter(git_repo)
    texts = [f"object {i}\n".encode() * 50 for i in range(PACK_THRESHOLD + 1)]
    ids = [writer.blob(t) for t in texts]
    writer.compress_ahead(ids[7])  # in a thread, in commit_episode
    writer.flush()
    for oid, text in zip(ids, texts, strict=True):
        assert bytes(git_repo.odb.read(oid)[1]) == text
    packs = [str(p) for p in Path(pack_dir(git_repo)).glob("*.idx")]
    git(repo, "verify-pack", *packs)


def test_discarding_while_spools_are_sealed_waits_and_removes_the_rest(repo: Path) -> None:
    git_repo = pygit2.Repository(str(repo))
    main = ObjectWriter(git_repo)
    for k in range(6):  # more spools than sealing processes: some wait, and are cancelled
        spool = PackSpool(pack_dir(git_repo), "tmp_pack_test-")
        worker = ObjectWriter(git_repo)
        for i in range(PARALLEL_SEAL_MIN // 3):
            worker.blob(f"{k} {i}\n".encode())
        main.add_spooled(worker.spool(spool))
        spool.close()
    main.seal_spooled()
    main.discard()
    assert not [n for n in os.listdir(pack_dir(git_repo)) if n.startswith("tmp_")]


def test_a_spool_that_cannot_be_sealed_fails_the_flush_and_leaves_no_spool(repo: Path) -> None:
    git_repo = pygit2.Repository(str(repo))
    texts = [f"t{i}\n".encode() for i in range(PARALLEL_SEAL_MIN + 1)]
    parts = _spool_in_two_workers(git_repo, texts)
    main = ObjectWriter(git_repo)
    for part in parts:
        main.add_spooled(part)
    os.unlink(parts[2].path)  # as `git gc --prune=now` does to a spool during a long import
    main.seal_spooled()  # in other processes: one of them fails
    with pytest.raises(FileNotFoundError):
        main.flush()
    assert not [n for n in os.listdir(pack_dir(git_repo)) if n.startswith("tmp_")]
    main.discard()  # what `commit_episode` does next: nothing left to raise or remove


_SEG = st.sampled_from(["a", "b", "c.py", "d"])
_TREE_PATH = st.lists(_SEG, min_size=1, max_size=3).map("/".join)
_TREE = st.dictionaries(_TREE_PATH, st.sampled_from([b"1", b"2", b"3"]))


def _store(writer: ObjectWriter, files: dict[str, bytes]) -> str:
    # A path that is also a directory of another path ("a" and "a/b") cannot be in one tree.
    keep = {p: d for p, d in files.items() if not any(q.startswith(p + "/") for q in files)}
    return edit_tree(writer, None, {p: (MODE_BLOB, writer.blob(d)) for p, d in keep.items()})


@given(_TREE, _TREE)
def test_diff_of_two_trees_is_what_changed_between_their_listings(
    old: dict[str, bytes], new: dict[str, bytes]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        git_repo = pygit2.init_repository(tmp)
        writer = ObjectWriter(git_repo)
        a, b = _store(writer, old), _store(writer, new)
        writer.flush()
        before, after = dict(walk_blobs(git_repo, a)), dict(walk_blobs(git_repo, b))
        expected = {p: after.get(p) for p in before.keys() | after.keys()}
        expected = {p: o for p, o in expected.items() if before.get(p) != o}
        got = list(diff_blobs(git_repo, a, b))
        assert len(got) == len(dict(got))  # each path once
        assert dict(got) == expected


def _edited(base: dict[str, str], changes: dict[str, str | None]) -> dict[str, str] | None:
    """What `edit_tree` makes of a tree, as flat paths: a model written from its rules
    (removals first, then the sets; None where it must refuse to drop what no change names)."""

    def below(q: str, p: str) -> bool:
        return q.startswith(p + "/")

    out = dict(base)
    for path, value in changes.items():
        if value is None:
            out = {q: o for q, o in out.items() if q != path and not below(q, path)}
    sets = {p: v for p, v in changes.items() if v is not None}
    for path, value in sets.items():
        if any(below(q, path) or below(path, q) for q in sets):
            return None  # a path set and a path below it
        if any(below(path, q) for q in out) or any(below(q, path) for q in out):
            return None  # a file where a directory is set, or the reverse, not removed
        out[path] = value
    return out


@given(_TREE, st.lists(st.tuples(_TREE_PATH, st.none() | st.sampled_from([b"4", b"5"]))))
# A directory replaced by a file, then a path below it again.
@example({}, [("a/b/c", b"4"), ("a", b"5"), ("a/b/d", b"4")])
# A file takes the place of a directory whose entries are named gone, and the reverse.
@example({"a/b": b"1", "a/c/d": b"2"}, [("a", b"4"), ("a/b", None), ("a/c", None)])
@example({"a/b": b"1", "a/c/d": b"2"}, [("a", b"4"), ("a/b", None)])
@example({"a": b"1"}, [("a/b", b"4"), ("a", None)])
@example({"a": b"1"}, [("a/b", b"4")])
@example({"a": b"1"}, [("a/b", None)])
@example({"a": b"1"}, [("a", None), ("a/a", None)])
def test_edit_tree_applies_changes_to_files_and_directories_by_its_rules(
    base: dict[str, bytes], changes: list[tuple[str, bytes | None]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        git_repo = pygit2.init_repository(tmp)
        writer = ObjectWriter(git_repo)
        before = _store(writer, base)
        edits = {p: None if d is None else (MODE_BLOB, writer.blob(d)) for p, d in changes}
        writer.flush()
        expected = _edited(
            dict(walk_blobs(git_repo, before)),
            {p: None if e is None else e[1] for p, e in edits.items()},
        )
        if expected is None:
            with pytest.raises(UnnamedEntriesError):
                edit_tree(writer, before, edits)
            return
        after = edit_tree(writer, before, edits)
        writer.flush()
        assert dict(walk_blobs(git_repo, after)) == expected


_OID = st.binary(min_size=20, max_size=20).map(bytes.hex)
_PLACE = st.tuples(st.integers(0, 2**40), st.integers(0, 2**32 - 1))


@given(st.dictionaries(_OID, _PLACE, max_size=60))
def test_a_pack_index_finds_each_object_at_its_offset(places: dict[str, tuple[int, int]]) -> None:
    # Read back as git's pack-format documentation describes a v2 index, including offsets
    # past 2 GiB, which live in a separate 64-bit table.
    columns = IndexColumns(
        bytes.fromhex("".join(places)),
        array("Q", [off for off, _ in places.values()]),
        array("I", [crc for _, crc in places.values()]),
    )
    idx = pack_index(columns, b"\x01" * 20)
    assert idx[:8] == b"\xfftOc\x00\x00\x00\x02"
    fanout = struct.unpack(">256I", idx[8 : 8 + 1024])
    n = fanout[-1]
    assert n == len(places)
    pos = 8 + 1024
    ids = [idx[pos + 20 * i : pos + 20 * (i + 1)].hex() for i in range(n)]
    assert ids == sorted(places)
    for b in range(256):
        assert fanout[b] == sum(1 for oid in ids if int(oid[:2], 16) <= b)
    pos += 20 * n
    crcs = struct.unpack(f">{n}I", idx[pos : pos + 4 * n])
    pos += 4 * n
    small = struct.unpack(f">{n}I", idx[pos : pos + 4 * n])
    pos += 4 * n
    n_large = sum(1 for off in small if off & 0x80000000)
    large = struct.unpack(f">{n_large}Q", idx[pos : pos + 8 * n_large])
    pos += 8 * n_large
    for i, oid in enumerate(ids):
        off = large[small[i] & 0x7FFFFFFF] if small[i] & 0x80000000 else small[i]
        assert (off, crcs[i]) == places[oid]
    assert idx[pos : pos + 20] == b"\x01" * 20
    assert hashlib.sha1(idx[: pos + 20]).digest() == idx[pos + 20 :]


def test_trees_deeper_than_the_recursion_limit_are_edited_and_compared(repo: Path) -> None:
    """A path git committed 1,500 directories deep: `_edit` and `diff_blobs` recursed once per
    level and ended in a RecursionError (#29)."""
    git_repo = pygit2.Repository(str(repo))
    writer = ObjectWriter(git_repo)
    deep = "/".join(["d"] * 1500) + "/x.py"
    one = edit_tree(
        writer,
        None,
        {deep: (MODE_BLOB, writer.blob(b"1\n")), "a": (MODE_BLOB, writer.blob(b"a\n"))},
    )
    two = edit_tree(writer, one, {deep: (MODE_BLOB, writer.blob(b"2\n"))})
    gone = edit_tree(writer, two, {deep: None})
    writer.flush()
    assert dict(walk_blobs(git_repo, two)) == {deep: blob_id(b"2\n"), "a": blob_id(b"a\n")}
    assert list(diff_blobs(git_repo, one, two)) == [(deep, blob_id(b"2\n"))]
    assert list(diff_blobs(git_repo, two, gone)) == [(deep, None)]
    assert dict(walk_blobs(git_repo, gone)) == {"a": blob_id(b"a\n")}  # empty levels vanish
