from __future__ import annotations

import tempfile
from pathlib import Path

import pygit2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import git
from tinymem.gitobjects import (
    MODE_BLOB,
    PACK_THRESHOLD,
    ObjectWriter,
    blob_id,
    diff_blobs,
    edit_tree,
    pack_entry,
    unpack_entry,
    walk_blobs,
)


@given(st.sampled_from(["blob", "tree", "commit"]), st.binary(max_size=5000))
def test_a_pack_entry_unpacks_to_its_object(kind: str, data: bytes) -> None:
    assert unpack_entry(pack_entry(kind, data)) == (kind, data)


@pytest.mark.parametrize("count", [3, PACK_THRESHOLD + 5, 2 * 4096 + 3])  # loose; one batch; three
def test_objects_exported_by_one_writer_are_stored_by_another(repo: Path, count: int) -> None:
    git_repo = pygit2.Repository(str(repo))
    worker = ObjectWriter(git_repo)
    texts = [f"text {i}\n".encode() for i in range(count)]
    ids = [worker.blob(t) for t in texts]
    tree = worker.tree([(f"f{i}", 0o100644, oid) for i, oid in enumerate(ids)])
    entries = worker.export()
    assert len(entries) == count + 1 and not worker.export()  # handed over, not kept

    main = ObjectWriter(git_repo)
    main.add_entries(entries)
    main.add_entries(entries)  # the same objects from two workers are stored once
    assert main.read(ids[0]) == texts[0]  # readable before the flush
    assert [name for name, _, _ in main.tree_entries(tree)][:2] == ["f0", "f1"]
    main.flush()
    for oid, text in zip(ids, texts, strict=True):
        assert oid == blob_id(text)
        assert bytes(git_repo.odb.read(oid)[1]) == text
    git(repo, "update-ref", "refs/tinymem/test", git(repo, "commit-tree", tree, "-m", "t").strip())
    git(repo, "fsck", "--strict", "--no-dangling")


_SEG = st.sampled_from(["a", "b", "c.py", "d"])
_TREE = st.dictionaries(
    st.lists(_SEG, min_size=1, max_size=3).map("/".join), st.sampled_from([b"1", b"2", b"3"])
)


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
