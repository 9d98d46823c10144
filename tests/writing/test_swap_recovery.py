"""An undo across a file and a directory of one name, killed after its writes and before its
ledger commit, whose file the user then edited: the next tm command rolled back into the
user's file (`lib/x.py` through a file `lib`, or the file `lib` onto a directory) and failed
with exit 11, on every command and in the hook, since the intent record stayed. The text that
cannot come back is now kept, named by blob, and the record is cleared (#29)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import Initialise, git, tm, write
from tinymem.ledger import new_episode_id
from tinymem.repository import open_repo
from tinymem.writing import journal
from tinymem.writing.journal import IntendedFile, Intent

APP = "def run():\n    return 0\n"
A = "def a():\n    return 1\n"
LIB = "def f():\n    return 1\n"
EDIT = "# the user's edit\n"


def _blob(repo: Path, text: str) -> str:
    return str(open_repo(str(repo)).git.create_blob(text.encode()))


def _reachable(repo: Path, blob: str) -> None:
    """The text named is the ledger's (`git gc` keeps it): the State Map the undo started from."""
    objects = git(repo, "rev-list", "--objects", "--all")
    assert blob in {line.split(" ")[0] for line in objects.splitlines()}


def _adopted_below_a_file(repo: Path, initialised: Initialise) -> str:
    """`lib` was a file; it is now the directory of `lib/x.py`, adopted: that episode's id."""
    initialised({"app.py": APP, "lib": LIB})
    (repo / "lib").unlink()
    write(repo, "lib/x.py", A)
    done = tm(repo, "adopt", "lib/x.py", "--json")
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["episode"])


def _interrupted_undo(repo: Path, files: list[IntendedFile]) -> None:
    """The intent record `transaction.write_all` writes before its first file (removals
    first), the ledger untouched: as a kill before the ledger commit leaves it."""
    store = open_repo(str(repo))
    episode = new_episode_id()
    journal.write(
        store,
        Intent(
            episode=episode,
            tip=store.state_tip(store.state_ref),
            tag=f"tm-{episode}",
            files=files,
            ref=store.state_ref,
            kind="undo",
        ),
    )


def _recovered(repo: Path) -> str:
    """The next commands (and the hook's check) run, and what the first one said."""
    status = tm(repo, "status")
    assert status.returncode == 0, status.stderr
    assert not Path(journal.intent_path(open_repo(str(repo)))).exists()
    assert tm(repo, "doctor").returncode in (0, 1)
    assert tm(repo, "hook", "run", "pre-commit").returncode == 0
    return status.stderr


def test_a_file_the_user_saved_where_the_undo_wrote_it_blocks_nothing(
    repo: Path, initialised: Initialise
) -> None:
    _adopted_below_a_file(repo, initialised)
    # The undo removed lib/x.py and wrote the file `lib`; killed before its ledger commit.
    _interrupted_undo(
        repo,
        [
            IntendedFile("lib/x.py", _blob(repo, A), None, False),
            IntendedFile("lib", None, _blob(repo, LIB), None),
        ],
    )
    shutil.rmtree(repo / "lib")
    write(repo, "lib", LIB + EDIT)  # the user's editor saves `lib`
    said = _recovered(repo)
    assert (repo / "lib").read_text() == LIB + EDIT
    blob = _blob(repo, A)
    assert "lib/x.py could not get its text back" in said and blob in said, said
    assert "changed since, left as they are: lib, lib/x.py" in said, said
    assert git(repo, "cat-file", "-p", blob) == A
    _reachable(repo, blob)


def test_a_directory_the_user_filled_where_the_redo_wrote_it_blocks_nothing(
    repo: Path, initialised: Initialise
) -> None:
    episode = _adopted_below_a_file(repo, initialised)
    assert tm(repo, "undo", episode).returncode == 0  # `lib` is the file again
    # The redo removed the file `lib` and wrote lib/x.py; killed before its ledger commit.
    _interrupted_undo(
        repo,
        [
            IntendedFile("lib", _blob(repo, LIB), None, False),
            IntendedFile("lib/x.py", None, _blob(repo, A), None),
        ],
    )
    (repo / "lib").unlink()
    write(repo, "lib/x.py", A + EDIT)  # the user's editor saves lib/x.py
    said = _recovered(repo)
    assert (repo / "lib/x.py").read_text() == A + EDIT
    blob = _blob(repo, LIB)
    assert "lib could not get its text back" in said and blob in said, said
    assert git(repo, "cat-file", "-p", blob) == LIB
    _reachable(repo, blob)
