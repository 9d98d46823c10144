"""`tm rebuild` proves the project notes: `refs/tinymem/notes` re-derived from the episodes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import git, tm
from tests.notes.test_sharing import SHARE, _add, people  # noqa: F401 (a fixture)
from tinymem.notes.store import NOTES_REF


def _rebuild(where: Path) -> tuple[int, dict[str, Any]]:
    proc = tm(where, "rebuild", "--json")
    return proc.returncode, json.loads(proc.stdout)


def _forge(where: Path, note_id: str, text: str, *, amend: bool = False) -> str:
    """Change one note's JSON by hand: a commit on the notes ref (on top of the tip, or in
    its place with the tip's own message), as git alone would make it."""
    tip = git(where, "rev-parse", NOTES_REF).strip()
    record = json.loads(git(where, "cat-file", "-p", f"{tip}:{note_id}.json"))
    record["text"] = text
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=where,
        input=json.dumps(record),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(where / ".git" / "forge-index")}

    def run(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=where, env=env, capture_output=True, text=True, check=True
        ).stdout

    run("read-tree", tip)
    run("update-index", "--cacheinfo", f"100644,{blob},{note_id}.json")
    tree = run("write-tree").strip()
    if amend:
        message = git(where, "log", "-1", "--format=%B", tip)
        parents = git(where, "log", "-1", "--format=%P", tip).split()
    else:
        message, parents = "fix a typo", [tip]
    forged = run("commit-tree", tree, *(a for p in parents for a in ("-p", p)), "-m", message)
    git(where, "update-ref", NOTES_REF, forged.strip())
    return tip


def test_intact_project_notes_prove_clean(inited: Path) -> None:
    assert _rebuild(inited) == (
        0,
        {
            "ok": True,
            "episodes": 1,
            "differences": [],
            "project_notes": {"ok": True, "tip": None, "episodes": 0, "proven": None},
        },
    )
    kept = _add(inited, "decision", "use httpx", "--on", "app.py::Client.get")
    _add(inited, "constraint", "python 3.11", "--key", "py")
    _add(inited, "constraint", "python 3.12", "--key", "py")  # an upsert
    gone = _add(inited, "fact", "soon gone")
    _add(inited, "plan", "a branch plan", "--branch")
    assert tm(inited, "note", "edit", kept, "--text", "use httpx, async").returncode == 0
    assert tm(inited, "note", "rm", gone).returncode == 0
    assert tm(inited, "note", "restore", gone).returncode == 0
    assert tm(inited, "note", "rm", gone).returncode == 0
    assert tm(inited, "note", "gc", "--older-than", "0s").returncode == 0  # gone for good
    # A project note written on another branch's ledger moves the same ref.
    git(inited, "switch", "-q", "-c", "side")
    _add(inited, "gotcha", "written on side")
    git(inited, "switch", "-q", "main")
    code, doc = _rebuild(inited)
    assert code == 0, doc["differences"]
    tip = git(inited, "rev-parse", NOTES_REF).strip()
    assert doc["project_notes"] == {"ok": True, "tip": tip, "episodes": 10, "proven": tip}
    proc = tm(inited, "rebuild")
    assert "10 note episode(s) reproduce the project notes" in proc.stdout


def test_a_note_changed_by_hand_on_the_ref_is_reported(inited: Path) -> None:
    note = _add(inited, "decision", "use httpx", "--on", "app.py::Client.get")
    _add(inited, "constraint", "python 3.11")
    before = _forge(inited, note, "use urllib3")
    code, doc = _rebuild(inited)
    assert code == 1 and doc["ok"] is False and doc["project_notes"]["ok"] is False
    assert doc["project_notes"]["proven"] == before
    diffs = "\n".join(doc["differences"])
    assert "was written by no episode of any ledger" in diffs
    assert f"{note}.json: stored" in diffs
    assert f"git update-ref {NOTES_REF} {before}" in diffs
    proc = tm(inited, "rebuild")
    assert proc.returncode == 1 and "MISMATCH" in proc.stdout and f"{note}.json" in proc.stdout
    # The way back rebuild names: the ref moved back, the notes prove clean again.
    git(inited, "update-ref", NOTES_REF, before)
    assert _rebuild(inited)[0] == 0


