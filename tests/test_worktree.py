"""Linked worktrees share objects, config and hooks with the main repository."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import PY_APP, git, tm, write


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
