"""A tm killed between moving the notes ref and committing its episode (#27): the next command
puts the ref back, so no note stands that no episode records, and `tm rebuild` proves the
notes again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import PY_APP, git, tm, tm_patched, write

JOURNAL = Path(".git") / "tinymem" / "refs-moving.json"


def _init(repo: Path) -> None:
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    assert tm(repo, "init", "-q").returncode == 0


def _note_add_dying(repo: Path, text: str) -> subprocess.CompletedProcess[str]:
    """`tm note add` in a process that dies once the notes ref moved, before the ledger's."""
    patch = """
    import tinymem.ledger as m
    m._commit = lambda *a, **k: os._exit(9)
    """
    return tm_patched(repo, patch, "note", "add", "decision", text)


def _notes(repo: Path) -> list[str]:
    proc = tm(repo, "note", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    return [n["text"] for n in json.loads(proc.stdout)["notes"]]


def test_a_note_whose_episode_was_never_committed_is_put_back(repo: Path) -> None:
    _init(repo)
    assert tm(repo, "note", "add", "constraint", "keep the API stable").returncode == 0
    notes_tip = git(repo, "rev-parse", "refs/tinymem/notes").strip()
    ledger_tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()

    killed = _note_add_dying(repo, "use retries")
    assert killed.returncode == 9, killed.stderr
    # Killed in the window: the notes ref moved, the ledger did not, the record says so.
    assert git(repo, "rev-parse", "refs/tinymem/notes").strip() != notes_tip
    assert git(repo, "rev-parse", "refs/tinymem/heads/main").strip() == ledger_tip
    assert (repo / JOURNAL).exists()

    listed = tm(repo, "note", "list", "--json")
    assert "put back refs/tinymem/notes" in listed.stderr
    assert [n["text"] for n in json.loads(listed.stdout)["notes"]] == ["keep the API stable"]
    assert git(repo, "rev-parse", "refs/tinymem/notes").strip() == notes_tip
    assert not (repo / JOURNAL).exists()
    rebuilt = tm(repo, "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr

    # And the note can be written after all, in an episode of its own.
    assert tm(repo, "note", "add", "decision", "use retries").returncode == 0
    assert sorted(_notes(repo)) == ["keep the API stable", "use retries"]
    assert tm(repo, "rebuild").returncode == 0


def test_a_record_left_after_the_ledger_moved_is_only_removed(repo: Path) -> None:
    """Killed after the ledger commit, before the record's removal: the episode stands."""
    _init(repo)
    patch = """
    import tinymem.refjournal as j
    j.clear = lambda repo: os._exit(9)
    """
    killed = tm_patched(repo, patch, "note", "add", "gotcha", "the cache is per process")
    assert killed.returncode == 9, killed.stderr
    assert (repo / JOURNAL).exists()
    notes_tip = git(repo, "rev-parse", "refs/tinymem/notes").strip()

    listed = tm(repo, "note", "list", "--json")
    assert listed.stderr == ""
    assert [n["text"] for n in json.loads(listed.stdout)["notes"]] == ["the cache is per process"]
    assert git(repo, "rev-parse", "refs/tinymem/notes").strip() == notes_tip
    assert not (repo / JOURNAL).exists()
    assert tm(repo, "rebuild").returncode == 0


def test_another_writers_record_is_left_alone_while_it_holds_the_lock(repo: Path) -> None:
    """The record of a tm that is still writing (it holds `ledger.lock`) is not settled."""
    from tinymem import refjournal
    from tinymem.reflock import updating
    from tinymem.repository import open_repo

    _init(repo)
    handle = open_repo(str(repo))
    tip = handle.state_tip()
    moving = refjournal.Moving(handle.state_ref, tip, "e" * 12, (("refs/tinymem/x", None, tip),))
    refjournal.record(handle, moving)
    with updating(handle):
        assert refjournal.recover_if_left(handle) is None
        assert (repo / JOURNAL).exists()
    # Released: its writer is gone, the ledger never moved, the ref it created goes.
    assert git(repo, "update-ref", "refs/tinymem/x", str(tip), check=False) == ""
    assert refjournal.recover_if_left(handle) is not None
    assert git(repo, "rev-parse", "-q", "--verify", "refs/tinymem/x", check=False) == ""
    assert not (repo / JOURNAL).exists()
