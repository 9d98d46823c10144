"""Dead ends and false alarms a new user met in the first hour (issue 26): each is now either
success or one sentence with the right exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import PY_APP, Initialise, git, tm, write
from tests.modelserver import ModelServer


@pytest.fixture
def project(initialised: Initialise) -> Path:
    return initialised({"src/app.py": "def handler(x):\n    return x + 1\n"}, message="init")


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
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    from tests.test_accept import APP, REPLY, _ask, _pid

    initialised(APP)
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


def test_ask_file_that_is_missing_or_untracked_is_an_error(project: Path) -> None:
    proc = tm(project, "ask", "fix it", "-f", "missing.py", "--dry-run")
    assert proc.returncode == 2 and "-f missing.py: no such file" in proc.stderr
    write(project, "new.py", "def n():\n    return 0\n")
    proc = tm(project, "ask", "fix it", "-f", "new.py", "--dry-run")
    assert proc.returncode == 2 and "tm adopt new.py" in proc.stderr


def test_ask_file_cut_by_the_budget_says_what_was_left_out(project: Path) -> None:
    body = "".join(
        f"def handler_{i}(x):\n    '''Handle case {i} of the many cases.'''\n"
        f"    return x * {i} + {i} - len(str(x)) // 3\n\n\n"
        for i in range(60)
    )
    write(project, "src/many.py", body)
    assert tm(project, "adopt", "src/many.py").returncode == 0
    proc = tm(project, "ask", "fix it", "-f", "src/many.py", "--budget", "900", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if "did not fit the budget" in ln]
    assert "-f src/many.py:" in line and "of its 60 entities" in line
    # A file that fits says nothing.
    proc = tm(project, "ask", "fix it", "-f", "src/app.py", "--dry-run")
    assert "did not fit" not in proc.stderr


def test_ask_about_a_stale_entity_warns_before_the_call(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    write(project, "src/app.py", "def handler(x):\n    return x + 2  # mine\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    proc = tm(project, "ask", "make handler faster", "-m", "openai/test", "--api-base", base)
    # The warning came before the call (which then failed: nothing listens).
    assert proc.returncode == 6
    lines = proc.stderr.splitlines()
    assert "src/app.py::handler" in lines[0] and "STALE" in lines[0]
    assert "tm adopt src/app.py" in lines[0]
    assert "nothing listens" in lines[1]
    # A request about something else says nothing of it.
    proc = tm(project, "ask", "add a logger", "-m", "openai/test", "--api-base", base)
    assert "STALE" not in proc.stderr


def test_next_steps_are_true_for_the_state(repo: Path, server: ModelServer) -> None:
    from tests.conftest import tm_ask
    from tests.test_accept import REPLY

    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    init = tm(repo, "init")
    assert "tm hook install" in init.stdout and "tm config model" in init.stdout
    assert tm(repo, "hook", "install").returncode == 0
    git(repo, "config", "tinymem.model", "openai/test")
    # Run again, nothing left to set up but asking.
    assert "tm hook install" not in tm(repo, "init").stdout
    # Every proposal blocked: no `tm accept` is suggested.
    write(repo, "app.py", PY_APP.replace('{"id": uid}', '{"id": uid, "hand": 1}'))
    server.add(REPLY)
    proc = tm_ask(repo, server, "change fetch_user")
    assert proc.returncode == 0, proc.stderr
    next_line = [ln for ln in proc.stdout.splitlines() if ln.startswith("Next:")][-1]
    assert "tm accept" not in next_line and "blocked" in next_line
    # A passing one names its id; after accept, committing is suggested.
    git(repo, "checkout", "app.py")
    server.add(REPLY)
    proc = tm_ask(repo, server, "change fetch_user", "--json")
    pid = json.loads(proc.stdout)["proposals"][0]["id"]
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 0, proc.stderr
    assert "Next: git diff" in proc.stdout and "git commit app.py" in proc.stdout


def test_a_hand_edit_kept_by_accept_is_the_users_in_blame_and_state(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    from tests.test_accept import APP, REPLY, _ask, _pid

    initialised(APP)
    pid = _pid(_ask(repo, server, REPLY))
    hand = PY_APP.replace("        return path\n", "        return path + '/by-hand'\n")
    assert hand != PY_APP
    write(repo, "app.py", hand)
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 0, proc.stderr
    text = (repo / "app.py").read_text()
    assert "/by-hand" in text and "retries=3" in text
    doc = json.loads(tm(repo, "blame", "app.py", "--json").stdout)
    by_text = {ln["text"].strip(): ln for ln in doc["lines"]}
    mine = by_text["return path + '/by-hand'"]
    assert (mine["kind"], mine["author"]) == ("adopt", "user"), mine
    model = by_text["for _ in range(retries):"]
    assert model["kind"] == "accept", model
    state = json.loads(tm(repo, "state", "--json").stdout)
    sources = {e["entity"]: e["source"] for e in state["entities"]}
    assert sources["app.py::Client.get"] == "user"
    assert sources["app.py::fetch_user"] == "model"
