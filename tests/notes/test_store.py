"""The notes store: where notes live in git, and the episodes that write them."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import git, tm
from tinymem.errors import UsageError
from tinymem.ledger import current, history
from tinymem.notes.model import Anchor, Note
from tinymem.notes.store import (
    NOTES_REF,
    add_note,
    confirm_note,
    edit_note,
    find_note,
    gc_notes,
    parse_age,
    read_notes,
    remove_note,
    restore_note,
)
from tinymem.repository import Repo


def _episodes(store: Repo) -> list[tuple[str, str]]:
    return [(ep.kind, ep.summary) for _, ep in history(store)]


def test_a_project_note_is_a_json_file_on_its_own_ref_and_one_episode(
    store: Repo, inited: Path
) -> None:
    note = add_note(store, "decision", "use httpx, not requests", on=["app.py::Client.get"])
    listed = read_notes(store)
    assert [n.id for n in listed] == [note.id]
    assert note.scope == "project" and note.source == "user"
    anchor = note.anchors[0]
    assert anchor.target == "app.py::Client.get"
    view = current(store)
    meta = view.meta("app.py")
    assert meta is not None
    assert anchor.artifact == meta.entities["Client.get"].artifact
    raw = json.loads(git(inited, "show", f"{NOTES_REF}:{note.id}.json"))
    assert raw["text"] == "use httpx, not requests" and raw["kind"] == "decision"
    kind, summary = _episodes(store)[0]
    assert kind == "note" and note.id in summary
    ep = next(ep for _, ep in history(store))
    assert ep.id == note.episode
    assert ep.notes[note.id]["scope"] == "project"
    # The notes commit names the episode that wrote it.
    assert f"Tinymem-Episode: {ep.id}" in git(inited, "log", "-1", "--format=%B", NOTES_REF)


def test_a_branch_note_lives_in_the_ledger_tree_and_rebuild_proves_it(
    store: Repo, inited: Path
) -> None:
    note = add_note(store, "gotcha", "the tests need a network", scope="branch")
    assert note.scope == "branch"
    assert git(inited, "show", f"refs/tinymem/heads/main:notes/{note.id}.json")
    assert git(inited, "rev-parse", "-q", "--verify", NOTES_REF, check=False) == ""
    remove_note(store, note.id)
    gc_notes(store, timedelta(0), now=datetime.now(UTC) + timedelta(seconds=1))
    add_note(store, "fact", "kept", scope="branch")
    proc = tm(inited, "rebuild", "--json")
    assert json.loads(proc.stdout)["ok"] is True, proc.stdout


def test_rebuild_notices_a_branch_note_no_episode_recorded(store: Repo, inited: Path) -> None:
    note = add_note(store, "fact", "one", scope="branch")
    tip = git(inited, "rev-parse", "refs/tinymem/heads/main").strip()
    # Forge a commit whose notes/ entry changed behind the ledger's back.
    forged = note.with_changes(text="forged")
    _forge(inited, tip, f"notes/{note.id}.json", forged.to_bytes())
    doc = json.loads(tm(inited, "rebuild", "--json").stdout)
    assert doc["ok"] is False
    assert any(f"notes/{note.id}.json" in d for d in doc["differences"])


def _forge(repo: Path, tip: str, path: str, data: bytes) -> None:
    env = {**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "forge-index")}

    def run(*args: str, stdin: bytes | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=repo, env=env, input=stdin, capture_output=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.decode().strip()

    blob = run("hash-object", "-w", "--stdin", stdin=data)
    run("read-tree", tip)
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    commit = run("commit-tree", run("write-tree"), "-p", tip, "-m", "forged")
    run("update-ref", "refs/tinymem/heads/main", commit, tip)


def test_the_same_key_again_updates_the_note_in_one_episode(store: Repo) -> None:
    first = add_note(store, "constraint", "python 3.8", key="py")
    before = len(_episodes(store))
    second = add_note(store, "constraint", "python 3.11 or later", key="py")
    assert second.id == first.id
    assert second.created == first.created and second.updated > first.updated
    assert [n.text for n in read_notes(store)] == ["python 3.11 or later"]
    assert len(_episodes(store)) == before + 1


def test_a_key_of_the_other_scope_is_refused_and_nothing_written(store: Repo) -> None:
    add_note(store, "constraint", "python 3.11", key="py")
    before = _episodes(store)
    with pytest.raises(UsageError, match="belongs to project note"):
        add_note(store, "constraint", "python 3.12", key="py", scope="branch")
    assert _episodes(store) == before


@pytest.mark.parametrize(
    ("kind", "text", "on", "said"),
    [
        ("whim", "x", (), "unknown note kind"),
        ("fact", "   \n", (), "needs text"),
        ("fact", "x", ("app.py::nope",), "names no entity"),
        ("fact", "x", ("missing.py",), "names no file"),
        ("fact", "x", ("app.py::",), "names no entity or file"),
    ],
)
def test_bad_input_is_refused_with_nothing_written(
    store: Repo, kind: str, text: str, on: tuple[str, ...], said: str
) -> None:
    before = _episodes(store)
    with pytest.raises(UsageError, match=said):
        add_note(store, kind, text, on=on)
    assert _episodes(store) == before
    assert read_notes(store, include_deleted=True) == []


def test_soft_delete_restore_and_gc_after_the_retention(store: Repo) -> None:
    note = add_note(store, "tried", "caching in a dict: leaked memory")
    removed = remove_note(store, note.id)
    assert removed.deleted is not None
    assert read_notes(store) == []
    assert [n.id for n in read_notes(store, include_deleted=True)] == [note.id]
    restored = restore_note(store, note.id[:4])  # a unique prefix names it
    assert restored.live and read_notes(store)[0].text == note.text
    remove_note(store, note.id)
    deleted_at = datetime.strptime(
        read_notes(store, include_deleted=True)[0].deleted or "", "%Y-%m-%dT%H:%M:%S.%fZ"
    ).replace(tzinfo=UTC)
    # Inside the retention: kept.
    assert gc_notes(store, timedelta(days=30), now=deleted_at + timedelta(days=29)) == []
    assert len(read_notes(store, include_deleted=True)) == 1
    gone = gc_notes(store, timedelta(days=30), now=deleted_at + timedelta(days=31))
    assert [n.id for n in gone] == [note.id]
    assert read_notes(store, include_deleted=True) == []
    with pytest.raises(UsageError, match="no note has the id"):
        restore_note(store, note.id)


def test_gc_leaves_live_notes_alone(store: Repo) -> None:
    add_note(store, "fact", "live")
    before = _episodes(store)
    assert gc_notes(store, timedelta(0), now=datetime.now(UTC) + timedelta(days=400)) == []
    assert _episodes(store) == before  # nothing to remove: no episode


def test_edit_and_a_change_that_changes_nothing(store: Repo) -> None:
    note = add_note(store, "plan", "split the module")
    edited = edit_note(store, note.id, text="split the module in two")
    assert edited.text == "split the module in two" and edited.updated > note.updated
    before = _episodes(store)
    assert edit_note(store, note.id, text="split the module in two").updated == edited.updated
    assert _episodes(store) == before
    with pytest.raises(UsageError, match="needs text"):
        edit_note(store, note.id, text="")


def test_unknown_and_ambiguous_ids() -> None:
    notes = [
        Note("ab12", "fact", "x", (), None, "project", "t", "t", None, "user", "e"),
        Note("ab34", "fact", "y", (), None, "project", "t", "t", None, "user", "e"),
    ]
    with pytest.raises(UsageError, match="ambiguous"):
        find_note(notes, "ab")
    with pytest.raises(UsageError, match="no note has"):
        find_note(notes, "cd")
    assert find_note(notes, "AB34").text == "y"


def test_confirm_re_anchors_to_the_current_version(store: Repo, inited: Path) -> None:
    note = add_note(store, "gotcha", "get retries", on=["app.py::Client.get"])
    text = (inited / "app.py").read_text().replace("return path\n", "return path + '/'\n")
    (inited / "app.py").write_text(text)
    assert tm(inited, "adopt", "app.py").returncode == 0
    confirmed = confirm_note(store, note.id)
    meta = current(store).meta("app.py")
    assert meta is not None
    assert confirmed.anchors == (
        Anchor("app.py::Client.get", meta.entities["Client.get"].artifact),
    )
    assert confirmed.anchors != note.anchors


def test_parse_age() -> None:
    assert parse_age("30d") == timedelta(days=30)
    assert parse_age("12h") == timedelta(hours=12)
    assert parse_age("2w") == timedelta(days=14)
    assert parse_age("7") == timedelta(days=7)
    with pytest.raises(UsageError):
        parse_age("soon")


def test_a_notes_ref_moved_meanwhile_redoes_the_episode_on_its_tip(store: Repo) -> None:
    from tinymem.gitobjects import ObjectWriter
    from tinymem.ledger import Draft, Episode, commit_episode
    from tinymem.notes.store import note_edits
    from tinymem.statemap import StateView

    calls: list[int] = []

    def operation(view: StateView, writer: ObjectWriter) -> Draft:
        episode = Episode(kind="note", summary="race")
        mine = Note("0000aaaa", "fact", "mine", (), None, "project", "t", "t", None, "user", "")
        draft = Draft(episode=episode)
        note_edits(store, writer, episode, [mine]).include(draft)
        if not calls:
            add_note(store, "fact", "theirs")  # another process, between read and commit
        calls.append(1)
        return draft

    commit_episode(store, operation)
    assert len(calls) == 2
    assert sorted(n.text for n in read_notes(store)) == ["mine", "theirs"]


def test_a_ledger_commit_that_fails_puts_the_notes_ref_back(
    store: Repo, inited: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tinymem.ledger

    add_note(store, "fact", "before")
    tip = git(inited, "rev-parse", NOTES_REF).strip()

    def broken(*args: object) -> str:
        raise OSError("disk full")

    monkeypatch.setattr(tinymem.ledger, "_commit", broken)
    with pytest.raises(OSError, match="disk full"):
        add_note(store, "fact", "after")
    assert git(inited, "rev-parse", NOTES_REF).strip() == tip
    monkeypatch.undo()
    assert [n.text for n in read_notes(store)] == ["before"]


def test_writing_a_removed_notes_key_again_brings_it_back(store: Repo) -> None:
    first = add_note(store, "constraint", "python 3.8", key="py")
    remove_note(store, first.id)
    again = add_note(store, "constraint", "python 3.12", key="py")
    assert again.id == first.id and again.live and again.text == "python 3.12"
    assert [n.id for n in read_notes(store)] == [first.id]


def test_doctor_names_a_note_that_cannot_be_read(store: Repo, inited: Path) -> None:
    note = add_note(store, "fact", "fine")
    assert tm(inited, "doctor").returncode == 0
    tip = git(inited, "rev-parse", NOTES_REF).strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(inited / ".git" / "forge-index")}

    def run(*args: str, stdin: bytes | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=inited, env=env, input=stdin, capture_output=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.decode().strip()

    blob = run("hash-object", "-w", "--stdin", stdin=b"{not json")
    run("read-tree", tip)
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},{note.id}.json")
    run("update-ref", NOTES_REF, run("commit-tree", run("write-tree"), "-p", tip, "-m", "x"), tip)
    doc = json.loads(tm(inited, "doctor", "--json").stdout)
    (finding,) = [c for c in doc["checks"] if c["check"] == "notes"]
    assert finding["status"] == "fail" and "unreadable note record" in finding["message"]
    listed = tm(inited, "note", "list")
    assert listed.returncode == 13 and "unreadable note record" in listed.stderr
