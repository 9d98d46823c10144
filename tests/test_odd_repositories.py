"""Repositories as users have them: each works, or refuses in one sentence, never with a
traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import PY_APP, git, tm, write


def _clean(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    if proc.returncode != 0:
        assert proc.stderr.strip().count("\n") == 0, proc.stderr  # one sentence


def _basic(repo: Path, *, cwd: Path | None = None) -> None:
    where = cwd or repo
    for argv in (("init",), ("status",), ("log",), ("state",), ("doctor",), ("rebuild",)):
        proc = tm(where, *argv)
        _clean(proc)


def test_no_commits_yet(repo: Path) -> None:
    write(repo, "app.py", PY_APP)
    proc = tm(repo, "init")
    _clean(proc)
    assert proc.returncode == 0, proc.stderr
    assert tm(repo, "status", "--check").returncode == 0


def test_a_path_with_spaces_and_a_subdirectory(repo: Path) -> None:
    write(repo, "my dir/the app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    write(repo, "my dir/the app.py", PY_APP + "\nX = 1\n")
    sub = repo / "my dir"
    proc = tm(sub, "adopt", "the app.py")
    _clean(proc)
    assert proc.returncode == 0, proc.stderr
    state = json.loads(tm(sub, "state", "--json").stdout)
    assert any(e["path"] == "my dir/the app.py" for e in state["entities"])
    assert tm(sub, "status", "--check").returncode == 0


def test_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    other = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(other))
    for argv in (("status",), ("log",), ("state",), ("doctor",)):
        _clean(tm(other, *argv))


def test_a_submodule(repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    write(lib, "lib.py", "def lib():\n    return 1\n")
    git(lib, "add", ".")
    git(lib, "commit", "-qm", "lib")
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(repo, "commit", "-qm", "sub")
    _basic(repo)
    assert tm(repo, "status", "--check").returncode == 0
    _basic(repo / "lib")  # inside the submodule: its own repository


def test_a_sha256_repository(tmp_path: Path) -> None:
    repo = tmp_path / "sha"
    repo.mkdir()
    git(repo, "init", "-q", "--object-format=sha256")
    write(repo, "app.py", PY_APP)
    proc = tm(repo, "init")
    _clean(proc)
    assert proc.returncode in (0, 3), proc.stderr
