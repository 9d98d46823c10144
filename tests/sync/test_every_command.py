"""Every command that reads or writes state brings the branch's State Map up to HEAD first
(#25): a command that opened the repository without the step would judge a committed edit
as a hand edit (or miss an interrupted accept), and its decisions with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Initialise, git, tm, write

APP = "def run():\n    return 0\n\n\ndef stop():\n    return 1\n"

COMMANDS = [
    ("status",),
    ("state",),
    ("log",),
    ("diff",),
    ("blame", "app.py"),
    ("note", "list"),
    ("undo", "--dry-run"),
    ("ask", "--dry-run", "change run"),
]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_a_command_records_what_git_committed_before_it_runs(
    repo: Path, initialised: Initialise, argv: tuple[str, ...]
) -> None:
    initialised({"app.py": APP})
    write(repo, "app.py", APP.replace("return 0", "return 2"))
    git(repo, "commit", "-qam", "run returns 2")

    proc = tm(repo, *argv)

    assert "git committed" in proc.stderr, (argv, proc.returncode, proc.stderr)
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    record = json.loads(git(repo, "show", f"{tip}:episode/episode.json"))
    assert record["kind"] == "git"
