"""`--json` on init, accept and reject, as on the other commands."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import PY_APP, git, tm, write
from tests.modelserver import ModelServer


def test_init_accept_reject_speak_json(repo: Path, server: ModelServer) -> None:
    from tests.test_accept import REPLY, _ask, _pid

    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    proc = tm(repo, "init", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["imported"] == ["app.py"] and doc["episode"] and doc["branch"] == "main"
    assert doc["skipped"] == []
    again = json.loads(tm(repo, "init", "--json").stdout)
    assert again["episode"] is None and again["imported"] == [] and again["already"] == 1

    first = _pid(_ask(repo, server, REPLY))
    proc = tm(repo, "reject", first, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["rejected"] == [first] and doc["episode"]

    pid = _pid(_ask(repo, server, REPLY))
    write(repo, "app.py", PY_APP.replace('{"id": uid}', '{"id": uid, "hand": 1}'))
    proc = tm(repo, "accept", pid, "--json")
    assert proc.returncode == 5
    doc = json.loads(proc.stdout)
    assert doc["promoted"] == [] and doc["blocked"][0]["id"] == pid
    assert doc["blocked"][0]["gate"] == "ETV" and doc["episode"] is None
    git(repo, "checkout", "app.py")
    proc = tm(repo, "accept", pid, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["promoted"] == [pid] and doc["files"] == ["app.py"] and doc["episode"]
