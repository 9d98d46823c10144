"""The same thing asked twice (#24): identical pending proposals are one change; a proposal
whose change is already in the file says so and is no error; a block that changes nothing is
not proposed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import PY_APP, Initialise, tm, tm_ask
from tests.modelserver import ModelServer

REPLY = "```python path=app.py\ndef fetch_user(uid):\n    return {'id': uid, 'v': 2}\n```\n"
NEW = PY_APP.replace('def fetch_user(uid):\n    return {"id": uid}', REPLY.split("\n", 1)[1][:-5])


APP = {"app.py": PY_APP}


def _ask(repo: Path, server: ModelServer, reply: str) -> dict[str, object]:
    server.add(reply)
    proc = tm_ask(repo, server, "fetch_user should say v2", "--json", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert isinstance(doc, dict)
    return doc


def _pending(repo: Path) -> list[str]:
    proc = tm(repo, "diff", "--json")
    assert proc.returncode in (0, 5), proc.stderr
    return [p["id"] for p in json.loads(proc.stdout)["proposals"]]


def test_identical_pending_proposals_are_accepted_as_one_change(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # Today: one was "accepted in this run", the other conflicted with it, and the file was
    # held back: nothing written.
    initialised(APP)
    first = _ask(repo, server, REPLY)["proposals"][0]["id"]  # type: ignore[index]
    second = _ask(repo, server, REPLY)["proposals"][0]["id"]  # type: ignore[index]
    proc = tm(repo, "accept", "--all")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / "app.py").read_text() == NEW
    assert f"the same change as {first}" in proc.stdout or f"the same change as {second}" in (
        proc.stdout
    )
    assert _pending(repo) == []


def test_a_proposal_already_applied_says_so_and_exits_0(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # Today: STALE, with advice to `tm adopt` (which has nothing to adopt), exit 5.
    initialised(APP)
    first = _ask(repo, server, REPLY)["proposals"][0]["id"]  # type: ignore[index]
    second = _ask(repo, server, REPLY)["proposals"][0]["id"]  # type: ignore[index]
    proc = tm(repo, "accept", str(first))
    assert proc.returncode == 0, proc.stderr
    proc = tm(repo, "accept", str(second))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "already applied by " in proc.stdout
    assert "STALE" not in proc.stdout + proc.stderr
    assert (repo / "app.py").read_text() == NEW
    assert _pending(repo) == []


def test_a_block_that_changes_nothing_is_not_proposed(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    unchanged = '```python path=app.py\ndef fetch_user(uid):\n    return {"id": uid}\n```\n'
    doc = _ask(repo, server, unchanged)
    assert doc["proposals"] == []
    (refused,) = doc["refused"]  # type: ignore[misc]
    assert "changes nothing" in refused["reason"]
    assert _pending(repo) == []