def test_a_tip_replaced_under_its_own_episode_is_reported(inited: Path) -> None:
    first = _add(inited, "decision", "use httpx")
    _add(inited, "fact", "the second note")
    before = _forge(inited, first, "use urllib3", amend=True)  # same message, same parent
    code, doc = _rebuild(inited)
    assert code == 1
    diffs = "\n".join(doc["differences"])
    assert f"{first}.json: stored" in diffs
    assert "written by no episode" not in diffs  # its message names a real episode
    parent = git(inited, "rev-parse", f"{before}^").strip()
    assert doc["project_notes"]["proven"] == parent


def test_notes_merged_and_fast_forwarded_between_clones_prove_clean(
    people: tuple[Path, Path],  # noqa: F811
) -> None:
    alice, bob = people
    _add(alice, "decision", "alice's decision", "--on", "a.py::a")
    _add(alice, "constraint", "alice: python 3.11", "--key", "py")
    git(alice, "push", "-q", "origin", SHARE)
    _add(bob, "gotcha", "bob's gotcha")
    _add(bob, "constraint", "bob: python 3.12", "--key", "py")
    git(bob, "fetch", "-q", "origin", NOTES_REF)
    assert tm(bob, "note", "merge", "FETCH_HEAD").returncode == 0
    code, doc = _rebuild(bob)
    assert code == 0, doc["differences"]
    git(bob, "push", "-q", "origin", NOTES_REF)
    # Alice fast-forwards to bob's merge, whose commits no ledger of hers wrote.
    git(alice, "fetch", "-q", "origin", NOTES_REF)
    assert tm(alice, "note", "merge", "FETCH_HEAD").returncode == 0
    code, doc = _rebuild(alice)
    assert code == 0, doc["differences"]
    _add(alice, "fact", "after the fast-forward")
    assert _rebuild(alice)[0] == 0
    # Bob's commits put in place by git alone, with no `tm note merge`: no episode of
    # alice's moved her ref there.
    _add(bob, "fact", "bob again")
    git(bob, "push", "-q", "origin", NOTES_REF)
    git(alice, "fetch", "-q", "origin", f"+{NOTES_REF}:{NOTES_REF}")
    code, doc = _rebuild(alice)
    assert code == 1 and "written by no episode" in "\n".join(doc["differences"])


def test_doctor_reports_the_notes_ref_a_hand_moved(inited: Path) -> None:
    note = _add(inited, "decision", "use httpx")
    assert tm(inited, "doctor").returncode == 0
    before = _forge(inited, note, "use urllib3")
    proc = tm(inited, "doctor", "--json")
    assert proc.returncode == 1
    checks = {c["check"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["notes"]["status"] == "fail"
    assert f"git update-ref {NOTES_REF} {before}" in checks["notes"]["fix"]
    assert any(f"{note}.json" in d for d in checks["notes"]["details"])


def test_a_clones_fast_forward_brought_in_by_merge_ledger_is_one_route_of_two(
    people: tuple[Path, Path],  # noqa: F811
) -> None:
    """Bob's fast-forward to alice's notes merge, brought into alice's ledger by `tm
    merge-ledger`, starts from bob's note written on a branch whose ledger alice never
    fetched; alice's own merge episode explains the same commit from her side. Taking the
    fast-forward's route reported a false mismatch; any complete route proves the ref."""
    alice, bob = people
    git(bob, "switch", "-q", "-c", "side")
    _add(bob, "fact", "bob, on side")
    git(bob, "switch", "-q", "main")
    git(bob, "push", "-q", "origin", NOTES_REF)
    _add(alice, "fact", "alice on main")
    git(alice, "fetch", "-q", "origin", NOTES_REF)
    merged = json.loads(tm(alice, "note", "merge", "FETCH_HEAD", "--json").stdout)
    assert merged["outcome"] == "merged"
    git(alice, "push", "-q", "origin", NOTES_REF)
    git(bob, "fetch", "-q", "origin", NOTES_REF)
    forward = json.loads(tm(bob, "note", "merge", "FETCH_HEAD", "--json").stdout)
    assert forward["outcome"] == "fast-forward"
    git(bob, "push", "-q", "origin", "refs/tinymem/heads/main:refs/bob/ledger")
    git(alice, "fetch", "-q", "origin", "refs/bob/ledger")
    proc = tm(alice, "merge-ledger", "FETCH_HEAD", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "refs/tinymem/heads/side" not in git(alice, "for-each-ref", "refs/tinymem/")
    code, doc = _rebuild(alice)
    assert code == 0, doc["differences"]
