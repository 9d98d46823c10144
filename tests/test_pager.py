"""On a terminal, long read commands page like git (GIT_PAGER, core.pager, PAGER, --no-pager);
piped, they never do."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PY_APP, Initialise, git, tm

APP = {"app.py": PY_APP}


def _on_a_terminal(repo: Path, *argv: str, env: dict[str, str]) -> str:
    """Run tm with stdout on a pseudo-terminal; what reached the terminal."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tinymem", *argv],
        cwd=repo,
        stdout=follower,
        stderr=subprocess.PIPE,
        env={**{k: v for k, v in os.environ.items() if k not in ("GIT_PAGER", "PAGER")}, **env},
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=60)
    os.close(leader)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    return seen.decode("utf-8", "replace")


@pytest.mark.parametrize(
    "command", [("log",), ("state",), ("show", "HEAD"), ("diff",), ("blame", "app.py")]
)
def test_read_commands_page_on_a_terminal(
    repo: Path, initialised: Initialise, tmp_path: Path, command: tuple[str, ...]
) -> None:
    initialised(APP)
    if command[0] == "show":
        command = ("show", git(repo, "rev-parse", "refs/tinymem/heads/main").strip())
    paged = tmp_path / "paged.txt"
    pager = f"cat > {paged}"
    _on_a_terminal(repo, *command, env={"GIT_PAGER": pager})
    assert paged.exists()
    git(repo, "config", "core.pager", pager)
    paged.unlink()
    _on_a_terminal(repo, "--no-pager", *command, env={})
    assert not paged.exists()


def test_dash_p_is_no_pager(repo: Path, initialised: Initialise, tmp_path: Path) -> None:
    initialised(APP)
    paged = tmp_path / "paged.txt"
    shown = _on_a_terminal(repo, "-P", "log", env={"GIT_PAGER": f"cat > {paged}"})
    assert not paged.exists() and "init" in shown


def test_core_pager_and_pipes(repo: Path, initialised: Initialise, tmp_path: Path) -> None:
    initialised(APP)
    paged = tmp_path / "paged.txt"
    git(repo, "config", "core.pager", f"cat > {paged}")
    _on_a_terminal(repo, "log", env={})
    assert "tm init" in paged.read_text() or "init" in paged.read_text()
    paged.unlink()
    proc = tm(repo, "log")  # piped: never paged
    assert proc.returncode == 0 and "init" in proc.stdout
    assert not paged.exists()


def test_a_narrow_terminal_never_cuts_the_end_of_an_entity_key(
    repo: Path, initialised: Initialise
) -> None:
    path = "src/a_rather_long_package_name/with_a_long_module_name.py"
    initialised({path: "def the_function_whose_name_ends_here():\n    return 1\n", **APP})
    shown = _on_a_terminal(repo, "--no-pager", "state", env={"COLUMNS": "60"})
    lines = re.sub(r"\x1b\[[0-9;]*m", "", shown).splitlines()
    assert "\u2026" not in shown
    # Too wide for one row: the key on a line of its own, whole, its other cells below it.
    key = f"{path}::the_function_whose_name_ends_here"
    at = [line.strip() for line in lines].index(key)
    assert lines[at + 1].split()[:2] == ["function", "AUTHORITATIVE"], shown
