"""After `git merge`, `git pull` or `git rebase`, the files git wrote are recorded with the
commit as the evidence by the next tm command (#25), not left as hand edits until the user
remembers `tm adopt --merged`, which stays as an explicit form."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, init_repo, tm, write


def _two_branches(repo: Path) -> None:
    init_repo(
        repo,
        {
            "a.py": "def a():\n    return 1\n",
            "b.py": "def b():\n    return 1\n",
            "c.py": "def c():\n    return 1\n",
        },
    )
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


def test_a_merge_is_recorded_with_its_commit_as_evidence(repo: Path) -> None:
    # Before #25 every file the merge wrote was STALE until `tm adopt --merged`.
    _two_branches(repo)
    git(repo, "merge", "-q", "--no-edit", "topic")
    write(repo, "c.py", "def c():\n    return 9\n")  # a hand edit after the merge
    status = tm(repo, "status")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert f"recorded 2 files git committed ({head[:7]} merge)" in status.stderr
    left = json.loads(tm(repo, "status", "--json").stdout)
    assert [f["path"] for f in left["files"]] == ["c.py"]  # the hand edit is still the user's
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    show = json.loads(tm(repo, "show", tip, "--json").stdout)
    assert show["kind"] == "git" and show["details"]["commit"] == head
    assert show["details"]["operation"] == "merge"
    assert sorted(f["path"] for f in show["files"]) == ["b.py", "d.py"]
    assert tm(repo, "adopt", "--merged").stdout.startswith("Changes from")  # nothing left
    assert tm(repo, "rebuild").returncode == 0


def test_a_file_edited_after_the_merge_stays_stale(repo: Path) -> None:
    _two_branches(repo)
    git(repo, "merge", "-q", "--no-edit", "topic")
    write(repo, "b.py", "def b():\n    return 5\n")
    status = tm(repo, "status", "--json")
    assert "recorded 1 file git committed" in status.stderr
    assert "1 differ from it on disk (STALE)" in status.stderr
    assert [f["path"] for f in json.loads(status.stdout)["files"]] == ["b.py"]
    doc = json.loads(tm(repo, "adopt", "--merged", "--json").stdout)
    assert doc["adopted"] == [] and doc["left_stale"] == ["b.py"]


def test_a_rebase_is_recorded_against_the_commit_the_ledger_saw(repo: Path) -> None:
    _two_branches(repo)
    git(repo, "switch", "-q", "topic")
    assert tm(repo, "status", "--check").returncode == 0
    git(repo, "rebase", "-q", "main")
    status = tm(repo, "status", "--check")  # a.py came with the rebase: recorded
    assert status.returncode == 0, status.stdout
    assert "recorded 1 file git committed" in status.stderr and "rebase" in status.stderr
    doc = json.loads(tm(repo, "adopt", "--merged", "--json").stdout)
    assert doc["evidence"] == "ORIG_HEAD" and doc["adopted"] == []


def test_no_merge_and_no_since_is_a_usage_error(repo: Path) -> None:
    init_repo(repo, {"a.py": "x = 1\n"})
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
