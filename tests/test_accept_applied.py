"""A proposal whose text is already on disk (the user applied it by hand, or another tool
did): accepting it records that text as promoted, exactly as an accept that wrote it would,
so the State Map holds it and `tm status` is clean; it never just leaves the pending set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import PY_APP, Initialise, git, tm, tm_ask, write
from tests.modelserver import ModelServer

NEW_FETCH = """def fetch_user(uid, retries=3):
    for _ in range(retries):
        return {"id": uid}"""
APPLIED = PY_APP.replace('def fetch_user(uid):\n    return {"id": uid}', NEW_FETCH)


@pytest.mark.parametrize("how", ["--overwrite-stale", "plain"])
def test_accepting_a_proposal_already_on_disk_records_it(
    repo: Path, initialised: Initialise, server: ModelServer, how: str
) -> None:
    initialised({"app.py": PY_APP})
    server.add(f"Sure:\n\n```python path=app.py\n{NEW_FETCH}\n```\n")
    proc = tm_ask(repo, server, "change fetch_user", "--json")
    assert proc.returncode == 0, proc.stderr
    (pid,) = [p["id"] for p in json.loads(proc.stdout)["proposals"]]
    assert APPLIED != PY_APP
    write(repo, "app.py", APPLIED)  # the user pasted the model's text in by hand
    extra = ["--overwrite-stale", "app.py::fetch_user"] if how != "plain" else []
    proc = tm(repo, "accept", pid, *extra)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "app.py").read_text() == APPLIED
    assert tm(repo, "status", "--check").returncode == 0, tm(repo, "status").stdout
    assert "already applied" in proc.stdout, proc.stdout
    stored = git(repo, "show", "refs/tinymem/heads/main:files/app.py")
    assert stored == APPLIED
    state = json.loads(tm(repo, "state", "--json").stdout)
    rec = {e["entity"]: e for e in state["entities"]}["app.py::fetch_user"]
    assert rec["source"] == "model" and rec["state"] == "AUTHORITATIVE"
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert episode["kind"] == "accept"
    assert any(t["entity"] == "app.py::fetch_user" for t in episode["transitions"]), episode
    assert not episode["details"]["overwritten"]  # nothing of the user's was replaced
    assert json.loads(tm(repo, "diff", "--json").stdout) == {"proposals": []}
    assert pid in tm(repo, "log").stdout
    blame = tm(repo, "blame", "app.py")
    line = next(x for x in blame.stdout.splitlines() if "def fetch_user" in x)
    assert blame.returncode == 0 and "openai/test" in line, blame.stdout  # the model's text
    assert tm(repo, "rebuild").returncode == 0


def test_a_hand_edit_that_differs_from_the_proposal_still_blocks(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"app.py": PY_APP})
    server.add(f"Sure:\n\n```python path=app.py\n{NEW_FETCH}\n```\n")
    proc = tm_ask(repo, server, "change fetch_user", "--json")
    (pid,) = [p["id"] for p in json.loads(proc.stdout)["proposals"]]
    almost = APPLIED.replace("retries=3", "retries=4")
    write(repo, "app.py", almost)
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 5 and "STALE" in proc.stderr, proc.stderr
    assert (repo / "app.py").read_text() == almost


def test_other_hand_edits_in_the_file_are_never_recorded_as_the_models(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """The proposal's text is on disk, and so is an edit of the user's elsewhere in the file:
    recording the file as the accept's would credit that edit to the model (blame), and `tm
    undo` of the accept would then take it back without a word. It blocks instead, naming
    `tm adopt`; once adopted, nothing is left to write."""
    initialised({"app.py": PY_APP})
    server.add(f"Sure:\n\n```python path=app.py\n{NEW_FETCH}\n```\n")
    proc = tm_ask(repo, server, "change fetch_user", "--json")
    (pid,) = [p["id"] for p in json.loads(proc.stdout)["proposals"]]
    mine = APPLIED.replace("        return path\n", "        return path.strip()\n")
    write(repo, "app.py", mine)
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main")
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 5 and "STALE" in proc.stderr and "tm adopt" in proc.stderr
    assert git(repo, "rev-parse", "refs/tinymem/heads/main") == tip  # nothing recorded
    assert (repo / "app.py").read_text() == mine
    assert tm(repo, "adopt", "app.py").returncode == 0
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 0 and "already applied" in proc.stdout, proc.stdout + proc.stderr
    state = {e["entity"]: e for e in json.loads(tm(repo, "state", "--json").stdout)["entities"]}
    assert state["app.py::Client.get"]["source"] != "model"
    assert tm(repo, "status", "--check").returncode == 0
