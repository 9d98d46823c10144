"""A `git switch` while `tm accept` writes: the accept belongs to the branch it started on.

The ledger ref it commits to is the one it read at its start, and a HEAD that names another
branch by the time it records is an accept rolled back (files restored from what is on
disk), never main's accept committed as the root of the other branch's ledger."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, tm
from tests.modelserver import ModelServer
from tests.writing.test_transaction import (
    FILES,
    _accept_dying,
    _after_second_call,
    _disk,
    _no_temp_files,
    _three_file_proposal,
)

# Between the second file's rename and the ledger commit, the user switches branches (the
# files tm wrote are the same on both branches, so git carries them over).
SWITCH_MIDWAY = _after_second_call(
    "tinymem.writing.transaction",
    "write_atomic",
    "import subprocess; subprocess.run(['git', 'switch', '-q', 'other'], check=True)",
)


def test_a_switch_during_accept_rolls_it_back_and_leaves_the_other_branch_alone(
    repo: Path, server: ModelServer
) -> None:
    _three_file_proposal(repo, server)
    git(repo, "branch", "other")
    main_tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    proc = _accept_dying(repo, SWITCH_MIDWAY)
    assert proc.returncode == 12, proc.stderr
    assert "rolled back" in proc.stderr and "main" in proc.stderr and "other" in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr  # one sentence
    assert git(repo, "branch", "--show-current").strip() == "other"
    assert _disk(repo) == FILES  # the files are as before
    _no_temp_files(repo)
    assert not (repo / ".git" / "tinymem" / "accept-intent.json").exists()
    # Neither ledger holds the accept: main's is where it was, other has none yet.
    assert git(repo, "rev-parse", "refs/tinymem/heads/main").strip() == main_tip
    assert git(repo, "rev-parse", "-q", "--verify", "refs/tinymem/heads/other", check=False) == ""
    # Its first use starts other's ledger from main's, as for any new branch.
    assert tm(repo, "status", "--check").returncode == 0
    log = git(repo, "log", "--format=%s", "refs/tinymem/heads/other")
    assert "tm accept" not in log, log
    assert git(repo, "rev-list", "--max-parents=0", "refs/tinymem/heads/other") == git(
        repo, "rev-list", "--max-parents=0", "refs/tinymem/heads/main"
    )
    # Back on main, the proposals are still pending and land.
    git(repo, "switch", "-q", "main")
    assert len(json.loads(tm(repo, "diff", "--json").stdout)["proposals"]) == 3
    done = tm(repo, "accept", "--all")
    assert done.returncode == 0, done.stderr
    assert tm(repo, "rebuild").returncode == 0
