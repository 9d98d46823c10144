"""`tm undo`: an accept (or adopt) taken back file by file, written as an accept is, recorded
as an `undo` episode; refused when a file changed since unless --force; an undo of an undo
redoes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import DIE_AFTER_RENAME, PY_APP, Initialise, git, tm, tm_ask, tm_patched, write
from tests.modelserver import ModelServer

NEW_FETCH = """def fetch_user(uid, retries=3):
    for _ in range(retries):
        return {"id": uid}"""
ACCEPTED = PY_APP.replace('def fetch_user(uid):\n    return {"id": uid}', NEW_FETCH)
METHOD_REPLY = f"Sure:\n\n```python path=app.py\n{NEW_FETCH}\n```\n"
NEW_FILE = 'def helper():\n    return "help"\n'
APP = {"app.py": PY_APP}


def _accept(repo: Path, server: ModelServer, reply: str, *extra: str) -> str:
    """Ask for `reply`, accept its proposal; the accept's episode id."""
    server.add(reply)
    asked = tm_ask(repo, server, "change it", "--json")
    assert asked.returncode == 0, asked.stderr
    (prop,) = json.loads(asked.stdout)["proposals"]
    done = tm(repo, "accept", str(prop["id"]), "--json", *extra)
    assert done.returncode == 0, done.stderr
    episode: str = json.loads(done.stdout)["episode"]
    return episode


