"""Reading work-tree files (tinymem/worktree.py), and linked worktrees, which share objects,
config and hooks with the main repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import PY_APP, git, tm, write
from tinymem.worktree import NotAFileError, read_regular


def test_a_regular_file_is_read_whole_and_anything_else_refused(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"x = 1\n" * 100_000)
    (tmp_path / "empty").write_bytes(b"")
    data, st = read_regular(str(tmp_path / "a.py"))
    assert data == b"x = 1\n" * 100_000 and st.st_size == len(data)
    assert read_regular(str(tmp_path / "empty"))[0] == b""
    os.symlink("a.py", tmp_path / "link")
    os.symlink("missing", tmp_path / "dangling")
    os.mkfifo(tmp_path / "fifo")  # must not block waiting for a writer
    (tmp_path / "dir").mkdir()
    for name in ("link", "dangling", "fifo", "dir"):
        with pytest.raises(NotAFileError):
            read_regular(str(tmp_path / name))
    with pytest.raises(FileNotFoundError):
        read_regular(str(tmp_path / "nothing"))


def test_linked_worktree_uses_the_common_dir(repo: Path, tmp_path: Path) -> None:
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    git(repo, "config", "tinymem.model", "from/main-repo")
    wt = tmp_path / "wt2"
    git(repo, "worktree", "add", "-q", str(wt))
    assert tm(wt, "config", "model").stdout.strip() == "from/main-repo"
    # A baseline large enough to go through the pack writer lands in the shared objects.
    for i in range(300):
        write(wt, f"m{i}.py", f"def f{i}():\n    return {i}\n")
    git(wt, "add", ".")
    assert tm(wt, "init").returncode == 0
    assert tm(wt, "rebuild").returncode == 0
    git(repo, "fsck", "--strict", "--no-dangling")
    assert json.loads(tm(wt, "status", "--json").stdout)["clean"] is True
    proc = tm(wt, "hook", "install")
    assert proc.returncode == 0, proc.stderr
    assert (repo / ".git" / "hooks" / "pre-commit").exists()
