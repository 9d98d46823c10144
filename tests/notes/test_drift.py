"""Drift: a note anchored to an entity or file says when what it is about changed or went."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import PY_APP, git, tm, tm_ask
from tests.modelserver import ModelServer

NEW_FETCH = 'def fetch_user(uid, retries=3):\n    return {"id": uid, "retries": retries}'
REPLY = f"Sure:\n\n```python path=app.py\n{NEW_FETCH}\n```\n"


def _add(repo: Path, *args: str) -> str:
    proc = tm(repo, "note", "add", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["note"]["id"])


def _drift(repo: Path, note_id: str) -> dict[str, Any]:
    proc = tm(repo, "note", "show", note_id, "--json")
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def _status_drifted(repo: Path) -> dict[str, str]:
    doc = json.loads(tm(repo, "status", "--json").stdout)
    return {n["id"]: n["drift"] for n in doc["drifted_notes"]}


def test_a_fresh_note_is_current(inited: Path) -> None:
    nid = _add(inited, "gotcha", "ids are strings", "--on", "app.py::fetch_user")
    doc = _drift(inited, nid)
    assert doc["drift"] == "current"
    assert doc["anchors"][0]["now"] == doc["anchors"][0]["artifact"]
    assert _status_drifted(inited) == {}
    assert "Note " not in tm(inited, "status").stdout


def test_a_hand_edit_drifts_the_note_until_adopted_then_confirm(inited: Path) -> None:
    nid = _add(inited, "gotcha", "ids are strings", "--on", "app.py::fetch_user")
    other = _add(inited, "fact", "get is plain", "--on", "app.py::Client.get")
    app = inited / "app.py"
    app.write_text(PY_APP.replace('return {"id": uid}', 'return {"id": str(uid)}'))
    doc = _drift(inited, nid)
    assert doc["drift"] == "drifted"
    assert doc["anchors"][0]["why"] == "changed on disk (not adopted yet)"
    assert _drift(inited, other)["drift"] == "current"  # another entity of the same file
    assert _status_drifted(inited) == {nid: "drifted"}
    text = tm(inited, "status").stdout
    assert f"Note {nid} (gotcha) was written for an older version of app.py::fetch_user" in text
    listed = tm(inited, "note", "list").stdout
    assert "DRIFTED" in listed and "changed on disk" in listed
    # Committed with git: still the same hand edit to tm.
    git(inited, "commit", "-qam", "str ids")
    assert _status_drifted(inited) == {nid: "drifted"}
    # The State Map's version is not the one on disk: confirming it now would say nothing.
    before = git(inited, "rev-parse", "refs/tinymem/heads/main")
    refused = tm(inited, "note", "confirm", nid)
    assert refused.returncode == 2 and "`tm adopt app.py` first" in refused.stderr
    assert git(inited, "rev-parse", "refs/tinymem/heads/main") == before
    assert tm(inited, "adopt", "app.py").returncode == 0
    doc = _drift(inited, nid)
    assert doc["drift"] == "drifted"
    assert doc["anchors"][0]["why"] == "changed since the note was written"
    confirmed = json.loads(tm(inited, "note", "confirm", nid, "--json").stdout)
    assert confirmed["changed"] is True and confirmed["note"]["drift"] == "current"
    assert _status_drifted(inited) == {}
    assert tm(inited, "rebuild").returncode == 0


def test_an_accepted_proposal_drifts_the_note(inited: Path, server: ModelServer) -> None:
    nid = _add(inited, "decision", "fetch_user never retries", "--on", "app.py::fetch_user")
    server.add(REPLY)
    proc = tm_ask(inited, server, "change fetch_user", "--json")
    assert proc.returncode == 0, proc.stderr
    assert _drift(inited, nid)["drift"] == "current"  # a proposal is not the truth yet
    pid = json.loads(proc.stdout)["proposals"][0]["id"]
    assert tm(inited, "accept", pid).returncode == 0
    doc = _drift(inited, nid)
    assert doc["drift"] == "drifted"
    assert doc["anchors"][0]["why"] == "changed since the note was written"


def test_a_deleted_entity_or_file_says_so(inited: Path) -> None:
    on_entity = _add(inited, "gotcha", "post swaps", "--on", "app.py::Client.post")
    on_file = _add(inited, "fact", "readme is short", "--on", "README.md")
    app = inited / "app.py"
    app.write_text(
        PY_APP.replace("\n    def post(self, path, body):\n        return (path, body)\n", "")
    )
    (inited / "README.md").unlink()
    doc = _drift(inited, on_entity)
    assert doc["drift"] == "anchor deleted" and doc["anchors"][0]["why"] == "deleted on disk"
    assert _drift(inited, on_file)["drift"] == "anchor deleted"
    assert tm(inited, "adopt", "--all").returncode == 0
    doc = _drift(inited, on_entity)
    assert doc["drift"] == "anchor deleted"
    assert doc["anchors"][0]["why"] == "deleted from the State Map"
    assert doc["anchors"][0]["now"] is None
    assert _status_drifted(inited) == {on_entity: "anchor deleted", on_file: "anchor deleted"}
    assert "was deleted" in tm(inited, "status").stdout
    proc = tm(inited, "note", "confirm", on_entity)
    assert proc.returncode == 2 and "no longer exists" in proc.stderr


def test_an_unanchored_note_never_drifts(inited: Path) -> None:
    nid = _add(inited, "constraint", "python 3.11")
    (inited / "app.py").write_text("x = 1\n")
    assert _drift(inited, nid)["drift"] == "current"
