"""A path the user committed deeper than tm writes (`paths.MAX_COMPONENTS`): tm refuses to
write one, but git's must not stop any command. The trees of the State Map were built by a
recursion per directory level, which ended near 1,000 levels in a RecursionError (exit 10)
for init, status, the hook, the step up to HEAD, rebuild and doctor (#29)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import git, tm, write

DEEP = "/".join(["d"] * 1000)


def _commit_deep(repo: Path, text: str, message: str) -> None:
    # The index first: git checks the file out into directories as deep as it needs.
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=repo,
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{DEEP}/x.py")
    git(repo, "commit", "-qm", message)
    git(repo, "checkout", "--", f"{DEEP}/x.py")


def test_a_file_committed_a_thousand_directories_deep_stops_no_command(repo: Path) -> None:
    write(repo, "app.py", "def run():\n    return 0\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "app")
    try:
        _commit_deep(repo, "x = 1\n", "deep")
        done = tm(repo, "init")
        assert done.returncode == 0, done.stderr
        assert tm(repo, "hook", "install").returncode == 0
        _commit_deep(repo, "x = 2\n", "deep again")  # through the hook
        status = tm(repo, "status", "--json")
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["clean"] is True
        for argv in (("rebuild",), ("doctor",), ("log",)):
            done = tm(repo, *argv)
            assert done.returncode == 0, (argv, done.stderr)
        shown = tm(repo, "show", "--json")
        assert shown.returncode == 0, shown.stderr
        assert f"{DEEP}/x.py" in shown.stdout
        git(repo, "rm", "-rq", "d")
        git(repo, "commit", "-qm", "not so deep")
        for argv in (("status",), ("rebuild",), ("doctor",)):
            done = tm(repo, *argv)
            assert done.returncode == 0, (argv, done.stderr)
    finally:
        # shutil.rmtree (pytest's clean-up) recurses per level too.
        subprocess.run(["rm", "-rf", str(repo / "d")], check=False)