def _undo(repo: Path, *args: str) -> dict[str, Any]:
    proc = tm(repo, "undo", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def _clean(repo: Path) -> None:
    assert tm(repo, "status", "--check").returncode == 0
    assert tm(repo, "rebuild").returncode == 0  # the replay proof holds with undo episodes


def _log(repo: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(tm(repo, "log", "--json").stdout)
    return entries


def test_undo_of_a_method_accept_gives_the_file_back_and_is_logged(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    accepted = _accept(repo, server, METHOD_REPLY)
    assert (repo / "app.py").read_text() == ACCEPTED
    doc = _undo(repo)  # no argument: the latest accept
    assert doc["undid"] == accepted and doc["undid_kind"] == "accept"
    assert doc["files"] == [{"path": "app.py", "action": "restored"}]
    assert (repo / "app.py").read_text() == PY_APP
    _clean(repo)
    state = json.loads(tm(repo, "state", "--json").stdout)
    rec = {e["entity"]: e for e in state["entities"]}["app.py::fetch_user"]
    assert rec["episode"] == doc["episode"]  # the undo made this text authoritative again
    entries = {e["episode"]: e for e in _log(repo)}
    assert entries[accepted]["undone_by"] == doc["episode"]
    assert entries[doc["episode"]]["undid"] == accepted
    piped = tm(repo, "log").stdout
    assert f"(undone by {doc['episode']})" in piped
    shown = tm(repo, "show", doc["episode"])
    assert f"undid      accept {accepted}" in shown.stdout, shown.stdout
    assert f"undone by  {doc['episode']}" in tm(repo, "show", accepted).stdout
    # Nothing left to undo: the branch's only accept is undone.
    again = tm(repo, "undo")
    assert again.returncode == 2 and "no accept to undo" in again.stderr


def test_blame_after_an_undo_attributes_the_restored_lines_to_the_undo(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    _accept(repo, server, METHOD_REPLY)
    doc = _undo(repo)
    lines = json.loads(tm(repo, "blame", "app.py", "--json").stdout)["lines"]
    by_text = {ln["text"]: ln for ln in lines}
    assert by_text["def fetch_user(uid):"]["episode"] == doc["episode"]
    assert by_text["class Client:"]["kind"] == "init"  # untouched lines keep their origin


def test_undo_of_a_whole_file_accept(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    whole = PY_APP.replace("import os\n", "import os\nimport sys\n")
    _accept(repo, server, f"Here:\n\n```python path=app.py\n{whole}```\n")
    assert (repo / "app.py").read_text() == whole
    _undo(repo)
    assert (repo / "app.py").read_text() == PY_APP
    _clean(repo)


def test_undo_of_a_new_file_removes_it_and_undo_of_the_undo_brings_it_back(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    accepted = _accept(repo, server, f"New:\n\n```python path=lib/helper.py\n{NEW_FILE}```\n")
    assert (repo / "lib" / "helper.py").read_text() == NEW_FILE
    undone = _undo(repo, accepted)
    assert undone["files"] == [{"path": "lib/helper.py", "action": "removed"}]
    assert not (repo / "lib" / "helper.py").exists()
    _clean(repo)
    redone = _undo(repo, undone["episode"])  # undoing the undo redoes
    assert redone["files"] == [{"path": "lib/helper.py", "action": "recreated"}]
    assert (repo / "lib" / "helper.py").read_text() == NEW_FILE
    _clean(repo)
    entries = {e["episode"]: e for e in _log(repo)}
    assert entries[accepted]["undone_by"] is None  # redone
    assert entries[undone["episode"]]["undone_by"] == redone["episode"]
    # The accept stands again: the latest accept is the default once more.
    assert _undo(repo, "--dry-run")["undid"] == accepted


def test_undo_of_a_deletion_brings_the_file_back(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    server.add("Remove it.\n\nDELETE: app.py\n")
    asked = tm_ask(repo, server, "drop app.py", "--json")
    (prop,) = json.loads(asked.stdout)["proposals"]
    assert tm(repo, "accept", str(prop["id"]), "--allow-delete").returncode == 0
    assert not (repo / "app.py").exists()
    doc = _undo(repo)
    assert doc["files"] == [{"path": "app.py", "action": "recreated"}]
    assert (repo / "app.py").read_text() == PY_APP
    assert git(repo, "status", "--porcelain") == ""  # exactly the committed file again
    _clean(repo)


def test_undo_of_an_adopt(repo: Path, initialised: Initialise) -> None:
    initialised(APP)
    (repo / "app.py").unlink()
    adopted = json.loads(tm(repo, "adopt", "app.py", "--json").stdout)["episode"]
    doc = _undo(repo, adopted)
    assert doc["undid_kind"] == "adopt"
    assert (repo / "app.py").read_text() == PY_APP
    _clean(repo)


def test_refused_after_a_later_hand_edit_then_forced(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    accepted = _accept(repo, server, METHOD_REPLY)
    edited = ACCEPTED.replace("retries=3", "retries=5")
    write(repo, "app.py", edited)
    proc = tm(repo, "undo")
    assert proc.returncode == 12, proc.stderr
    assert "app.py::fetch_user (edited by hand)" in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr  # one sentence
    assert (repo / "app.py").read_text() == edited  # nothing written
    forced = _undo(repo, "--force")
    assert (repo / "app.py").read_text() == PY_APP
    kept = forced["kept"]["app.py"]
    assert git(repo, "cat-file", "-p", kept) == edited  # the hand edit is not lost
    shown = json.loads(tm(repo, "show", forced["episode"], "--json").stdout)
    assert shown["details"]["kept"] == {"app.py": kept}
    assert "kept-0" in shown["attachments"]
    assert forced["undid"] == accepted
    _clean(repo)


def test_refused_after_a_later_accept_of_the_same_entity(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    first = _accept(repo, server, METHOD_REPLY)
    later_fetch = NEW_FETCH.replace("retries=3", "retries=4")
    second = _accept(repo, server, f"Again:\n\n```python path=app.py\n{later_fetch}\n```\n")
    proc = tm(repo, "undo", first)
    assert proc.returncode == 12, proc.stderr
    assert f"app.py::fetch_user (episode {second})" in proc.stderr
    # The later one is the default and can be undone: back to the first accept's text.
    assert _undo(repo)["undid"] == second
    assert (repo / "app.py").read_text() == ACCEPTED
    # Then the first: back to the start.
    assert _undo(repo)["undid"] == first
    assert (repo / "app.py").read_text() == PY_APP
    _clean(repo)


def test_undo_across_a_commit_is_an_ordinary_modification(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    _accept(repo, server, METHOD_REPLY)
    git(repo, "commit", "-qam", "the accept")
    _undo(repo)
    assert (repo / "app.py").read_text() == PY_APP
    assert git(repo, "status", "--porcelain") == " M app.py\n"
    assert "-def fetch_user(uid, retries=3):" in git(repo, "diff")
    _clean(repo)


def test_dry_run_writes_nothing_and_prints_the_diff(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    _accept(repo, server, METHOD_REPLY)
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main")
    proc = tm(repo, "undo", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "+def fetch_user(uid):" in proc.stdout and "nothing was written" in proc.stdout
    doc = _undo(repo, "--dry-run")
    assert doc["dry_run"] and doc["episode"] is None and "-    for _ in range" in doc["diff"]
    assert (repo / "app.py").read_text() == ACCEPTED
    assert git(repo, "rev-parse", "refs/tinymem/heads/main") == tip


def test_unknown_other_branch_and_unfit_episodes_are_one_sentence(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    git(repo, "switch", "-qc", "other")
    accepted = _accept(repo, server, METHOD_REPLY)
    git(repo, "commit", "-qam", "on other")
    git(repo, "switch", "-q", "main")
    elsewhere = tm(repo, "undo", accepted)
    assert elsewhere.returncode == 2
    assert "branch other's ledger" in elsewhere.stderr and "git switch other" in elsewhere.stderr
    unknown = tm(repo, "undo", "fedcba987654")
    assert unknown.returncode == 2 and "no episode of branch main matches" in unknown.stderr
    init = json.loads(tm(repo, "log", "--json").stdout)[-1]["episode"]
    unfit = tm(repo, "undo", init)
    assert unfit.returncode == 2 and "wrote no file" in unfit.stderr
    for proc in (elsewhere, unknown, unfit):
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def _undo_dying(repo: Path) -> subprocess.CompletedProcess[str]:
    """`tm undo` in a process that dies right after the file's rename, before the ledger."""
    return tm_patched(repo, DIE_AFTER_RENAME, "undo")


def test_a_kill_mid_undo_is_rolled_back_by_the_next_command(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP)
    _accept(repo, server, METHOD_REPLY)
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main")
    proc = _undo_dying(repo)
    assert proc.returncode == 9, proc.stderr
    assert (repo / "app.py").read_text() == PY_APP  # written, not recorded
    status = tm(repo, "status")
    assert "an interrupted tm undo" in status.stderr and "rolled back" in status.stderr
    assert (repo / "app.py").read_text() == ACCEPTED
    assert git(repo, "rev-parse", "refs/tinymem/heads/main") == tip
    assert not (repo / ".git" / "tinymem" / "accept-intent.json").exists()
    _undo(repo)  # and it can be undone after all
    assert (repo / "app.py").read_text() == PY_APP
    _clean(repo)


def _executable(path: Path) -> bool:
    return bool(path.stat().st_mode & 0o100)


def test_undo_of_a_deletion_brings_an_executable_file_back_executable(
    repo: Path, server: ModelServer
) -> None:
    write(repo, "app.py", PY_APP)
    (repo / "app.py").chmod(0o755)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    server.add("Remove it.\n\nDELETE: app.py\n")
    (prop,) = json.loads(tm_ask(repo, server, "drop app.py", "--json").stdout)["proposals"]
    assert tm(repo, "accept", str(prop["id"]), "--allow-delete").returncode == 0
    assert not (repo / "app.py").exists()
    _undo(repo)
    assert (repo / "app.py").read_text() == PY_APP
    assert _executable(repo / "app.py")  # git's mode 100755 again, as committed
    assert git(repo, "status", "--porcelain") == ""
    _clean(repo)


def test_undo_of_an_adopt_that_made_a_file_executable_takes_the_bit_back(
    repo: Path, initialised: Initialise
) -> None:
    initialised(APP)
    edited = PY_APP + "\n\ndef main():\n    pass\n"
    write(repo, "app.py", edited)
    (repo / "app.py").chmod(0o755)
    adopted = json.loads(tm(repo, "adopt", "app.py", "--json").stdout)["episode"]
    undone = _undo(repo, adopted)
    assert (repo / "app.py").read_text() == PY_APP
    assert not _executable(repo / "app.py")  # the mode the State Map had before the adopt
    assert git(repo, "status", "--porcelain") == ""
    _clean(repo)
    _undo(repo, undone["episode"])  # redone: the adopt's text and mode come back
    assert (repo / "app.py").read_text() == edited
    assert _executable(repo / "app.py")
    _clean(repo)


def test_undo_of_an_accept_keeps_an_executable_bit_set_by_hand(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """An accept writes no mode: the +x it recorded is the user's chmod, which undoing the
    accept's text must not take back."""
    initialised(APP)
    (repo / "app.py").chmod(0o755)  # by hand, before the accept: no episode records it
    _accept(repo, server, METHOD_REPLY)
    _undo(repo)
    assert (repo / "app.py").read_text() == PY_APP
    assert _executable(repo / "app.py")
