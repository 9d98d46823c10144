"""An accept interrupted anywhere — Ctrl-C, kill -9 between two renames or right before the
ledger commit — leaves every file entirely before or entirely after, no temporary file in
the work tree, and the next tm command says what it did about it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, git, init_repo, tm, tm_ask, tm_patched
from tests.modelserver import ModelServer

FILES = {
    "a.py": "def alpha():\n    return 1\n",
    "pkg/b.py": "def beta():\n    return 2\n",
    "pkg/c.py": "def gamma():\n    return 3\n",
}
AFTER = {path: text.replace("return", "return 10 *") for path, text in FILES.items()}


def _three_file_proposal(repo: Path, server: ModelServer) -> None:
    init_repo(repo, FILES)
    reply = "".join(f"```python path={p}\n{t}```\n" for p, t in AFTER.items())
    server.add(reply)
    proc = tm_ask(repo, server, "multiply", "--json")
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["proposals"]) == 3


def _accept_dying(repo: Path, patch: str) -> subprocess.CompletedProcess[str]:
    """`tm accept --all` in a process that `patch` (Python) makes die (os._exit) or stop."""
    return tm_patched(repo, patch, "accept", "--all")


def _disk(repo: Path) -> dict[str, str]:
    return {path: (repo / path).read_text() for path in FILES}


def _no_temp_files(repo: Path) -> None:
    listed = git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored")
    assert "tm-tmp" not in listed, listed
    leftovers = repo / ".git" / "tinymem" / "tmp"
    assert not leftovers.exists() or not list(leftovers.iterdir())


def _after_second_call(module: str, name: str, then: str) -> str:
    """A patch that runs `then` right after the second call of `module.name` returns."""
    return f"""
import {module} as m
real = m.{name}
calls = []
def patched(*a, **k):
    real(*a, **k)
    calls.append(1)
    if len(calls) == 2:
        {then}
