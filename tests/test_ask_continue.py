"""`tm ask -c/--continue`: the last ask's conversation, its context hydrated again from
today's State Map (STALE entities still left out), as one new episode."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import PY_APP, Initialise, init_repo, tm, tm_ask, write
from tests.modelserver import ModelServer

FIRST = "Use a dict:\n\n```python path=app.py\ndef fetch_user(uid):\n    return {'id': uid}\n```\n"


def test_continue_sends_the_turns_with_fresh_context(repo: Path, server: ModelServer) -> None:
    init_repo(repo, {"app.py": PY_APP, "util.py": "def helper():\n    return 1\n"})
    server.add(FIRST)
    assert tm_ask(repo, server, "change fetch_user").returncode == 0
    first = json.loads(tm(repo, "log", "--json").stdout)[0]["episode"]
    # Since then: an adopted change (must be shown as it is now), a hand edit (STALE: never).
    write(repo, "util.py", "def helper():\n    return 'adopted-now'\n")
    assert tm(repo, "adopt", "util.py").returncode == 0
    write(repo, "app.py", PY_APP.replace("class Client:", "class Client:  # hand-edit-now"))
    server.add("Fine as it is.")
    proc = tm_ask(repo, server, "now use helper in fetch_user", "-c")
    assert proc.returncode == 0, proc.stderr
    sent = server.chat_requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "change fetch_user"
    assert sent[2]["content"] == FIRST
    assert sent[3]["content"] == "now use helper in fetch_user"
    assert "adopted-now" in sent[0]["content"]
    assert "hand-edit-now" not in json.dumps(sent)
    log = json.loads(tm(repo, "log", "--json").stdout)
    assert log[0]["kind"] == "ask" and log[0]["episode"] != first
    shown = json.loads(tm(repo, "show", log[0]["episode"], "--json").stdout)
    assert shown["details"]["continues"] == first
    # Continuing the continued one carries the whole conversation on.
    server.add("Done.")
    assert tm_ask(repo, server, "thanks", "-c").returncode == 0
    roles = [m["role"] for m in server.chat_requests[-1].body["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]


def test_continue_without_an_earlier_answer_is_a_usage_error(
    repo: Path, initialised: Initialise
) -> None:
    initialised({"app.py": PY_APP})
    proc = tm(repo, "ask", "more", "-c", "--dry-run")
    assert proc.returncode == 2 and "no earlier ask" in proc.stderr
