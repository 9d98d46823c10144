"""Linked worktrees: each works on its own branch's State Map, concurrently, without
cross-talk, and `tm init` in one starts that branch rather than saying "already"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import MODEL_ENV, ask_argv, git, init_repo, tm, write
from tests.modelserver import ModelServer


def _propose(where: Path, server: ModelServer, path: str, code: str) -> str:
    server.add(f"```python path={path}\n{code}\n```\n")
    proc = tm(where, *ask_argv(server, f"change {path}", "--json"), env=MODEL_ENV)
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["proposals"][0]["id"])


def test_two_worktrees_accept_concurrently_without_cross_talk(
    repo: Path, server: ModelServer, tmp_path: Path
) -> None:
    init_repo(repo, {"a.py": "def a():\n    return 1\n", "b.py": "def b():\n    return 1\n"})
    git(repo, "branch", "feature")
    other = tmp_path / "wt1"
    git(repo, "worktree", "add", "-q", str(other), "feature")
    init = tm(other, "init")
    assert init.returncode == 0, init.stderr
    assert "started from main's" in init.stderr
    assert "already initialized on branch feature" in init.stdout
    mine = _propose(repo, server, "a.py", "def a():\n    return 2")
    theirs = _propose(other, server, "b.py", "def b():\n    return 3")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tinymem", "accept", pid],
            cwd=where,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for where, pid in ((repo, mine), (other, theirs))
    ]
    for proc in procs:
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
    assert (repo / "a.py").read_text() == "def a():\n    return 2\n"
    assert (repo / "b.py").read_text() == "def b():\n    return 1\n"
    assert (other / "b.py").read_text() == "def b():\n    return 3\n"
    assert (other / "a.py").read_text() == "def a():\n    return 1\n"
    for where, pid, gone in ((repo, mine, theirs), (other, theirs, mine)):
        status = tm(where, "status", "--check")
        assert status.returncode == 0, status.stdout + status.stderr
        log = tm(where, "log", "--json")
        kinds = [e["kind"] for e in json.loads(log.stdout)]
        assert kinds[:2] == ["accept", "ask"], kinds
        assert pid in log.stdout and gone not in log.stdout
        assert tm(where, "rebuild").returncode == 0
    # Each worktree's work is committed on its own branch; the hook passes both.
    git(repo, "commit", "-qam", "a 2")
    git(other, "commit", "-qam", "b 3")
    assert git(repo, "log", "-1", "--format=%s", "feature").strip() == "b 3"


def test_a_new_worktree_does_not_inherit_uncommitted_work_as_stale(
    repo: Path, server: ModelServer, tmp_path: Path
) -> None:
    # main has accepted work it has not committed; a worktree made from main's commit holds
    # the committed text, and must neither show it STALE nor have its commits refused.
    init_repo(
        repo, {"helpers.py": "def flag():\n    return False\n\n\ndef other():\n    return 1\n"}
    )
    assert tm(repo, "hook", "install").returncode == 0
    pid = _propose(repo, server, "helpers.py", "def flag():\n    return True")
    assert tm(repo, "accept", pid).returncode == 0
    other = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "new", str(other))
    status = tm(other, "status", "--check")
    assert status.returncode == 0, status.stdout + status.stderr
    write(other, "helpers.py", (other / "helpers.py").read_text().replace("1\n", "2\n"))
    git(other, "commit", "-qam", "other: 2")
    assert git(other, "log", "-1", "--format=%s").strip() == "other: 2"
    assert tm(repo, "status", "--check").returncode == 0  # main keeps its accepted text
