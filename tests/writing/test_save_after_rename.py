"""An editor saving right after tm renamed its text into place, before the ledger commit:
the episode records the text tm wrote, and the save is the user's hand edit (STALE), never
recorded as the model's (or as the undo's) text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PY_APP, Initialise, git, tm, tm_ask
from tests.modelserver import ModelServer
from tests.test_undo import ACCEPTED, METHOD_REPLY

MINE = "# saved by the editor a moment after tm wrote\n"


@pytest.fixture
def editor_saves_after_rename(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tinymem.writing.transaction as transaction

    real = transaction.write_atomic

    def then_save(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        path = repo / args[1]
        path.write_text(path.read_text() + MINE)

    monkeypatch.setattr(transaction, "write_atomic", then_save)


APP = {"app.py": PY_APP}


def _recorded(repo: Path) -> str:
    return git(repo, "show", "refs/tinymem/heads/main:files/app.py")


def _accept(repo: Path, server: ModelServer) -> str:
    server.add(METHOD_REPLY)
    (prop,) = json.loads(tm_ask(repo, server, "change it", "--json").stdout)["proposals"]
    done = tm(repo, "accept", str(prop["id"]), "--json")
    assert done.returncode == 0, done.stderr
    episode: str = json.loads(done.stdout)["episode"]
    return episode


def test_an_accept_records_what_it_wrote(
    repo: Path, initialised: Initialise, server: ModelServer, request: Any
) -> None:
    initialised(APP)
    request.getfixturevalue("editor_saves_after_rename")
    _accept(repo, server)
    assert (repo / "app.py").read_text() == ACCEPTED + MINE
    assert _recorded(repo) == ACCEPTED  # the model's text, not the editor's save
    status = tm(repo, "status", "--check")
    assert status.returncode == 1  # the save is a hand edit, as it is
    assert tm(repo, "undo").returncode == 12  # and undo will not take it back unasked


def test_an_undo_records_what_it_wrote(
    repo: Path, initialised: Initialise, server: ModelServer, request: Any
) -> None:
    initialised(APP)
    _accept(repo, server)
    request.getfixturevalue("editor_saves_after_rename")
    assert tm(repo, "undo").returncode == 0
    assert (repo / "app.py").read_text() == PY_APP + MINE
    assert _recorded(repo) == PY_APP
    assert tm(repo, "status", "--check").returncode == 1
