"""A path that git (or the user) turns from a directory into a file of the same name, or the
reverse. The State Map's tree cannot hold `meta/lib` beside `meta/lib/a.py`, and records of
deleted files are kept: the step up to HEAD lost the file `lib` (edit_tree made `files/lib`
a directory again, or dropped it), and `tm rebuild` / `tm doctor` reported a replay that
differs. Each record of the other kind now leaves the State Map in the episode that makes
the path live, named in its record, after its entities are TOMBSTONED (#29)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import Initialise, git, tm, tm_ask, write
from tests.modelserver import ModelServer

APP = "def run():\n    return 0\n"
A = "def a():\n    return 1\n"
B = "def b():\n    return 2\n"
LIB = "def f():\n    return 1\n"


def _json(repo: Path, *argv: str) -> Any:
    done = tm(repo, *argv, "--json")
    assert done.returncode == 0, (argv, done.stderr)
    return json.loads(done.stdout)


def _entities(repo: Path) -> dict[str, bool]:
    """Entity key -> STALE, of every live entity."""
    return {e["entity"]: e["stale"] for e in _json(repo, "state")["entities"]}


def _replay_agrees(repo: Path) -> None:
    rebuilt = tm(repo, "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    doctor = _json(repo, "doctor")
    assert doctor["ok"], [f for f in doctor["findings"] if f["status"] != "ok"]


def _left(repo: Path, episode: str | None = None) -> dict[str, bool]:
    """Path -> whether its record left the State Map, of the files an episode names."""
    shown = _json(repo, "show", *([episode] if episode else []))
    return {f["path"]: f["left"] for f in shown["files"]}


def test_a_directory_git_committed_as_a_file_records_the_file(
    repo: Path, initialised: Initialise
) -> None:
    initialised({"app.py": APP, "lib/a.py": A, "lib/b.py": B})
    assert tm(repo, "hook", "install").returncode == 0
    git(repo, "rm", "-rq", "lib")
    write(repo, "lib", LIB)
    git(repo, "add", "lib")
    git(repo, "commit", "-qm", "lib is a file now")  # through the hook
    status = _json(repo, "status")
    assert status["clean"] is True
    assert _entities(repo) == {"app.py::run": False, "lib::@file": False}
    assert _left(repo) == {"lib": False, "lib/a.py": True, "lib/b.py": True}
    transitions = _json(repo, "show")["transitions"]
    assert {(t["entity"], t["to"]) for t in transitions} >= {
        ("lib/a.py::a", "TOMBSTONED"),
        ("lib/b.py::b", "TOMBSTONED"),
    }
    _replay_agrees(repo)
    # Its later edits are seen, and the hook lets the commit of one through.
    write(repo, "lib", LIB.replace("1", "2"))
    assert _entities(repo)["lib::@file"] is True
    git(repo, "commit", "-qam", "lib returns 2")
    assert _json(repo, "status")["clean"] is True
    _replay_agrees(repo)
    # The history of the files that were there stays readable.
    swapped = _json(repo, "log", "lib/a.py")
    assert [e["kind"] for e in swapped] == ["git", "init"]
    blamed = tm(repo, "blame", "lib/a.py")
    assert blamed.returncode == 2 and "was deleted" in blamed.stderr


def test_a_file_git_committed_as_a_directory_records_its_files(
    repo: Path, initialised: Initialise
) -> None:
    initialised({"app.py": APP, "lib": LIB})
    assert tm(repo, "hook", "install").returncode == 0
    git(repo, "rm", "-q", "lib")
    write(repo, "lib/x.py", A)
    git(repo, "add", "lib")
    git(repo, "commit", "-qm", "lib is a directory now")
    assert _json(repo, "status")["clean"] is True
    assert _entities(repo) == {"app.py::run": False, "lib/x.py::a": False}
    assert _left(repo) == {"lib": True, "lib/x.py": False}
    _replay_agrees(repo)
    # And back: the directory's records leave, the file is recorded again.
    git(repo, "rm", "-rq", "lib")
    write(repo, "lib", LIB)
    git(repo, "add", "lib")
    git(repo, "commit", "-qm", "lib is a file again")
    assert _entities(repo) == {"app.py::run": False, "lib::@file": False}
    _replay_agrees(repo)


def test_a_directory_of_deleted_files_makes_room_for_a_file_of_its_name(
    repo: Path, initialised: Initialise
) -> None:
    """The records of lib/a.py were kept as deleted ones when a later file `lib` came."""
    initialised({"app.py": APP, "lib/a.py": A})
    git(repo, "rm", "-rq", "lib")
    git(repo, "commit", "-qm", "no lib")
    assert tm(repo, "status").returncode == 0  # lib/a.py recorded deleted
    write(repo, "lib", LIB)
    git(repo, "add", "lib")
    git(repo, "commit", "-qm", "lib is a file")
    assert _entities(repo) == {"app.py::run": False, "lib::@file": False}
    assert _left(repo) == {"lib": False, "lib/a.py": True}
    _replay_agrees(repo)


def test_adopting_a_file_where_a_directory_was_records_its_files_deleted(
    repo: Path, initialised: Initialise
) -> None:
    """`tm adopt lib` recorded only `lib`: the records of lib/a.py and lib/b.py vanished
    with no deletion, no transition, and no undo could bring them back."""
    initialised({"app.py": APP, "lib/a.py": A, "lib/b.py": B})
    assert tm(repo, "hook", "install").returncode == 0
    shutil.rmtree(repo / "lib")
    write(repo, "lib", LIB)
    done = _json(repo, "adopt", "lib")
    assert done["adopted"] == ["lib"]
    assert done["deleted"] == ["lib/a.py", "lib/b.py"]
    assert done["tombstoned"] == ["lib/a.py::a", "lib/b.py::b"]
    assert _json(repo, "status")["clean"] is True
    assert _entities(repo) == {"app.py::run": False, "lib::@file": False}
    assert _left(repo, done["episode"]) == {"lib": False, "lib/a.py": True, "lib/b.py": True}
    _replay_agrees(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "lib is a file")  # the hook lets it through
    assert _json(repo, "status")["clean"] is True
    _replay_agrees(repo)


def test_adopting_files_where_a_file_was_records_it_deleted(
    repo: Path, initialised: Initialise
) -> None:
    initialised({"app.py": APP, "lib": LIB})
    (repo / "lib").unlink()
    write(repo, "lib/x.py", A)
    done = _json(repo, "adopt", "lib/x.py")
    assert (done["adopted"], done["deleted"]) == (["lib/x.py"], ["lib"])
    assert _json(repo, "status")["clean"] is True
    assert _entities(repo) == {"app.py::run": False, "lib/x.py::a": False}
    assert _left(repo, done["episode"]) == {"lib": True, "lib/x.py": False}
    _replay_agrees(repo)


def test_adopt_all_across_a_file_and_a_directory_of_one_name(
    repo: Path, initialised: Initialise
) -> None:
    """--all adopts what drifted: the files below the directory that became a file are
    recorded deleted; the new file, untracked, is then adopted by name."""
    initialised({"app.py": APP, "lib/a.py": A, "lib/b.py": B})
    shutil.rmtree(repo / "lib")
    write(repo, "lib", LIB)
    done = _json(repo, "adopt", "--all")
    assert done["deleted"] == ["lib/a.py", "lib/b.py"]
    assert _json(repo, "adopt", "lib")["adopted"] == ["lib"]
    assert _entities(repo) == {"app.py::run": False, "lib::@file": False}
    _replay_agrees(repo)
    # The reverse: the tracked file `lib` is a directory now.
    (repo / "lib").unlink()
    write(repo, "lib/x.py", A)
    done = _json(repo, "adopt", "--all")
    assert done["deleted"] == ["lib"]
    assert _json(repo, "adopt", "lib")["adopted"] == ["lib/x.py"]
    assert _entities(repo) == {"app.py::run": False, "lib/x.py::a": False}
    _replay_agrees(repo)


def test_undo_of_an_adopt_across_a_file_and_a_directory_restores_both_ways(
    repo: Path, initialised: Initialise
) -> None:
    """The undo puts the directory's files back where the file is (and the redo the file
    back): the State Map's files/ and entities/ are those before the adopt, the records of
    the other kind leave again, and the replay agrees at every step."""
    initialised({"app.py": APP, "lib/a.py": A, "lib/b.py": B})
    tip = "refs/tinymem/heads/main"
    before = {t: git(repo, "rev-parse", f"{tip}:{t}").strip() for t in ("files", "entities")}
    shutil.rmtree(repo / "lib")
    write(repo, "lib", LIB)
    adopted = _json(repo, "adopt", "lib")["episode"]
    undone = _json(repo, "undo", adopted)
    assert (repo / "lib" / "a.py").read_text() == A and (repo / "lib" / "b.py").read_text() == B
    assert {t: git(repo, "rev-parse", f"{tip}:{t}").strip() for t in before} == before
    assert _entities(repo) == {"app.py::run": False, "lib/a.py::a": False, "lib/b.py::b": False}
    assert _left(repo) == {"lib": True, "lib/a.py": False, "lib/b.py": False}
    _replay_agrees(repo)
    _json(repo, "undo", undone["episode"])  # the redo
    assert (repo / "lib").read_text() == LIB
    assert _entities(repo) == {"app.py::run": False, "lib::@file": False}
    _replay_agrees(repo)


def test_undo_of_files_adopted_where_a_file_was(repo: Path, initialised: Initialise) -> None:
    initialised({"app.py": APP, "lib": LIB})
    (repo / "lib").unlink()
    write(repo, "lib/x.py", A)
    adopted = _json(repo, "adopt", "lib/x.py")["episode"]
    undone = _json(repo, "undo", adopted)["episode"]
    assert (repo / "lib").read_text() == LIB
    assert _entities(repo) == {"app.py::run": False, "lib::@file": False}
    _replay_agrees(repo)
    # Redone with a file of the user's in the directory: the file `lib` cannot take its
    # place; nothing is lost and nothing recorded.
    redone = _json(repo, "undo", undone)["episode"]
    write(repo, "lib/notes.txt", "mine\n")
    refused = tm(repo, "undo", redone)
    assert refused.returncode == 11, refused.stderr
    assert (repo / "lib" / "notes.txt").read_text() == "mine\n"
    assert (repo / "lib" / "x.py").read_text() == A
    assert _entities(repo) == {"app.py::run": False, "lib/x.py::a": False}
    assert tm(repo, "status").stderr == ""  # no interrupted undo left to roll back
    _replay_agrees(repo)


def test_a_pending_proposal_for_a_file_whose_directory_became_a_file_stays_refused(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """It stays pending, and `tm accept` refuses it as for any deleted file (gate A), with
    no advice to adopt a deletion the State Map holds already."""
    initialised({"app.py": APP, "lib/a.py": A})
    server.add(f"Sure:\n\n```python path=lib/a.py\n{A.replace('1', '3')}```\n")
    asked = tm_ask(repo, server, "make a return 3", "--json")
    assert asked.returncode == 0, asked.stderr
    pid = json.loads(asked.stdout)["proposals"][0]["id"]
    git(repo, "rm", "-rq", "lib")
    write(repo, "lib", LIB)
    git(repo, "add", "lib")
    git(repo, "commit", "-qm", "lib is a file")
    assert _json(repo, "status")["pending_proposals"] == [pid]
    refused = tm(repo, "accept", pid)
    assert refused.returncode == 5
    assert "lib/a.py no longer exists, and the State Map records it deleted" in refused.stderr
    assert (repo / "lib").read_text() == LIB
    _replay_agrees(repo)


def test_several_files_below_a_file_that_became_a_directory(
    repo: Path, initialised: Initialise
) -> None:
    """Each file adopted below `lib` meets the record of `lib`: it ends once, and a deeper
    directory looked at first does not hide it from the next file."""
    initialised({"app.py": APP, "lib": LIB})
    (repo / "lib").unlink()
    write(repo, "lib/deep/er/x.py", A)
    write(repo, "lib/deep/y.py", B)
    write(repo, "lib/z.py", A.replace("a()", "z()"))
    done = _json(repo, "adopt", "lib")
    assert done["deleted"] == ["lib"]
    assert set(_entities(repo)) == {
        "app.py::run",
        "lib/deep/er/x.py::a",
        "lib/deep/y.py::b",
        "lib/z.py::z",
    }
    _replay_agrees(repo)


def _proposed(repo: Path, server: ModelServer, path: str) -> str:
    server.add(f"Here:\n\n```python path={path}\ndef g():\n    return 5\n```\n")
    asked = tm_ask(repo, server, f"write {path}", "--json")
    assert asked.returncode == 0, asked.stderr
    proposals = json.loads(asked.stdout)["proposals"]
    assert [p["path"] for p in proposals] == [path]
    return str(proposals[0]["id"])


def test_accepting_a_file_below_a_tracked_file_the_user_made_a_directory(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """The accept records the file `lib` deleted (TOMBSTONED), and its record leaves, as
    `tm adopt` does: it exited 10 (UnnamedEntriesError), the write rolled back (#29)."""
    initialised({"app.py": APP, "lib": LIB})
    (repo / "lib").unlink()
    (repo / "lib").mkdir()  # not adopted yet
    pid = _proposed(repo, server, "lib/new.py")
    done = tm(repo, "accept", pid)
    assert done.returncode == 0, done.stderr
    assert "lib is no longer a file in the work tree" in done.stdout + done.stderr
    assert (repo / "lib/new.py").read_text() == "def g():\n    return 5\n"
    assert _left(repo) == {"lib": True, "lib/new.py": False}
    transitions = {(t["entity"], t["to"]) for t in _json(repo, "show")["transitions"]}
    assert ("lib::@file", "TOMBSTONED") in transitions
    assert set(_entities(repo)) == {"app.py::run", "lib/new.py::g"}
    _replay_agrees(repo)


def test_accepting_a_file_where_a_tracked_directory_was_removed(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"app.py": APP, "lib/a.py": A, "lib/b.py": B})
    shutil.rmtree(repo / "lib")
    pid = _proposed(repo, server, "lib")
    done = tm(repo, "accept", pid)
    assert done.returncode == 0, done.stderr
    assert (repo / "lib").read_text() == "def g():\n    return 5\n"
    assert _left(repo) == {"lib": False, "lib/a.py": True, "lib/b.py": True}
    transitions = {(t["entity"], t["to"]) for t in _json(repo, "show")["transitions"]}
    assert {("lib/a.py::a", "TOMBSTONED"), ("lib/b.py::b", "TOMBSTONED")} <= transitions
    assert set(_entities(repo)) == {"app.py::run", "lib::@file"}
    _replay_agrees(repo)


