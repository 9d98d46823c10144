"""A ledger ref lock left by a killed process is found, reported and removed; a model reply is
never lost because the ledger could not take it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.conftest import PY_APP, Initialise, tm, write
from tests.modelserver import ModelServer
from tinymem import askrecord as ask_module
from tinymem.ask import AskOptions, ask
from tinymem.errors import ConcurrencyError
from tinymem.repository import open_repo

APP = {"app.py": PY_APP}


def _stale_lock(repo: Path) -> Path:
    """The ledger ref's lock, as a process killed a minute ago left it."""
    lock = repo / ".git" / "refs" / "tinymem" / "heads" / "main.lock"
    lock.write_text("")
    old = time.time() - 60
    os.utime(lock, (old, old))
    return lock


def test_a_stale_ref_lock_is_reported_then_removed_by_the_next_write(
    repo: Path, initialised: Initialise
) -> None:
    lock = _stale_lock(initialised(APP))
    doctor = json.loads(tm(repo, "doctor", "--json").stdout)
    found = [c for c in doctor["checks"] if c["check"] == "interrupted"]
    assert found[0]["status"] == "warn" and "main.lock" in found[0]["message"]
    write(repo, "app.py", PY_APP + "\nX = 1\n")
    proc = tm(repo, "adopt", "app.py")
    assert proc.returncode == 0, proc.stderr
    assert f"removed {lock}" in proc.stderr
    assert not lock.exists()


def test_a_reply_the_ledger_cannot_take_is_saved(
    repo: Path, initialised: Initialise, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stale_lock(initialised(APP)).unlink()
    server.add("```python path=app.py\ndef fetch_user(uid):\n    return None\n```\n")

    def busy(*_args: object, **_kwargs: object) -> None:
        raise ConcurrencyError("another tm process is busy")

    monkeypatch.setattr(ask_module, "commit_episode", busy)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    opts = AskOptions(
        "change fetch_user", flags={"model": "openai/test", "apiBase": server.openai_base}
    )
    with pytest.raises(ConcurrencyError, match="reply was saved in") as caught:
        ask(open_repo(str(repo)), opts)
    where = Path(str(caught.value).rsplit("saved in ", 1)[1])
    assert where.parent == repo / ".git" / "tinymem" / "unrecorded"
    assert "return None" in (where / "response.txt").read_text()
    assert json.loads((where / "messages.json").read_text())[0]["role"] == "system"
    doctor = json.loads(tm(repo, "doctor", "--json").stdout)
    found = [c for c in doctor["checks"] if c["check"] == "interrupted"]
    assert "could not be recorded" in found[0]["message"]
