"""`tm merge-ledger` where one ledger recorded a directory turned into a file of its name, or
the reverse: the merge read a directory of records as a record (exit 10, KeyError "is not a
blob"), and kept live the records theirs took out of the State Map. Now a record theirs
took out leaves ours too (recorded deleted first), and where ours changed the records a
file taken from theirs displaces, the work tree decides (#29)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, init_repo, tm, write

SHARE = "refs/tinymem/*:refs/tinymem/*"
APP = "def run():\n    return 0\n"
A = "def a():\n    return 1\n"
LIB = "def f():\n    return 1\n"


def _people(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    init_repo(seed, files)
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(origin))
    git(seed, "push", "-q", str(origin), SHARE)
    out = []
    for name in ("alice", "bob"):
        where = tmp_path / name
        git(tmp_path, "clone", "-q", str(origin), str(where))
        git(where, "config", "user.email", f"{name}@example.com")
        git(where, "config", "user.name", name)
        git(where, "fetch", "-q", "origin", SHARE)
        out.append(where)
    return out[0], out[1]


def _swap_and_push(bob: Path, gone: str, new: str, text: str) -> None:
    """Bob's commit turns `gone` into `new` (the other kind), recorded by his next tm."""
    git(bob, "rm", "-rq", gone)
    write(bob, new, text)
    git(bob, "add", "-A")
    git(bob, "commit", "-qm", f"{gone} -> {new}")
    assert tm(bob, "status").returncode == 0
    git(bob, "push", "-q", "origin", "main", SHARE)


def _adopt_commit(where: Path, rel: str, text: str) -> None:
    write(where, rel, text)
    proc = tm(where, "adopt", rel)
    assert proc.returncode == 0, proc.stderr
    git(where, "commit", "-qam", f"{where.name}: {rel}")


def _merge(where: Path) -> subprocess.CompletedProcess[str]:
    git(where, "fetch", "-q", "origin", "refs/tinymem/heads/main")
    return tm(where, "merge-ledger", "FETCH_HEAD", "--json")


def _json(where: Path, *argv: str) -> Any:
    done = tm(where, *argv, "--json")
    assert done.returncode == 0, (argv, done.stderr)
    return json.loads(done.stdout)


def _replay_agrees(where: Path) -> None:
    rebuilt = tm(where, "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    doctor = _json(where, "doctor")
    failed = [f for f in doctor["checks"] if f["status"] == "fail"]
    assert not failed, failed


def _live(where: Path) -> set[str]:
    return {e["entity"] for e in _json(where, "state")["entities"]}


def _left(where: Path) -> dict[str, bool]:
    return {f["path"]: f["left"] for f in _json(where, "show")["files"]}


@pytest.fixture
def lib_dir(tmp_path: Path) -> tuple[Path, Path]:
    return _people(tmp_path, {"app.py": APP, "lib/a.py": A})


def test_their_directory_turned_file_merged_before_the_pull(lib_dir: tuple[Path, Path]) -> None:
    alice, bob = lib_dir
    _swap_and_push(bob, "lib", "lib", LIB)
    _adopt_commit(alice, "app.py", APP + "# alice\n")
    proc = _merge(alice)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["outcome"] == "merged" and sorted(doc["taken"]) == ["lib", "lib/a.py"]
    assert _left(alice) == {"lib": False, "lib/a.py": True}
    transitions = {(t["entity"], t["to"]) for t in _json(alice, "show")["transitions"]}
    assert ("lib/a.py::a", "TOMBSTONED") in transitions
    assert _live(alice) == {"app.py::run", "lib::@file"}
    assert tm(alice, "rebuild").returncode == 0
    git(alice, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert _json(alice, "status")["clean"] is True
    _replay_agrees(alice)


def test_their_file_turned_directory_merged_after_the_pull(tmp_path: Path) -> None:
    alice, bob = _people(tmp_path, {"app.py": APP, "lib": LIB})
    _swap_and_push(bob, "lib", "lib/x.py", A)
    _adopt_commit(alice, "app.py", APP + "# alice\n")
    git(alice, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert tm(alice, "status").returncode == 0  # records what the pull brought
    proc = _merge(alice)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["outcome"] == "merged"
    assert _live(alice) == {"app.py::run", "lib/x.py::a"}
    assert _json(alice, "status")["clean"] is True
    _replay_agrees(alice)


def test_our_edit_below_their_file_stands_while_the_work_tree_holds_it(
    lib_dir: tuple[Path, Path],
) -> None:
    alice, bob = lib_dir
    _swap_and_push(bob, "lib", "lib", LIB)
    _adopt_commit(alice, "lib/a.py", A + "# alice\n")
    proc = _merge(alice)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kept"] == ["lib"] and doc["taken"] == [], doc
    assert _live(alice) == {"app.py::run", "lib/a.py::a"}
    _replay_agrees(alice)


def test_their_file_is_taken_over_our_edit_where_the_work_tree_holds_it(
    lib_dir: tuple[Path, Path],
) -> None:
    alice, bob = lib_dir
    _swap_and_push(bob, "lib", "lib", LIB)
    _adopt_commit(alice, "lib/a.py", A + "# alice\n")
    shutil.rmtree(alice / "lib")
    write(alice, "lib", LIB)  # the code merged by hand: their file
    proc = _merge(alice)
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads(proc.stdout)["taken"]) == ["lib", "lib/a.py"]
    assert _left(alice) == {"lib": False, "lib/a.py": True}
    assert _live(alice) == {"app.py::run", "lib::@file"}
    assert tm(alice, "rebuild").returncode == 0


def test_neither_kind_on_disk_is_a_conflict_and_writes_nothing(
    lib_dir: tuple[Path, Path],
) -> None:
    alice, bob = lib_dir
    _swap_and_push(bob, "lib", "lib", LIB)
    _adopt_commit(alice, "lib/a.py", A + "# alice\n")
    tip = git(alice, "rev-parse", "refs/tinymem/heads/main")
    shutil.rmtree(alice / "lib")
    proc = _merge(alice)
    assert proc.returncode == 2, proc.stderr
    assert "both ledgers changed lib" in proc.stderr and "nothing was written" in proc.stderr
    assert git(alice, "rev-parse", "refs/tinymem/heads/main") == tip
