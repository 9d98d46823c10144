from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import git, tm, write
from tinymem.gitsuspects import _lists_gitattributes, start

_NAME = st.text(alphabet="ab .-_gitatrbuesé", min_size=1, max_size=16).filter(
    lambda s: s not in (".", "..")
)
_PATH = st.lists(_NAME, min_size=1, max_size=4).map("/".join)
_TAG = st.sampled_from(["H", "S", "h", "M", "C", "?"])


@given(st.lists(st.tuples(_TAG, _PATH), max_size=20))
def test_gitattributes_in_any_directory_is_always_found(entries: list[tuple[str, str]]) -> None:
    listing = b"".join(f"{tag} {path}\0".encode() for tag, path in entries)
    found = _lists_gitattributes(listing)
    named = any(path.rsplit("/", 1)[-1] == ".gitattributes" for _, path in entries)
    if named:
        assert found  # a miss would hash filtered files raw: false STALE or a false clean
    elif found:
        # The one allowed false alarm (it only costs filtered hashing).
        assert any(path.endswith(" .gitattributes") for _, path in entries)


def test_probe_reads_the_tip_and_compares_with_its_files_tree(repo: Path) -> None:
    write(repo, "a.py", "def a():\n    pass\n")
    write(repo, "lib/b.py", "def b():\n    pass\n")
    git(repo, "add", ".")
    assert start(str(repo)) is None  # not initialized: no ledger commit to compare with
    assert tm(repo, "init", "-q").returncode == 0
    write(repo, "lib/b.py", "def b():\n    return 1\n")
    probe = start(str(repo / "lib"))
    assert probe is not None
    assert probe.commit == git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    git_dir = str(repo / ".git")
    assert probe.compares(git_dir, str(repo), probe.commit)
    assert not probe.compares(git_dir, str(repo), "0" * 40)
    assert not probe.serves(git_dir, str(repo / "lib"))
    assert probe.result() == {"lib/b.py"}
    assert probe.tracked_gitattributes is False


def test_probe_outside_a_repository_is_none(tmp_path: Path) -> None:
    assert start(str(tmp_path)) is None


def test_probe_reads_packed_and_linked_worktree_refs(repo: Path, tmp_path: Path) -> None:
    write(repo, "a.py", "def a():\n    pass\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init", "-q").returncode == 0
    git(repo, "pack-refs", "--all")  # as `git gc` leaves them
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    assert not (repo / ".git" / "refs" / "tinymem" / "heads" / "main").exists()
    probe = start(str(repo))
    assert probe is not None and probe.commit == tip
    other = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(other))
    assert start(str(other)) is None  # no ledger for side yet: the full path starts it
    assert tm(other, "status", "--check").returncode == 0
    probe = start(str(other))
    assert probe is not None
    assert probe.commit == git(repo, "rev-parse", "refs/tinymem/heads/side").strip()
    assert probe.serves(str(repo / ".git" / "worktrees" / "wt"), str(other))
    git(repo, "switch", "-q", "--detach")
    assert start(str(repo)) is None  # detached: the full path says so
