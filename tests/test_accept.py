"""ask -> diff -> accept/reject end to end, through the loopback model server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import PY_APP, Initialise, git, tm, tm_ask, write
from tests.modelserver import ModelServer

NEW_FETCH = """def fetch_user(uid, retries=3):
    for _ in range(retries):
        return {"id": uid}"""

REPLY = f"Sure:\n\n```python path=app.py\n{NEW_FETCH}\n```\n"
APP = {"app.py": PY_APP}


def _ask(repo: Path, server: ModelServer, reply: str, *extra: str) -> dict[str, object]:
    server.add(reply)
    proc = tm_ask(repo, server, "change fetch_user", "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def _pid(doc: dict[str, object]) -> str:
    props = doc["proposals"]
    assert isinstance(props, list) and len(props) == 1
    return str(props[0]["id"])


def test_accept_changes_exactly_the_proposed_span(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    pid = _pid(_ask(repo, server, REPLY))
    diff = tm(repo, "diff", pid)
    assert diff.returncode == 0, diff.stderr
    assert "+def fetch_user(uid, retries=3):" in diff.stdout
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 0, proc.stderr
    expected = PY_APP.replace('def fetch_user(uid):\n    return {"id": uid}', NEW_FETCH)
    assert (repo / "app.py").read_text() == expected
    changed = git(repo, "diff", "--numstat").split()
    assert changed == ["3", "2", "app.py"]  # only the proposed span
    state = json.loads(tm(repo, "state", "--json").stdout)
    rec = {e["entity"]: e for e in state["entities"]}["app.py::fetch_user"]
    assert rec["source"] == "model" and rec["base"] is not None
    assert tm(repo, "status", "--check").returncode == 0  # ETV clean afterwards
    assert tm(repo, "rebuild").returncode == 0
    assert json.loads(tm(repo, "diff", "--json").stdout) == {"proposals": []}


def test_hand_edit_after_ask_blocks_until_overwrite_stale(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    pid = _pid(_ask(repo, server, REPLY))
    hand = PY_APP.replace('{"id": uid}', '{"id": uid, "hand": True}')
    write(repo, "app.py", hand)
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 5
    assert "gate ETV" in proc.stderr and "overwrite-stale" in proc.stderr
    assert (repo / "app.py").read_text() == hand  # nothing written
    proc = tm(repo, "accept", pid, "--overwrite-stale", "app.py::fetch_user")
    assert proc.returncode == 0, proc.stderr
    assert "retries=3" in (repo / "app.py").read_text()
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    saved = episode["details"]["overwritten"]["app.py::fetch_user"]
    assert f"git cat-file -p {saved}" in proc.stdout  # the one command that recovers it
    assert (
        git(repo, "cat-file", "-p", saved)
        == 'def fetch_user(uid):\n    return {"id": uid, "hand": True}'
    )


def test_elided_whole_file_never_deletes_code(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    elided = (
        '"""A tiny service."""\n\nimport os\n\n\n'
        + NEW_FETCH
        + "\n\n\nclass Client:\n    # ... rest of the code unchanged\n"
    )
    doc = _ask(repo, server, f"```python path=app.py\n{elided}```\n")
    pid = _pid(doc)
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 0, proc.stderr
    # The elided class does not parse; the one complete definition is taken, and said so.
    assert "does not parse outside the definitions it changes" in proc.stdout
    assert "only those are taken (fetch_user)" in proc.stdout
    expected = PY_APP.replace('def fetch_user(uid):\n    return {"id": uid}', NEW_FETCH)
    assert (repo / "app.py").read_text() == expected


def test_renamed_function_never_drops_the_old_one(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    renamed = (
        '"""A tiny service."""\n\nimport os\n\n\ndef get_user(uid):\n    return {"id": uid}\n'
        "\n\nclass Client:\n    def get(self, path):\n        return path\n\n"
        "    def post(self, path, body):\n        return (path, body)\n"
    )
    pid = _pid(_ask(repo, server, f"```python path=app.py\n{renamed}```\n"))
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 0, proc.stderr
    text = (repo / "app.py").read_text()
    assert text == PY_APP + '\n\ndef get_user(uid):\n    return {"id": uid}\n'
    ents = json.loads(tm(repo, "state", "--json").stdout)["entities"]
    assert {e["symbol"] for e in ents} >= {"fetch_user", "get_user"}


def test_delete_needs_the_directive_and_allow_delete(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    pid = _pid(_ask(repo, server, "Remove it.\n\nDELETE: app.py::fetch_user\n"))
    assert tm(repo, "accept", pid).returncode == 5
    assert "def fetch_user" in (repo / "app.py").read_text()
    proc = tm(repo, "accept", pid, "--allow-delete")
    assert proc.returncode == 0, proc.stderr
    assert "def fetch_user" not in (repo / "app.py").read_text()
    ents = {
        e["entity"]: e for e in json.loads(tm(repo, "state", "--json", "--all").stdout)["entities"]
    }
    assert ents["app.py::fetch_user"]["state"] == "TOMBSTONED"
    assert tm(repo, "rebuild").returncode == 0


@pytest.mark.parametrize(
    ("reply", "edit"),
    [
        ("DELETE: app.py\n", "\n\ndef mine():\n    return 42\n"),  # a definition added
        ("DELETE: app.py\n", None),  # a line outside every definition changed
    ],
    ids=["added-definition", "edited-import"],
)
def test_a_file_deletion_leaves_text_written_since_the_model_saw_it(
    repo: Path, initialised: Initialise, server: ModelServer, reply: str, edit: str | None
) -> None:
    """Removing the whole file removes every line of it: only the text the model saw goes
    without a word; anything written since blocks (ETV), or is kept in the vault when named
    with --overwrite-stale."""
    initialised(APP)
    pid = _pid(_ask(repo, server, "Remove it.\n\n" + reply))
    mine = PY_APP + edit if edit else PY_APP.replace("import os", "import os  # needed by run()")
    write(repo, "app.py", mine)
    proc = tm(repo, "accept", pid, "--allow-delete")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "STALE: app.py (changed on disk)" in proc.stderr
    assert (repo / "app.py").read_text() == mine
    done = tm(repo, "accept", pid, "--allow-delete", "--overwrite-stale", "app.py", "--json")
    assert done.returncode == 0, done.stderr
    assert not (repo / "app.py").exists()
    shown = json.loads(tm(repo, "show", json.loads(done.stdout)["episode"], "--json").stdout)
    kept = shown["details"]["overwritten"]["app.py"]
    assert git(repo, "cat-file", "-p", kept) == mine  # the user's text is in the vault


def test_reject_drops_the_proposal(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    pid = _pid(_ask(repo, server, REPLY))
    assert tm(repo, "reject", pid).returncode == 0
    assert json.loads(tm(repo, "diff", "--json").stdout) == {"proposals": []}
    assert tm(repo, "accept", pid).returncode == 2
    assert (repo / "app.py").read_text() == PY_APP


def test_file_changed_between_gate_and_rename_writes_nothing(
    repo: Path, initialised: Initialise
) -> None:
    """Drive the core directly: an editor saves after the gates passed, before the rename."""
    from tinymem.accept import apply, plan, select
    from tinymem.errors import StaleError
    from tinymem.ledger import current
    from tinymem.repository import open_repo

    initialised(APP)
    with ModelServer() as server:
        pid = _pid(_ask(repo, server, REPLY))
    write(repo, "other.py", "x = 1\n")
    r = open_repo(str(repo))
    view = current(r)
    p = plan(r, view, select(view, [pid], False))
    assert p.ok
    tip = r.state_tip()
    os.utime(repo / "app.py", None)
    write(repo, "app.py", PY_APP + "\n# saved by the editor\n")
    with pytest.raises(StaleError):
        apply(r, p)
    assert (repo / "app.py").read_text() == PY_APP + "\n# saved by the editor\n"
    assert r.state_tip() == tip


def test_whole_file_never_overwrites_a_hand_edit_outside_definitions(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    whole = PY_APP.replace('{"id": uid}', '{"id": uid, "v": 2}')
    doc = _ask(repo, server, f"```python path=app.py\n{whole}```\n")
    props = doc["proposals"]
    assert isinstance(props, list) and props[0]["kind"] == "whole-file"
    pid = str(props[0]["id"])
    hand = PY_APP.replace("import os\n", "import os\nimport sys\n")
    write(repo, "app.py", hand)  # no definition changed: only an import added
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 5, proc.stdout
    assert "STALE: app.py (changed on disk)" in proc.stderr
    assert (repo / "app.py").read_text() == hand
    proc = tm(repo, "accept", pid, "--overwrite-stale", "app.py")
    assert proc.returncode == 0, proc.stderr
    assert (repo / "app.py").read_text() == whole
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    saved = episode["details"]["overwritten"]["app.py"]
    assert git(repo, "cat-file", "-p", saved) == hand


def test_new_file_never_overwrites_a_file_made_since(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    doc = _ask(repo, server, "```python path=util.py\ndef util():\n    return 1\n```\n")
    pid = _pid(doc)
    write(repo, "util.py", "MINE = 1\n")
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 5
    assert "util.py (now exists on disk)" in proc.stderr
    assert (repo / "util.py").read_text() == "MINE = 1\n"
    proc = tm(repo, "accept", pid, "--overwrite-stale", "util.py")
    assert proc.returncode == 0, proc.stderr
    assert (repo / "util.py").read_text() == "def util():\n    return 1\n"


def test_exit_5_says_what_was_promoted_and_what_was_not(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"app.py": PY_APP, "other.py": "def other():\n    return 1\n"})
    reply = (
        f"```python path=app.py\n{NEW_FETCH}\n```\n"
        "```python path=other.py\ndef other():\n    return 2\n```\n"
    )
    _ask(repo, server, reply)
    write(repo, "other.py", "def other():\n    return 'mine'\n")  # blocks that one (ETV)
    proc = tm(repo, "accept", "--all")
    assert proc.returncode == 5
    assert "1 proposal(s) blocked; they stay pending, their files untouched" in proc.stderr
    assert "1 other(s) promoted" in proc.stderr
    assert "retries=3" in (repo / "app.py").read_text()
    assert (repo / "other.py").read_text() == "def other():\n    return 'mine'\n"


def test_deleting_a_file_tm_reads_no_entities_in(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    write(repo, "big.js", "var a = [" + ",".join("1" for _ in range(600_000)) + "];\n")
    git(repo, "add", "big.js")
    git(repo, "commit", "-qm", "big")
    assert tm(repo, "adopt", "big.js").returncode == 0
    server.add("DELETE: big.js\n")
    proc = tm_ask(repo, server, "drop big.js", "--json")
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert prop["gates"]["A"] == "pass"  # as accept will judge it
    proc = tm(repo, "accept", str(prop["id"]), "--allow-delete")
    assert proc.returncode == 0, proc.stderr
    assert not (repo / "big.js").exists()


def test_a_proposal_held_back_by_a_blocked_one_for_its_file_stays_pending(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # One file, two proposals: one passes, one is elided. The file is written with both or
    # neither; the one that passed must stay pending and say why, not be recorded as
    # accepted and never written.
    initialised(APP)
    elided = "class Client:\n    def get(self, path):\n        # ... rest of the code unchanged\n"
    _ask(
        repo,
        server,
        f"```python path=app.py\n{NEW_FETCH}\n```\n```python path=app.py\n{elided}```\n",
        "--repair",
        "0",
    )
    status = json.loads(tm(repo, "status", "--json").stdout)
    good, bad = sorted(
        status["pending_proposals"],
        key=lambda pid: "retries" not in tm(repo, "diff", pid).stdout,
    )
    proc = tm(repo, "accept", "--all")
    assert proc.returncode == 5
    assert f"blocked {good} by gate A: held back: proposal {bad} for app.py is blocked" in (
        proc.stderr
    )
    assert "2 proposal(s) blocked" in proc.stderr and "nothing was written" in proc.stderr
    assert (repo / "app.py").read_text() == PY_APP
    after = json.loads(tm(repo, "status", "--json").stdout)
    assert sorted(after["pending_proposals"]) == sorted([good, bad])
    # Alone, it applies.
    assert tm(repo, "accept", good).returncode == 0
    assert "retries=3" in (repo / "app.py").read_text()


def test_two_proposals_changing_one_entity_conflict_they_are_not_stale(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    other = NEW_FETCH.replace("retries=3", "retries=5")
    _ask(
        repo,
        server,
        f"```python path=app.py\n{NEW_FETCH}\n```\n```python path=app.py\n{other}\n```\n",
    )
    proc = tm(repo, "accept", "--all")
    assert proc.returncode == 5
    assert "conflicts with" in proc.stderr and "accepted in this run" in proc.stderr
    assert "STALE" not in proc.stderr
    assert (repo / "app.py").read_text() == PY_APP  # one file, all or nothing
