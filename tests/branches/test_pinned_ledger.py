"""A `git switch` while `tm ask`, `tm adopt` or `tm reject` runs: the episode belongs to the
branch the command started on, and is refused (exit 12) rather than recorded into the ledger
of the branch HEAD names by then (accept's version: tests/writing/test_switch_during_accept.py).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import tinymem.accept
import tinymem.adopt
from tests.conftest import PY_APP, Initialise, git, tm, tm_ask, write
from tests.modelserver import ModelServer, ScriptedReply

REPLY = """Here is the retry:

```python path=app.py
def fetch_user(uid, retries=3):
    for _ in range(retries):
        return {"id": uid}
```
"""


def _setup(initialised: Initialise) -> None:
    repo = initialised({"app.py": PY_APP}, message="start")
    git(repo, "branch", "other")


def _tip(repo: Path, branch: str) -> str:
    return git(repo, "rev-parse", "-q", "--verify", f"refs/tinymem/heads/{branch}", check=False)


def _switch(repo: Path) -> None:
    git(repo, "switch", "-q", "other")


def test_an_ask_whose_reply_spans_a_switch_records_into_neither_branch(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    _setup(initialised)
    main_tip = _tip(repo, "main")
    released = threading.Event()
    server.add(ScriptedReply(REPLY, hold=released))

    def switch_while_the_model_talks() -> None:
        deadline = time.monotonic() + 10
        while not server.chat_requests and time.monotonic() < deadline:
            time.sleep(0.01)
        _switch(repo)
        released.set()

    switcher = threading.Thread(target=switch_while_the_model_talks)
    switcher.start()
    proc = tm_ask(repo, server, "add a retry to fetch_user")
    switcher.join()
    assert proc.returncode == 12, proc.stderr
    assert "main" in proc.stderr and "other" in proc.stderr and "saved in" in proc.stderr
    assert _tip(repo, "main") == main_tip
    assert _tip(repo, "other") == ""  # no ledger: nothing was recorded there
    assert tm(repo, "status").returncode == 0  # other's ledger starts from main's, as usual
    assert "tm ask" not in git(repo, "log", "--format=%s", "refs/tinymem/heads/other")


def test_an_adopt_spanning_a_switch_is_refused(
    repo: Path, initialised: Initialise, monkeypatch: pytest.MonkeyPatch
) -> None:
    _setup(initialised)
    write(repo, "app.py", PY_APP + "\n\ndef added():\n    return 1\n")
    main_tip = _tip(repo, "main")
    expand = tinymem.adopt.expand

    def expand_then_switch(*args: Any, **kwargs: Any) -> list[str]:
        found = expand(*args, **kwargs)
        _switch(repo)  # both branches are at one commit: the hand edit comes along
        return found

    monkeypatch.setattr(tinymem.adopt, "expand", expand_then_switch)
    proc = tm(repo, "adopt", "app.py")
    assert proc.returncode == 12, proc.stderr
    assert "HEAD moved from branch main to branch other" in proc.stderr
    assert _tip(repo, "main") == main_tip
    assert _tip(repo, "other") == ""  # nothing was recorded there either


def test_a_reject_spanning_a_switch_is_refused(
    repo: Path, initialised: Initialise, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _setup(initialised)
    server.add(REPLY)
    assert tm_ask(repo, server, "add a retry to fetch_user").returncode == 0
    main_tip = _tip(repo, "main")
    read = tinymem.accept.current  # what reject() reads its proposals from

    def read_then_switch(*args: Any, **kwargs: Any) -> Any:
        view = read(*args, **kwargs)
        _switch(repo)
        return view

    monkeypatch.setattr(tinymem.accept, "current", read_then_switch)
    proc = tm(repo, "reject", "--all")
    assert proc.returncode == 12, proc.stderr
    assert _tip(repo, "main") == main_tip
    assert _tip(repo, "other") == ""
    monkeypatch.undo()
    git(repo, "switch", "-q", "main")
    assert len(json.loads(tm(repo, "diff", "--json").stdout)["proposals"]) == 1
