"""A repository initialised when tm kept a single `refs/tinymem/state` keeps its history: the
ledger becomes the branch's, and other branches start from it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, init_repo, tm, write


def _single_ref(repo: Path) -> str:
    """The layout of an older tm: one ledger ref, nothing under refs/tinymem/heads/."""
    init_repo(repo, {"a.py": "def a():\n    return 1\n"})
    write(repo, "a.py", "def a():\n    return 2\n")
    assert tm(repo, "adopt", "a.py").returncode == 0
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    git(repo, "update-ref", "refs/tinymem/state", tip)
    git(repo, "update-ref", "-d", "refs/tinymem/heads/main")
    return tip


def test_the_single_ref_becomes_the_branch_state_map(repo: Path) -> None:
    tip = _single_ref(repo)
    doctor = json.loads(tm(repo, "doctor", "--json").stdout)
    assert doctor["ok"], doctor  # read-only: reports the single ref, moves nothing
    assert git(repo, "rev-parse", "refs/tinymem/state").strip() == tip
    log = tm(repo, "log", "--json")
    assert log.returncode == 0, log.stderr
    assert "refs/tinymem/state) is now branch main's" in log.stderr
    assert [e["kind"] for e in json.loads(log.stdout)] == ["adopt", "init"]  # history kept
    assert git(repo, "rev-parse", "refs/tinymem/heads/main").strip() == tip
    assert git(repo, "rev-parse", "-q", "--verify", "refs/tinymem/state", check=False) == ""
    again = tm(repo, "status", "--check")
    assert again.returncode == 0 and "is now" not in again.stderr  # said once
    assert tm(repo, "rebuild").returncode == 0
    git(repo, "switch", "-q", "-c", "next")
    started = tm(repo, "log", "--json")
    assert "started from main's" in started.stderr
    assert [e["kind"] for e in json.loads(started.stdout)] == ["adopt", "init"]


def test_the_single_ref_moves_to_the_branch_it_is_first_used_on(repo: Path) -> None:
    tip = _single_ref(repo)
    git(repo, "commit", "-qam", "a 2")
    git(repo, "switch", "-q", "-c", "work")
    proc = tm(repo, "status", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(repo, "rev-parse", "refs/tinymem/heads/work").strip() == tip
    git(repo, "switch", "-q", "main")
    back = tm(repo, "status", "--check")
    assert back.returncode == 0 and "started from work's" in back.stderr
