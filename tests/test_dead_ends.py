"""Dead ends and false alarms a new user met in the first hour (issue 26): each is now either
success or one sentence with the right exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import PY_APP, git, tm, write
from tests.modelserver import ModelServer


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, "src/app.py", "def handler(x):\n    return x + 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    assert tm(repo, "init").returncode == 0
    return repo


def test_blame_of_a_directory_is_a_usage_error(project: Path) -> None:
    for name in ("src", "src/"):
        proc = tm(project, "blame", name)
        assert proc.returncode == 2, proc.stderr
        assert "is a directory" in proc.stderr and "missing" not in proc.stderr


def test_adopt_all_on_a_clean_tree_is_success(project: Path) -> None:
    proc = tm(project, "adopt", "--all")
    assert proc.returncode == 0, proc.stderr
    assert "Nothing to adopt" in proc.stdout
    assert proc.stderr == ""


def test_adopt_path_refuses_empty_stdin(project: Path) -> None:
    before = (project / "src/app.py").read_text()
    proc = tm(project, "adopt", "--path", "src/app.py", input="")
    assert proc.returncode == 2, proc.stderr
    assert "--allow-empty" in proc.stderr
    assert (project / "src/app.py").read_text() == before
    proc = tm(project, "adopt", "--path", "src/app.py", "--allow-empty", input="")
    assert proc.returncode == 0, proc.stderr
    assert (project / "src/app.py").read_text() == ""


def test_overwrite_stale_names_what_to_paste_and_refuses_unknown_names(
    repo: Path, server: ModelServer
) -> None:
    from tests.test_accept import REPLY, _ask, _init, _pid

    _init(repo)
    pid = _pid(_ask(repo, server, REPLY))
    hand = PY_APP.replace('{"id": uid}', '{"id": uid, "hand": True}')
    write(repo, "app.py", hand)
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 5
    flag = f"tm accept {pid} --overwrite-stale app.py::fetch_user"
    assert f"`{flag}`" in proc.stderr
    # A name no proposal touches is no longer ignored in silence.
    proc = tm(repo, "accept", pid, "--overwrite-stale", "app.py::fetch_usr")
    assert proc.returncode == 2, proc.stderr
    assert "app.py::fetch_usr" in proc.stderr and "app.py::fetch_user" in proc.stderr
    assert (repo / "app.py").read_text() == hand
    # What the STALE message said, pasted, works.
    proc = tm(repo, *flag.split()[1:])
    assert proc.returncode == 0, proc.stderr
