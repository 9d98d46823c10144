"""Notes shared between clones with plain git push/fetch, merged, kept by git gc."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, tm, write

SHARE = "refs/tinymem/*:refs/tinymem/*"


def _clone(origin: Path, where: Path) -> Path:
    git(origin.parent, "clone", "-q", str(origin), str(where))
    git(where, "config", "user.email", f"{where.name}@example.com")
    git(where, "config", "user.name", where.name)
    git(where, "fetch", "-q", "origin", SHARE)
    return where


@pytest.fixture
def people(tmp_path: Path) -> tuple[Path, Path]:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    write(seed, "a.py", "def a():\n    return 1\n")
    git(seed, "add", ".")
    git(seed, "commit", "-qm", "base")
    assert tm(seed, "init").returncode == 0
    assert tm(seed, "note", "add", "fact", "seeded", "--key", "seed").returncode == 0
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(origin))
    git(seed, "push", "-q", str(origin), SHARE)
    return _clone(origin, tmp_path / "alice"), _clone(origin, tmp_path / "bob")


def _add(where: Path, *args: str) -> str:
    proc = tm(where, "note", "add", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["note"]["id"])


def _notes(where: Path, *extra: str) -> dict[str, dict[str, Any]]:
    doc = json.loads(tm(where, "note", "list", "--json", *extra).stdout)
    return {n["id"]: n for n in doc["notes"]}


def test_project_notes_of_two_clones_are_merged(people: tuple[Path, Path]) -> None:
    alice, bob = people
    seed_id = next(iter(_notes(alice)))
    a_note = _add(alice, "decision", "alice's decision", "--on", "a.py::a")
    _add(alice, "constraint", "alice: python 3.11", "--key", "py")
    git(alice, "push", "-q", "origin", SHARE)
    alices = git(alice, "rev-parse", "refs/tinymem/notes").strip()
    b_note = _add(bob, "gotcha", "bob's gotcha")
    _add(bob, "constraint", "bob: python 3.12", "--key", "py")  # later: the key is bob's
    assert tm(bob, "note", "edit", seed_id, "--text", "seeded, edited by bob").returncode == 0
    # git refuses the non-fast-forward push: nothing of alice's is overwritten.
    git(bob, "push", "origin", "refs/tinymem/notes", check=False)
    assert git(bob, "ls-remote", "origin", "refs/tinymem/notes").split()[0] == alices
    git(bob, "fetch", "-q", "origin", "refs/tinymem/notes")
    proc = tm(bob, "note", "merge", "FETCH_HEAD", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["outcome"] == "merged" and a_note in doc["taken"]
    assert len(doc["displaced"]) == 1  # alice's older "py" note gave the key to bob's
    parents = git(bob, "log", "-1", "--format=%P", "refs/tinymem/notes").split()
    assert parents == [doc["ours"], doc["theirs"]]
    texts = {n["text"] for n in _notes(bob).values()}
    assert texts == {
        "seeded, edited by bob",
        "alice's decision",
        "bob's gotcha",
        "bob: python 3.12",
    }
    assert "alice: python 3.11" in {n["text"] for n in _notes(bob, "--all").values()}
    log = json.loads(tm(bob, "log", "--json").stdout)
    assert log[0]["kind"] == "note" and "merged project notes" in log[0]["summary"]
    git(bob, "push", "-q", "origin", "refs/tinymem/notes")
    # Alice catches up: a fast-forward.
    git(alice, "fetch", "-q", "origin", "refs/tinymem/notes")
    proc = tm(alice, "note", "merge", "FETCH_HEAD", "--json")
    assert json.loads(proc.stdout)["outcome"] == "fast-forward", proc.stderr
    assert set(_notes(alice)) == set(_notes(bob))
    assert b_note in _notes(alice)
    again = json.loads(tm(alice, "note", "merge", "FETCH_HEAD", "--json").stdout)
    assert again["outcome"] == "up to date" and again["episode"] is None


def test_branch_notes_travel_with_merge_ledger_and_rebuild_proves_them(
    people: tuple[Path, Path],
) -> None:
    alice, bob = people
    a_note = _add(alice, "plan", "alice's branch plan", "--branch")
    git(alice, "push", "-q", "origin", SHARE)
    b_note = _add(bob, "tried", "bob tried a cache", "--branch")
    git(bob, "fetch", "-q", "origin", "refs/tinymem/heads/main")
    proc = tm(bob, "merge-ledger", "FETCH_HEAD", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["outcome"] == "merged" and doc["notes"] == [a_note]
    assert {a_note, b_note} <= set(_notes(bob))
    assert json.loads(tm(bob, "rebuild", "--json").stdout)["ok"] is True


def test_git_gc_prune_now_keeps_every_note(people: tuple[Path, Path]) -> None:
    alice, _ = people
    project = _add(alice, "fact", "kept by gc", "--on", "a.py")
    branch = _add(alice, "fact", "kept by gc too", "--branch")
    removed = _add(alice, "fact", "soft-deleted, kept until tm note gc")
    assert tm(alice, "note", "rm", removed).returncode == 0
    git(alice, "reflog", "expire", "--expire=now", "--all")
    git(alice, "gc", "-q", "--prune=now")
    assert git(alice, "fsck", "--strict", "--no-dangling").strip() == ""
    notes = _notes(alice, "--all")
    assert {project, branch, removed} <= set(notes)
    assert notes[project]["drift"] == "current"
    assert tm(alice, "doctor").returncode == 0
