"""A method given alone without a path (the commonest reply of a small model), on requests'
real `sessions.py`, through `tm ask` → `tm diff` → `tm accept` and the loopback server.

The request named it and the prompt showed it: CONFIRMED, it lands. Not named: INFERRED, and
`tm diff` shows what it would write, and `tm accept ID --path FILE` (the user's decision,
recorded in the accept episode) writes it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Initialise, tm, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer

SESSIONS = (CODE / "requests/src/requests/sessions.py").read_text()
STRUCTURES = (CODE / "requests/src/requests/structures.py").read_text()
PATH = "src/requests/sessions.py"
OLD = '        kwargs.setdefault("allow_redirects", True)\n        return self.request("GET",'
NEW = (
    '        kwargs.setdefault("allow_redirects", True)\n'
    '        kwargs.setdefault("timeout", 10)\n'
    '        return self.request("GET",'
)
EXPECTED = SESSIONS.replace(OLD, NEW)
START = SESSIONS.index("    def get(\n")
END = SESSIONS.index("    def options(")
GET = SESSIONS[START:END].rstrip("\n") + "\n"
REPLY = (
    "Here is the updated method:\n\n```python\n"
    + "\n".join(line[4:] for line in GET.replace(OLD, NEW).split("\n"))
    + "```\n"
)


def _init(initialised: Initialise) -> None:
    assert SESSIONS.count(OLD) == 1
    # structures.py has a `get` of its own.
    initialised({PATH: SESSIONS, "src/requests/structures.py": STRUCTURES})


def test_named_in_the_request_it_lands(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    _init(initialised)
    server.add(REPLY)
    proc = tm_ask(repo, server, "Session.get should set a default timeout of 10s", "--json")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert prop["confidence"] == "CONFIRMED", prop
    assert prop["path"] == PATH
    assert prop["gates"]["A"] == "pass"
    accepted = tm(repo, "accept", prop["id"])
    assert accepted.returncode == 0, accepted.stderr
    assert (repo / PATH).read_text() == EXPECTED


def test_not_named_the_user_confirms_the_place(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    _init(initialised)
    server.add(REPLY)
    proc = tm_ask(repo, server, "the get method should set a default timeout of 10s", "--json")
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert prop["confidence"] == "INFERRED", prop
    pid = prop["id"]
    # `tm diff` shows the diff it would write, and how to have it written.
    shown = tm(repo, "diff", pid)
    assert '+        kwargs.setdefault("timeout", 10)' in shown.stdout
    assert f"tm accept {pid} --path {PATH}" in shown.stdout
    (doc,) = json.loads(tm(repo, "diff", pid, "--json").stdout)["proposals"]
    assert doc["blocked"] and '+        kwargs.setdefault("timeout", 10)' in doc["diff"]
    # Without the user's decision nothing is written; with another file, it is refused.
    blocked = tm(repo, "accept", pid)
    assert blocked.returncode == 5
    assert f"--path {PATH}" in blocked.stderr
    assert (repo / PATH).read_text() == SESSIONS
    wrong = tm(repo, "accept", pid, "--path", "src/requests/structures.py")
    assert wrong.returncode != 0 and (repo / PATH).read_text() == SESSIONS
    accepted = tm(repo, "accept", pid, "--path", PATH)
    assert accepted.returncode == 0, accepted.stderr
    assert (repo / PATH).read_text() == EXPECTED
    # Recorded as the user's decision.
    episode_id = accepted.stdout.split("Episode ", 1)[1].split(" ", 1)[0]
    episode = json.loads(tm(repo, "show", episode_id, "--json").stdout)
    text = json.dumps(episode)
    assert "the user confirmed" in text and "(--path)" in text
