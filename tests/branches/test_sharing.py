"""Two people, one branch, two ledgers: shared with plain git push/fetch, merged by a ledger
commit with both parents whose State Map is re-derived and proved by `tm rebuild`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git, init_repo, tm, write

SHARE = "refs/tinymem/*:refs/tinymem/*"


def _clone(origin: Path, where: Path) -> Path:
    git(origin.parent, "clone", "-q", str(origin), str(where))
    git(where, "config", "user.email", f"{where.name}@example.com")
    git(where, "config", "user.name", where.name)
    git(where, "fetch", "-q", "origin", SHARE)
    return where


def _edit(where: Path, rel: str, text: str) -> None:
    write(where, rel, text)
    proc = tm(where, "adopt", rel)
    assert proc.returncode == 0, proc.stderr
    git(where, "commit", "-qam", f"{where.name}: {rel}")


def _fetch_and_merge(where: Path) -> subprocess.CompletedProcess[str]:
    git(where, "fetch", "-q", "origin", "refs/tinymem/heads/main")
    return tm(where, "merge-ledger", "FETCH_HEAD", "--json")


@pytest.fixture
def people(tmp_path: Path) -> tuple[Path, Path]:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    init_repo(
        seed,
        {
            "a.py": "def a():\n    return 1\n",
            "b.py": "def b():\n    return 1\n\n\ndef b2():\n    return 1\n",
        },
    )
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(origin))
    git(seed, "push", "-q", str(origin), SHARE)
    return _clone(origin, tmp_path / "alice"), _clone(origin, tmp_path / "bob")


def test_divergent_ledgers_are_merged_and_proved(people: tuple[Path, Path]) -> None:
    alice, bob = people
    _edit(alice, "a.py", "def a():\n    return 2\n")
    git(alice, "push", "-q", "origin", "main", SHARE)
    _edit(bob, "b.py", "def b():\n    return 3\n\n\ndef b2():\n    return 1\n")
    refused = git(bob, "push", "origin", SHARE, check=False)
    assert (
        git(bob, "ls-remote", "origin", "refs/tinymem/heads/main").split()[0]
        != git(bob, "rev-parse", "refs/tinymem/heads/main").strip()
    ), refused  # git refuses the non-fast-forward: nothing is overwritten
    git(bob, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    proc = _fetch_and_merge(bob)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    # The pulled a.py was recorded from the pull's commit before the ledgers merged (#25).
    assert doc["outcome"] == "merged" and doc["taken"] == [] and doc["resolved"] == []
    assert doc["episodes"] == 1 and doc["proved_episodes"] >= 3
    parents = git(bob, "log", "-1", "--format=%P", "refs/tinymem/heads/main").split()
    assert parents == [doc["ours"], doc["theirs"]]
    assert tm(bob, "rebuild").returncode == 0
    assert tm(bob, "status", "--check").returncode == 0  # the pulled a.py is the truth
    log = json.loads(tm(bob, "log", "--json").stdout)
    summaries = " ".join(e["summary"] for e in log)
    assert "adopted a.py" in summaries and "adopted b.py" in summaries  # both people's
    git(bob, "push", "-q", "origin", "main", "refs/tinymem/heads/main")
    # Alice catches up: a fast-forward of her ledger, proved too.
    proc = _fetch_and_merge(alice)
    assert json.loads(proc.stdout)["outcome"] == "fast-forward", proc.stderr
    git(alice, "pull", "-q", "--no-rebase", "origin", "main")
    assert tm(alice, "status", "--check").returncode == 0
    assert tm(alice, "rebuild").returncode == 0
    again = _fetch_and_merge(alice)
    assert json.loads(again.stdout)["outcome"] == "up to date"


def test_a_file_both_changed_needs_the_code_merged_first(
    people: tuple[Path, Path],
) -> None:
    alice, bob = people
    _edit(alice, "b.py", "def b():\n    return 2\n\n\ndef b2():\n    return 1\n")
    git(alice, "push", "-q", "origin", "main", SHARE)
    _edit(bob, "b.py", "def b():\n    return 1\n\n\ndef b2():\n    return 7\n")
    before = git(bob, "rev-parse", "refs/tinymem/heads/main").strip()
    git(bob, "fetch", "-q", "origin", "main")
    git(bob, "merge", "-q", "--no-commit", "--no-ff", "origin/main")  # merged, not committed
    write(bob, "b.py", (bob / "b.py").read_text() + "# still resolving\n")
    refused = _fetch_and_merge(bob)
    assert refused.returncode == 2 and "both ledgers changed b.py" in refused.stderr
    assert git(bob, "rev-parse", "refs/tinymem/heads/main").strip() == before  # nothing written
    git(bob, "checkout", "-q", "--", "b.py")
    git(bob, "commit", "-qm", "merge")
    proc = _fetch_and_merge(bob)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    # The merge commit's b.py was recorded before the ledgers merged (#25): ours holds it.
    assert doc["resolved"] == [] and doc["taken"] == []
    assert (bob / "b.py").read_text() == "def b():\n    return 2\n\n\ndef b2():\n    return 7\n"
    assert tm(bob, "status", "--check").returncode == 0
    assert tm(bob, "rebuild").returncode == 0
    state = json.loads(tm(bob, "state", "--json", "b.py").stdout)
    assert {e["symbol"] for e in state["entities"] if e["state"] == "AUTHORITATIVE"} == {
        "b",
        "b2",
    }


def test_another_repository_s_ledger_is_refused(people: tuple[Path, Path], repo: Path) -> None:
    alice, _ = people
    init_repo(repo, {"x.py": "x = 1\n"}, message="x")
    git(alice, "fetch", "-q", str(repo), "refs/tinymem/heads/main")
    proc = tm(alice, "merge-ledger", "FETCH_HEAD")
    assert proc.returncode == 2 and "shares no episode" in proc.stderr
    code = tm(alice, "merge-ledger", "HEAD")
    assert code.returncode == 2 and "not a tm ledger commit" in code.stderr


def test_another_branch_s_ledger_is_not_merged(people: tuple[Path, Path]) -> None:
    alice, _ = people
    git(alice, "switch", "-q", "-c", "feature")
    _edit(alice, "a.py", "def a():\n    return 5\n")
    git(alice, "switch", "-q", "main")
    proc = tm(alice, "merge-ledger", "refs/tinymem/heads/feature")
    assert proc.returncode == 2 and "is branch feature's ledger, not main's" in proc.stderr