def test_accepting_a_file_below_a_tracked_file_still_on_disk_is_refused(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """The work tree still holds the file `lib`: tm never removes it; gate A says how."""
    initialised({"app.py": APP, "lib": LIB})
    pid = _proposed(repo, server, "lib/new.py")
    refused = tm(repo, "accept", pid)
    assert refused.returncode == 5, refused.stderr
    said = refused.stdout + refused.stderr
    assert "still holds the tracked file lib where lib/new.py would go" in said
    assert "`tm adopt lib`" in said
    assert (repo / "lib").read_text() == LIB
    assert _json(repo, "status")["pending_proposals"] == [pid]
    _replay_agrees(repo)


def test_blame_below_a_live_file_that_never_had_a_record_is_not_called_deleted(
    repo: Path, initialised: Initialise
) -> None:
    """`app.py/foo` never existed: "was deleted ... tm log shows when" sent the user to a log
    that shows nothing. A record that did leave (`lib/a.py`) is still called deleted."""
    initialised({"app.py": APP, "lib/a.py": A})
    never = tm(repo, "blame", "app.py/foo")
    assert never.returncode == 2
    assert "was deleted" not in never.stderr and "is not in the State Map" in never.stderr
    shutil.rmtree(repo / "lib")
    write(repo, "lib", LIB)
    assert tm(repo, "adopt", "lib").returncode == 0
    left = tm(repo, "blame", "lib/a.py")
    assert left.returncode == 2 and "lib/a.py was deleted" in left.stderr
    assert _json(repo, "log", "lib/a.py")


def _tombstoned(repo: Path) -> list[str]:
    """The entities the newest episode TOMBSTONED, once per transition."""
    return sorted(
        t["entity"] for t in _json(repo, "show")["transitions"] if t["to"] == "TOMBSTONED"
    )


def test_files_a_commit_deleted_and_a_file_displaced_are_recorded_deleted_once(
    repo: Path, initialised: Initialise
) -> None:
    """lib/a.py is both deleted by the commit and displaced by the file `lib` it added: one
    deletion each, however the step comes to it (`live_displaced(recorded=...)`)."""
    initialised({"app.py": APP, "lib/a.py": A, "lib/b.py": B})
    git(repo, "rm", "-rq", "lib")
    write(repo, "lib", LIB)
    git(repo, "add", "lib")
    git(repo, "commit", "-qm", "lib is a file now")
    assert _json(repo, "status")["clean"] is True
    assert _tombstoned(repo) == ["lib/a.py::a", "lib/b.py::b"]
    assert "recorded 2 deleted" in _json(repo, "show")["summary"]
    _replay_agrees(repo)


def test_two_accepted_files_below_a_former_file_record_it_deleted_once(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"app.py": APP, "lib": LIB})
    (repo / "lib").unlink()
    (repo / "lib").mkdir()
    server.add(
        "Here:\n\n```python path=lib/a.py\ndef g():\n    return 5\n```\n\n"
        "```python path=lib/b.py\ndef h():\n    return 6\n```\n"
    )
    asked = tm_ask(repo, server, "write lib/a.py and lib/b.py", "--json")
    assert asked.returncode == 0, asked.stderr
    ids = [str(p["id"]) for p in json.loads(asked.stdout)["proposals"]]
    assert len(ids) == 2
    done = tm(repo, "accept", *ids)
    assert done.returncode == 0, done.stderr
    assert _tombstoned(repo) == ["lib::@file"]
    assert _left(repo) == {"lib": True, "lib/a.py": False, "lib/b.py": False}
    _replay_agrees(repo)