m.{name} = patched
"""


# Die after the second file's rename, between a temporary file and its rename, or right
# before the ledger commit.
AFTER_SECOND_RENAME = _after_second_call(
    "tinymem.writing.transaction", "write_atomic", "os._exit(9)"
)
BETWEEN_TEMP_AND_RENAME = _after_second_call("tinymem.writing.atomic", "_write_temp", "os._exit(9)")
BEFORE_LEDGER_COMMIT = """
import tinymem.accept as acc
acc.commit_episode = lambda *a, **k: os._exit(9)
"""


@pytest.mark.parametrize(
    "patch", [AFTER_SECOND_RENAME, BEFORE_LEDGER_COMMIT, BETWEEN_TEMP_AND_RENAME]
)
def test_a_killed_accept_is_rolled_back_by_the_next_command(
    repo: Path, server: ModelServer, patch: str
) -> None:
    _three_file_proposal(repo, server)
    proc = _accept_dying(repo, patch)
    assert proc.returncode == 9, proc.stderr
    assert (repo / ".git" / "tinymem" / "accept-intent.json").exists()
    status = tm(repo, "status")
    assert "interrupted tm accept" in status.stderr and "rolled back" in status.stderr
    assert _disk(repo) == FILES  # every file entirely before
    _no_temp_files(repo)
    assert not (repo / ".git" / "tinymem" / "accept-intent.json").exists()
    assert tm(repo, "status", "--check").returncode == 0  # nothing blamed on the user
    proc = tm(repo, "accept", "--all")  # the proposals are still pending, and land
    assert proc.returncode == 0, proc.stderr
    assert _disk(repo) == AFTER
    assert tm(repo, "rebuild").returncode == 0
    git(repo, "fsck", "--strict", "--no-dangling")


def test_a_kill_after_the_ledger_commit_keeps_the_accept(repo: Path, server: ModelServer) -> None:
    _three_file_proposal(repo, server)
    proc = _accept_dying(
        repo,
        """
        import tinymem.writing.journal as j
        j.clear = lambda repo: os._exit(9)
        """,
    )
    assert proc.returncode == 9, proc.stderr
    status = tm(repo, "status")
    assert "had been recorded" in status.stderr
    assert _disk(repo) == AFTER
    assert tm(repo, "status", "--check").returncode == 0
    _no_temp_files(repo)
    assert json.loads(tm(repo, "diff", "--json").stdout) == {"proposals": []}


def test_a_record_of_an_older_tm_is_checked_against_the_single_ref(
    repo: Path, server: ModelServer
) -> None:
    # Killed after its ledger commit by a tm that kept one `refs/tinymem/state`, and found by
    # this one: recovery runs before that ref moves to the branch's, and must still see it.
    _three_file_proposal(repo, server)
    proc = _accept_dying(
        repo,
        """
        import tinymem.writing.journal as j
        j.clear = lambda repo: os._exit(9)
        """,
    )
    assert proc.returncode == 9, proc.stderr
    intent = repo / ".git" / "tinymem" / "accept-intent.json"
    record = json.loads(intent.read_text())
    del record["ref"]  # the older format
    intent.write_text(json.dumps(record))
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    git(repo, "update-ref", "refs/tinymem/state", tip)
    git(repo, "update-ref", "-d", "refs/tinymem/heads/main")
    status = tm(repo, "status", "--check")
    assert "had been recorded" in status.stderr, status.stderr
    assert _disk(repo) == AFTER
    assert status.returncode == 0, status.stdout


def test_ctrl_c_rolls_back_the_file_just_renamed(repo: Path, server: ModelServer) -> None:
    _three_file_proposal(repo, server)
    # Right after the rename, before tm notes it.
    interrupted = _after_second_call(
        "tinymem.writing.transaction", "write_atomic", "raise KeyboardInterrupt"
    )
    proc = _accept_dying(repo, interrupted)
    assert proc.returncode == 130, proc.stderr
    assert _disk(repo) == FILES
    assert not (repo / ".git" / "tinymem" / "accept-intent.json").exists()
    _no_temp_files(repo)
    assert "interrupted" not in tm(repo, "status").stderr  # nothing left to recover


def test_a_running_accept_is_not_rolled_back_by_another_command(
    repo: Path, server: ModelServer
) -> None:
    _three_file_proposal(repo, server)
    # The accept stops (as if suspended) right before its ledger commit, holding its lock.
    ready = repo / ".git" / "ready"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import os, sys, time
                sys.path.insert(0, {str(ROOT)!r})
                import tinymem.accept as acc
                def wait(*a, **k):
                    open({str(ready)!r}, "w").close()
                    time.sleep(60)
                acc.commit_episode = wait
                sys.argv = ["tm", "accept", "--all"]
                from tinymem.cli import main
                main()
                """
            ),
        ],
        cwd=repo,
    )
    try:
        for _ in range(600):
            if ready.exists():
                break
            proc.poll()
            assert proc.returncode is None
            import time

            time.sleep(0.05)
        assert ready.exists()
        status = tm(repo, "status")
        assert "interrupted" not in status.stderr
        assert _disk(repo) == AFTER  # its files stay as it wrote them
        doctor = json.loads(tm(repo, "doctor", "--json").stdout)
        found = [c["message"] for c in doctor["checks"] if c["check"] == "interrupted"]
        assert any("running" in m for m in found), found
    finally:
        proc.kill()
        proc.wait()
    status = tm(repo, "status")
    assert "rolled back" in status.stderr
    assert _disk(repo) == FILES


def test_recovery_leaves_a_file_changed_since_as_it_is(repo: Path, server: ModelServer) -> None:
    _three_file_proposal(repo, server)
    assert _accept_dying(repo, BEFORE_LEDGER_COMMIT).returncode == 9
    mine = "def alpha():\n    return 'mine'\n"
    (repo / "a.py").write_text(mine)
    status = tm(repo, "status")
    assert "a.py" in status.stderr and "left as they are" in status.stderr
    assert (repo / "a.py").read_text() == mine
    assert _disk(repo) == {**FILES, "a.py": mine}


def test_doctor_reports_the_recovery_it_made(repo: Path, server: ModelServer) -> None:
    _three_file_proposal(repo, server)
    assert _accept_dying(repo, BEFORE_LEDGER_COMMIT).returncode == 9
    doctor = json.loads(tm(repo, "doctor", "--json").stdout)
    found = [c for c in doctor["checks"] if c["check"] == "interrupted"]
    assert found and found[0]["status"] == "warn" and "rolled back" in found[0]["message"]


def test_temp_files_never_appear_in_the_work_tree(repo: Path, server: ModelServer) -> None:
    _three_file_proposal(repo, server)
    assert _accept_dying(repo, BETWEEN_TEMP_AND_RENAME).returncode == 9
    # Before any recovery: the crash copies are not among the user's files.
    listed = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert "tm-tmp" not in listed and listed.count("\n") <= 1, listed
    assert os.listdir(repo / ".git" / "tinymem" / "tmp")  # they are here instead
