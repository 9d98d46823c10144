"""The messages sent to the model do not change when hydration gets faster (#29).

A repository with real code (flask, mypy's errors.py from tests/data/realcode, and the small
service of the other tests), `tm init`, two asks (one accepted), a reject and two notes; then
the dry-run JSON of several requests (named, described, `-f`, `--continue`) and the messages
`tm serve` would send for a client's conversation. Their text is compared with
`data/messages_golden.json`, written by the code before #29's speed changes
(`TM_WRITE_GOLDEN=1` writes it again: only when a change of the messages is intended).
Random ids (episodes, proposals, notes) are replaced by their order of appearance.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import PY_APP, git, tm, tm_ask, write
from tests.modelserver import ModelServer
from tinymem.ask import AskOptions, prepare
from tinymem.repository import open_repo

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "data" / "messages_golden.json"
REALCODE = HERE.parent / "data" / "realcode"

REQUESTS: list[list[str]] = [
    ["fix Client.get so it strips the leading slash"],
    ["In `Flask.make_response`, accept a bytes body returned with a status"],
    ["make is_errors also count the warnings as errors when asked"],
    ["the error messages should be sorted by line then column", "-f", "mypy/errors.py"],
    ["add a retry to fetch_user"],
    ["more of the same", "-c"],
]

CONVERSATION = [
    {"role": "user", "content": "what does Scaffold.route do"},
    {"role": "assistant", "content": "It registers a view function for a rule."},
    {"role": "user", "content": "make Scaffold.route reject an empty rule"},
]


def _build(repo: Path, server: ModelServer, ids: dict[str, str]) -> dict[str, Any]:
    """The repository; and the dry run of a request right after `tm init` (the init episode
    is then all of the recent window)."""
    write(repo, "app.py", PY_APP)
    for rel in ("flask/src/flask/app.py", "flask/src/flask/sansio/scaffold.py"):
        dest = repo / rel.removeprefix("flask/src/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REALCODE / rel, dest)
    (repo / "mypy").mkdir()
    shutil.copy(REALCODE / "mypy" / "mypy" / "errors.py", repo / "mypy" / "errors.py")
    write(repo, "README.md", "# service\n\nFetches users.\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    assert tm(repo, "init").returncode == 0
    first = _dry_run(repo, server, REQUESTS[0], ids)
    new_fetch = 'def fetch_user(uid, retries=3):\n    return {"id": uid, "retries": retries}\n'
    server.add(f"```python path=app.py\n{new_fetch}```\n")
    proc = tm_ask(repo, server, "add retries to fetch_user", "--json")
    assert proc.returncode == 0, proc.stderr
    pid = json.loads(proc.stdout)["proposals"][0]["id"]
    assert tm(repo, "accept", pid).returncode == 0
    server.add(
        "```python path=app.py\nclass Client:\n    def get(self, path):\n"
        "        return path.lstrip('/')\n```\n"
    )
    proc = tm_ask(repo, server, "strip the slash in Client.get", "--json")
    assert proc.returncode == 0, proc.stderr
    server.add("Client.post is fine as it is.\n")
    assert tm_ask(repo, server, "is Client.post right?").returncode == 0
    rejected = "```python path=app.py\ndef fetch_user(uid):\n    return None\n```\n"
    server.add(rejected)
    proc = tm_ask(repo, server, "break fetch_user", "--json")
    assert proc.returncode == 0, proc.stderr
    bad = json.loads(proc.stdout)["proposals"][0]["id"]
    assert tm(repo, "reject", bad).returncode == 0
    assert (
        tm(
            repo,
            "note",
            "add",
            "constraint",
            "paths never start with a slash",
            "--on",
            "app.py::Client.get",
        ).returncode
        == 0
    )
    assert (
        tm(
            repo,
            "note",
            "add",
            "decision",
            "errors are sorted by file, line, column",
            "--on",
            "mypy/errors.py",
        ).returncode
        == 0
    )
    return first


def _normalised(text: str, ids: dict[str, str]) -> str:
    def name(match: re.Match[str]) -> str:
        return ids.setdefault(match.group(0), f"<id{len(ids)}>")

    return re.sub(r"\b[0-9a-f]{6,40}\b", name, text)


def _dry_run(repo: Path, server: ModelServer, args: list[str], ids: dict[str, str]) -> Any:
    proc = tm(repo, "ask", *args, "--dry-run", "--json", "--api-base", server.url)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    del doc["api_base"]  # the loopback server's port
    return json.loads(_normalised(json.dumps(doc, sort_keys=True), ids))


def _outputs(repo: Path, server: ModelServer) -> dict[str, Any]:
    ids: dict[str, str] = {}
    out: dict[str, Any] = {"after init": _build(repo, server, ids)}
    for args in REQUESTS:
        out[" ".join(args)] = _dry_run(repo, server, args, ids)
    said = [t["content"] for t in reversed(CONVERSATION) if t["role"] == "user"]
    prep = prepare(
        open_repo(str(repo)),
        AskOptions(prompt="\n".join(said), conversation=[dict(t) for t in CONVERSATION]),
    )
    out["serve"] = json.loads(_normalised(json.dumps(prep.hydration.messages), ids))
    return out


def test_messages_are_those_before_the_speed_changes(repo: Path, server: ModelServer) -> None:
    got = _outputs(repo, server)
    if os.environ.get("TM_WRITE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    want = json.loads(GOLDEN.read_text())
    assert got.keys() == want.keys()
    for key in want:
        # A dry run's JSON may gain keys (formats.md: add, never rename or remove); what it
        # had, messages first, must not change.
        have = got[key]
        if isinstance(have, dict) and isinstance(want[key], dict):
            have = {k: v for k, v in have.items() if k in want[key]}
        assert have == want[key], key
