"""Steps the branch tests share."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import tm, tm_ask
from tests.modelserver import ModelServer


def accept_reply(repo: Path, server: ModelServer, path: str, code: str) -> str:
    """Ask the loopback model for `code` as the new text of `path` and accept the proposal;
    its id."""
    server.add(f"```python path={path}\n{code}\n```\n")
    proc = tm_ask(repo, server, f"change {path}", "--json")
    assert proc.returncode == 0, proc.stderr
    pid = json.loads(proc.stdout)["proposals"][0]["id"]
    done = tm(repo, "accept", pid)
    assert done.returncode == 0, done.stderr
    return str(pid)
