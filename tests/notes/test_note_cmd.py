"""`tm note`: every subcommand in and out, --json, and bad input refused in one sentence."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, tm
from tinymem.notes.merge import merge_notes
from tinymem.notes.model import Note


def _json(repo: Path, *args: str) -> Any:
    proc = tm(repo, "note", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _ledger(repo: Path) -> str:
    return git(repo, "for-each-ref", "refs/tinymem/")


def test_every_subcommand_answers_in_json(inited: Path) -> None:
    added = _json(inited, "add", "decision", "use httpx", "--on", "app.py::Client.get")
    note = added["note"]
    nid = note["id"]
    assert added["changed"] is True and added["episode"] == note["episode"]
    assert note["kind"] == "decision" and note["scope"] == "project" and note["drift"] == "current"
    assert note["anchors"][0]["target"] == "app.py::Client.get"
    assert set(note) >= {"id", "kind", "text", "anchors", "key", "scope", "created", "updated"}
    assert _json(inited, "list")["notes"] == [note]
    assert _json(inited, "show", nid) == note
    edited = _json(inited, "edit", nid, "--text", "use httpx everywhere")
    assert edited["changed"] and edited["note"]["text"] == "use httpx everywhere"
    removed = _json(inited, "rm", nid)
    assert removed["note"]["deleted"] is not None
    assert _json(inited, "list")["notes"] == []
    assert [n["id"] for n in _json(inited, "list", "--all")["notes"]] == [nid]
    assert _json(inited, "rm", nid)["changed"] is False  # removed already: no episode
    restored = _json(inited, "restore", nid)
    assert restored["changed"] and restored["note"]["deleted"] is None
    assert _json(inited, "confirm", nid)["changed"] is False  # nothing drifted
    assert _json(inited, "rm", nid)["changed"]
    assert _json(inited, "gc", "--older-than", "30d") == {"removed": []}
    gone = _json(inited, "gc", "--older-than", "0s")
    assert [n["id"] for n in gone["removed"]] == [nid]
    assert _json(inited, "list", "--all") == {"notes": []}
    kinds = [e["kind"] for e in json.loads(tm(inited, "log", "--json").stdout)]
    assert kinds == ["note"] * 6 + ["init"]  # add, edit, rm, restore, rm, gc; and the init


def test_list_filters_by_kind_and_anchor(inited: Path) -> None:
    on_get = _json(inited, "add", "gotcha", "g", "--on", "app.py::Client.get")["note"]["id"]
    on_file = _json(inited, "add", "fact", "f", "--on", "app.py")["note"]["id"]
    on_fetch = _json(inited, "add", "gotcha", "u", "--on", "app.py::fetch_user")["note"]["id"]
    loose = _json(inited, "add", "constraint", "c")["note"]["id"]

    def ids(*args: str) -> list[str]:
        return [n["id"] for n in _json(inited, "list", *args)["notes"]]

    assert ids("--kind", "gotcha") == [on_get, on_fetch]
    assert ids("--on", "app.py::Client") == [on_get, on_file]  # inside it; the whole file
    assert ids("--on", "app.py") == [on_get, on_file, on_fetch]
    assert ids("--on", "README.md") == []
    assert loose in ids()
    # --on is a path as typed, relative to the current directory.
    (inited / "sub").mkdir()
    proc = tm(inited / "sub", "note", "list", "--on", "../app.py::fetch_user", "--json")
    assert [n["id"] for n in json.loads(proc.stdout)["notes"]] == [on_file, on_fetch]


def test_the_human_output(inited: Path) -> None:
    proc = tm(inited, "note", "add", "constraint", "line one\nline two", "--key", "k", "--branch")
    assert proc.returncode == 0 and proc.stdout.startswith("Added note ")
    again = tm(inited, "note", "add", "constraint", "line one again", "--key", "k", "--branch")
    assert again.stdout.startswith("Updated note ")
    listed = tm(inited, "note", "list").stdout
    assert "constraint, branch, key k" in listed and "line one again" in listed
    nid = listed.split()[0]
    shown = tm(inited, "note", "show", nid).stdout
    assert "scope    branch" in shown and "source   user" in shown
    assert tm(inited, "note", "list", "--kind", "fact").stdout.startswith("No notes.")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["add", "whim", "x"], "unknown note kind 'whim'"),
        (["add", "fact", "  "], "a note needs text"),
        (["add", "fact", "x", "--on", "app.py::Nope.get"], "names no entity tm records"),
        (["add", "fact", "x", "--on", "nope.py"], "names no file tm records"),
        (["add", "fact", "x", "--key", ""], "--key was empty"),
        (["list", "--kind", "whim"], "unknown note kind"),
        (["show", "deadbeef"], "no note has the id 'deadbeef'"),
        (["edit", "deadbeef", "--text", "x"], "no note has the id"),
        (["rm", "deadbeef"], "no note has the id"),
        (["restore", "deadbeef"], "no note has the id"),
        (["confirm", "deadbeef"], "no note has the id"),
        (["gc", "--older-than", "soon"], "is no age"),
    ],
)
def test_bad_input_is_one_sentence_and_nothing_written(
    inited: Path, args: list[str], said: str
) -> None:
    before = _ledger(inited)
    proc = tm(inited, "note", *args)
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert _ledger(inited) == before


def test_a_key_of_the_other_scope_is_refused(inited: Path) -> None:
    _json(inited, "add", "constraint", "python 3.11", "--key", "py", "--branch")
    before = _ledger(inited)
    proc = tm(inited, "note", "add", "constraint", "python 3.12", "--key", "py")
    assert proc.returncode == 2 and "belongs to branch note" in proc.stderr
    assert _ledger(inited) == before


def test_edit_without_text_opens_the_editor_as_git_commit_does(inited: Path) -> None:
    nid = _json(inited, "add", "plan", "split app.py")["note"]["id"]
    editor = inited.parent / "editor.sh"
    editor.write_text(
        '#!/bin/sh\ngrep -v "^#" "$1" | sed "s/split/merge/" > "$1.new"\nmv "$1.new" "$1"\n'
    )
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    proc = tm(inited, "note", "edit", nid, env={"GIT_EDITOR": str(editor)})
    assert proc.returncode == 0, proc.stderr
    assert _json(inited, "show", nid)["text"] == "merge app.py"
    emptying = inited.parent / "empty.sh"
    emptying.write_text('#!/bin/sh\n: > "$1"\n')
    emptying.chmod(emptying.stat().st_mode | stat.S_IXUSR)
    before = _ledger(inited)
    proc = tm(inited, "note", "edit", nid, env={"GIT_EDITOR": str(emptying)})
    assert proc.returncode == 2 and "left empty" in proc.stderr
    assert _ledger(inited) == before
    assert not os.path.exists(inited / ".git" / "NOTE_EDITMSG")


def _n(
    nid: str, text: str, updated: str, key: str | None = None, deleted: str | None = None
) -> Note:
    return Note(nid, "fact", text, (), key, "project", "t0", updated, deleted, "user", "e")


def test_merge_rules() -> None:
    base = {"a": _n("a", "a0", "t1"), "b": _n("b", "b0", "t1"), "c": _n("c", "c0", "t1")}
    ours = {"a": _n("a", "a-ours", "t3"), "b": base["b"], "c": base["c"], "o": _n("o", "o", "t2")}
    theirs = {
        "a": _n("a", "a-theirs", "t2"),
        "b": _n("b", "b-theirs", "t2"),
        "t": _n("t", "t", "t2"),
    }
    # a: both changed, ours is newer; b: only theirs changed; c: gc'd there; t: new there.
    got = merge_notes(base, ours, theirs, "t9")
    assert sorted(got.taken) == ["b", "t"]
    assert [n.id for n in got.removed] == ["c"]
    assert {n.id: n.text for n in got.written} == {"b": "b-theirs", "t": "t"}
    theirs["a"] = _n("a", "a-theirs", "t4")
    assert "a" in merge_notes(base, ours, theirs, "t9").taken  # now theirs is newer
    # The same key on both sides: the newer note keeps it, the other is soft-deleted.
    clash = merge_notes(
        {}, {"x": _n("x", "x", "t1", key="k")}, {"y": _n("y", "y", "t2", key="k")}, "t9"
    )
    assert clash.displaced == ["x"]
    assert {n.id: n.deleted for n in clash.written} == {"y": None, "x": "t9"}


def test_help_teaches(inited: Path) -> None:
    proc = tm(inited, "note", "--help")
    assert proc.returncode == 0
    for sub in ("add", "list", "show", "edit", "rm", "restore", "confirm", "gc", "merge"):
        assert sub in proc.stdout
    assert "tm note add constraint" in tm(inited, "note", "add", "--help").stdout


def test_show_names_the_notes_an_episode_wrote(inited: Path) -> None:
    added = _json(inited, "add", "fact", "shown", "--branch")
    doc = json.loads(tm(inited, "show", added["episode"], "--json").stdout)
    nid = added["note"]["id"]
    record = git(inited, "rev-parse", f"refs/tinymem/heads/main:notes/{nid}.json").strip()
    assert doc["kind"] == "note" and doc["notes"] == [
        {"id": nid, "scope": "branch", "record": record}
    ]
