"""After `git merge`, `git pull` or `git rebase`, the files git wrote are recorded with the
commit as the evidence (`tm adopt --merged`), not left as hand edits forever."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, tm, write


def _two_branches(repo: Path) -> None:
    write(repo, "a.py", "def a():\n    return 1\n")
    write(repo, "b.py", "def b():\n    return 1\n")
    write(repo, "c.py", "def c():\n    return 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    git(repo, "switch", "-q", "-c", "topic")
    write(repo, "b.py", "def b():\n    return 2\n")
    write(repo, "d.py", "def d():\n    return 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "topic")
    assert tm(repo, "adopt", "b.py", "d.py").returncode == 0
    git(repo, "switch", "-q", "main")
    write(repo, "a.py", "def a():\n    return 2\n")
    git(repo, "commit", "-qam", "main")
    assert tm(repo, "adopt", "a.py").returncode == 0


def test_a_merge_is_adopted_with_its_commit_as_evidence(repo: Path) -> None:
    _two_branches(repo)
    git(repo, "merge", "-q", "--no-edit", "topic")
    write(repo, "c.py", "def c():\n    return 9\n")  # a hand edit after the merge
    status = tm(repo, "status")
    assert "STALE" in status.stdout
    assert "1 of these file(s) are as the merge (" in status.stdout  # d.py is new to tm
    assert "tm adopt --merged" in status.stdout
    proc = tm(repo, "adopt", "--merged", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert doc["merged"] == head and doc["evidence"] == "merge commit"
    assert doc["adopted"] == ["b.py", "d.py"] and doc["left_stale"] == []
    left = json.loads(tm(repo, "status", "--json").stdout)
    assert [f["path"] for f in left["files"]] == ["c.py"]  # the hand edit is still the user's
    show = json.loads(tm(repo, "show", doc["episode"], "--json").stdout)
    assert show["details"]["merged"] == head
    assert tm(repo, "adopt", "--merged").stdout.startswith("Changes from")  # idempotent
    assert tm(repo, "rebuild").returncode == 0


def test_a_file_edited_after_the_merge_stays_stale(repo: Path) -> None:
    _two_branches(repo)
    git(repo, "merge", "-q", "--no-edit", "topic")
    write(repo, "b.py", "def b():\n    return 5\n")
    doc = json.loads(tm(repo, "adopt", "--merged", "--json").stdout)
    assert doc["adopted"] == ["d.py"] and doc["left_stale"] == ["b.py"]
    stale = json.loads(tm(repo, "status", "--json").stdout)
    assert [f["path"] for f in stale["files"]] == ["b.py"]


def test_a_rebase_is_adopted_against_orig_head(repo: Path) -> None:
    _two_branches(repo)
    git(repo, "switch", "-q", "topic")
    assert tm(repo, "status", "--check").returncode == 0
    git(repo, "rebase", "-q", "main")
    assert tm(repo, "status", "--check").returncode == 1  # a.py came with the rebase
    doc = json.loads(tm(repo, "adopt", "--merged", "--json").stdout)
    assert doc["evidence"] == "ORIG_HEAD" and doc["adopted"] == ["a.py"]
    assert tm(repo, "status", "--check").returncode == 0


def test_no_merge_and_no_since_is_a_usage_error(repo: Path) -> None:
    write(repo, "a.py", "x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    proc = tm(repo, "adopt", "--merged")
    assert proc.returncode == 2 and "--since REV" in proc.stderr
    bad = tm(repo, "adopt", "--merged", "--since", "nope")
    assert bad.returncode == 2 and "no such commit" in bad.stderr
    mixed = tm(repo, "adopt", "--merged", "a.py")
    assert mixed.returncode == 2


def test_another_branch_s_rebase_is_not_evidence_here(repo: Path) -> None:
    _two_branches(repo)
    git(repo, "switch", "-q", "topic")
    git(repo, "rebase", "-q", "main")  # ORIG_HEAD: topic before the rebase
    git(repo, "switch", "-q", "main")
    write(repo, "b.py", "def b():\n    return 2\n")
    git(repo, "commit", "-qam", "by hand", "--no-verify")
    status = tm(repo, "status")
    assert "adopt --merged" not in status.stdout
    assert tm(repo, "adopt", "--merged").returncode == 2
