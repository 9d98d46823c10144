from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import git
from tinymem.gitobjects import (
    PACK_THRESHOLD,
    ObjectWriter,
    blob_id,
    pack_entry,
    unpack_entry,
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
