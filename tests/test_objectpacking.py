"""tm packs the loose objects its episodes write before git's automatic gc would."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from tests.conftest import PY_APP, git, init_repo, tm, write
from tinymem.objectpacking import loose_estimate, pack_if_needed


def _objects(repo: Path) -> str:
    return str(repo / ".git" / "objects")


def _blob_in_sampled_dir(git_repo: pygit2.Repository, tag: str) -> str:
    """A new blob whose id starts with 17: the directory git counts loose objects in."""
    n = 0
    while True:
        data = f"{tag} {n}\n".encode()
        if pygit2.hash(data).raw[0] == 0x17:
            return str(git_repo.create_blob(data))
        n += 1


def _commit_blobs(repo: Path, count: int, tag: str) -> list[str]:
    """`count` reachable loose blobs in objects/17 (a commit on a side ref names them)."""
    g = pygit2.Repository(str(repo))
    builder = g.TreeBuilder()
    ids = []
    for i in range(count):
        oid = _blob_in_sampled_dir(g, f"{tag}-{i}")
        builder.insert(f"f{i}", pygit2.Oid(hex=oid), pygit2.enums.FileMode.BLOB)
        ids.append(oid)
    sig = pygit2.Signature("t", "t@example.com")
    g.create_commit(f"refs/test/{tag}", sig, sig, "blobs", builder.write(), [])
    return ids


def test_loose_objects_are_packed_at_half_of_gc_auto(repo: Path) -> None:
    git(repo, "config", "gc.auto", "1024")  # git's sample threshold: 4 objects in objects/17
    ids = _commit_blobs(repo, 2, "a")
    tinymem_dir = str(repo / ".git" / "tinymem")
    assert loose_estimate(_objects(repo)) == 512
    assert not pack_if_needed(str(repo / ".git"), tinymem_dir)  # 512 is half: not above it
    ids += _commit_blobs(repo, 1, "b")
    assert pack_if_needed(str(repo / ".git"), tinymem_dir)
    assert loose_estimate(_objects(repo)) == 0
    assert not os.path.exists(repo / ".git" / "objects" / "17")
    g = pygit2.Repository(str(repo))
    assert all(g.get(oid) is not None for oid in ids)  # packed, still readable
    assert "count: 0" in git(repo, "count-objects", "-v")


def test_unreachable_loose_objects_do_not_make_every_episode_repack(repo: Path) -> None:
    """Objects no ref reaches stay loose (only git gc prunes them): tm packs again only once
    as many new ones came as a quarter of gc.auto, not after every episode."""
    git(repo, "config", "gc.auto", "1024")
    g = pygit2.Repository(str(repo))
    for i in range(3):
        _blob_in_sampled_dir(g, f"unreachable-{i}")  # no ref names them
    tinymem_dir = str(repo / ".git" / "tinymem")
    assert pack_if_needed(str(repo / ".git"), tinymem_dir)  # tried: it could not know
    assert loose_estimate(_objects(repo)) == 768
    assert not pack_if_needed(str(repo / ".git"), tinymem_dir)  # nothing new since
    _commit_blobs(repo, 1, "c")  # 1024: a quarter more than after the last repack
    assert pack_if_needed(str(repo / ".git"), tinymem_dir)
    assert loose_estimate(_objects(repo)) == 768


def test_episodes_keep_the_repository_under_gc_auto(repo: Path) -> None:
    """Ledger episodes end with the check: past half of a small gc.auto the next episode packs,
    later episodes never leave git a reason to repack on the user's next commit, and the
    ledger stays whole."""
    git(repo, "config", "gc.auto", "512")
    init_repo(repo, {"app.py": PY_APP})
    _commit_blobs(repo, 2, "before")  # git's estimate 512: over half of gc.auto
    write(repo, "app.py", PY_APP + "\n\ndef added():\n    return 0\n")
    assert tm(repo, "adopt", "app.py").returncode == 0
    assert loose_estimate(_objects(repo)) < 512
    packs = [p for p in os.listdir(repo / ".git" / "objects" / "pack") if p.endswith(".pack")]
    assert packs
    for i in range(30):
        write(repo, "app.py", PY_APP + f"\n\ndef added_{i}():\n    return {i}\n")
        assert tm(repo, "adopt", "app.py").returncode == 0
        assert loose_estimate(_objects(repo)) <= 512
    assert tm(repo, "rebuild").returncode == 0


def test_gc_auto_is_read_as_git_reads_it_without_a_git_process(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pygit2's config gives what `git config --int gc.auto` gives: k/m/g suffixes, git's
    default when unset or unreadable, and 0 (git's gc off) still packs at git's default."""
    from tinymem import objectpacking

    spawned: list[tuple[str, ...]] = []
    real = objectpacking.git_output

    def recording(git_dir: str, *args: str) -> str | None:
        spawned.append(args)
        return real(git_dir, *args)

    monkeypatch.setattr(objectpacking, "git_output", recording)
    config = pygit2.Repository(str(repo)).config
    assert objectpacking._gc_auto(config) == objectpacking.GC_AUTO_DEFAULT  # unset
    for raw in ("1024", "2k", "3K", "1m", "1g", "7"):
        git(repo, "config", "gc.auto", raw)
        as_git = int(git(repo, "config", "--int", "gc.auto"))
        assert objectpacking._gc_auto(pygit2.Repository(str(repo)).config) == as_git, raw
    for raw in ("0", "-5", "lots"):
        git(repo, "config", "gc.auto", raw)
        assert objectpacking._gc_auto(pygit2.Repository(str(repo)).config) == 6700, raw
    # An episode's check spawns no `git config` (only the repack itself, when due).
    git(repo, "config", "gc.auto", "1k")
    _commit_blobs(repo, 1, "d")
    assert not pack_if_needed(str(repo / ".git"), str(repo / ".git" / "tinymem"))
    assert spawned == []
