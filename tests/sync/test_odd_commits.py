"""Commits a user may make that tm's step up to HEAD must survive: every command runs that
step first, so one commit it cannot take would stop every command, the hook included."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import Initialise, git, tm, write

APP = "def run():\n    return 0\n"


@pytest.mark.skipif(os.uname().sysname == "Darwin", reason="macOS refuses such names")
def test_a_committed_name_that_is_not_utf8_is_skipped_as_init_skips_it(
    repo: Path, initialised: Initialise
) -> None:
    initialised({"app.py": APP})
    (repo / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "latin-1 name")
    for argv in (("status",), ("log",), ("state", "--json"), ("ask", "--dry-run", "run")):
        done = tm(repo, *argv)
        assert done.returncode == 0, (argv, done.stderr)
    assert tm(repo, "hook", "install").returncode == 0
    write(repo, "app.py", APP.replace("0", "1"))
    assert tm(repo, "adopt", "app.py").returncode == 0
    git(repo, "commit", "-qam", "run returns 1")  # the hook passes
    state = json.loads(tm(repo, "state", "--json").stdout)
    assert {e["entity"] for e in state["entities"]} == {"app.py::run"}


def test_a_directory_committed_as_a_file_of_its_name_does_not_stop_hydration(
    repo: Path, initialised: Initialise
) -> None:
    """meta/lib became a directory of the deletion records of lib/*.py; hydration read it as
    the file record of `lib` and `tm ask` ended with "artifact ... missing" (exit 13). (The
    file `lib` itself is recorded since: tests/sync/test_file_dir_swaps.py.)"""
    initialised({"app.py": APP, "lib/d.py": "def d():\n    return 4\n"})
    git(repo, "rm", "-rq", "lib")
    write(repo, "lib", "lib = 1\n")
    git(repo, "add", "lib")
    git(repo, "commit", "-qm", "lib is a file now")
    for argv in (("status",), ("ask", "--dry-run", "change lib and run"), ("state", "--json")):
        done = tm(repo, *argv)
        assert done.returncode == 0, (argv, done.stderr)


def test_a_new_file_committed_then_edited_is_taken_with_the_edit_stale(
    repo: Path, initialised: Initialise
) -> None:
    """Commit, keep editing, then run tm: the file was in no State Map (its text on disk is
    not the commit's), so no command showed it, not even as STALE."""
    initialised({"app.py": APP})
    write(repo, "g.py", "def g():\n    return 1\n")
    git(repo, "add", "g.py")
    git(repo, "commit", "-qm", "add g.py")
    write(repo, "g.py", "def g():\n    return 2\n")
    status = json.loads(tm(repo, "status", "--json").stdout)
    assert [(f["path"], f["why"]) for f in status["files"]] == [("g.py", "modified")]
    state = {e["entity"]: e for e in json.loads(tm(repo, "state", "--json").stdout)["entities"]}
    assert state["g.py::g"]["stale"]
    assert tm(repo, "adopt", "g.py").returncode == 0
    assert json.loads(tm(repo, "status", "--json").stdout)["clean"] is True
    shown = tm(repo, "blame", "g.py")
    assert shown.returncode == 0 and "return 2" in shown.stdout


def test_a_file_committed_as_a_symlink_ends_its_record(repo: Path, initialised: Initialise) -> None:
    """tm records regular files only: the record stayed live and the file STALE for good,
    and `tm adopt --all` refused the whole batch (exit 11) for it."""
    initialised({"app.py": APP, "lib/d.py": "def d():\n    return 4\n"})
    (repo / "app.py").unlink()
    os.symlink("lib/d.py", repo / "app.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "app.py is a link now")
    write(repo, "lib/d.py", "def d():\n    return 5\n")
    status = json.loads(tm(repo, "status", "--json").stdout)
    assert [f["path"] for f in status["files"]] == ["lib/d.py"]
    assert tm(repo, "adopt", "--all").returncode == 0
    assert tm(repo, "status", "--check").returncode == 0
    assert tm(repo, "doctor").returncode == 0


@pytest.mark.skipif(os.uname().sysname == "Darwin", reason="macOS refuses such names")
def test_a_branch_whose_name_is_not_utf8_is_refused_like_a_detached_head(
    repo: Path, initialised: Initialise
) -> None:
    """Its ledger ref cannot be written or read: every command ended with exit 13, `tm
    doctor` with 10, and the hook refused every commit there."""
    initialised({"app.py": APP})
    assert tm(repo, "hook", "install").returncode == 0
    git(repo, "switch", "-qc", os.fsdecode(b"feat\xff"))
    done = tm(repo, "status")
    assert done.returncode == 3, done.stderr
    assert "has a name that is not UTF-8" in done.stderr and "git branch -m" in done.stderr
    assert tm(repo, "doctor").returncode == 0
    write(repo, "app.py", APP.replace("0", "1"))
    git(repo, "commit", "-qam", "on the branch")  # the hook passes, as on a detached HEAD


def test_an_executable_bit_git_committed_is_recorded(repo: Path, initialised: Initialise) -> None:
    """Only the blob was compared: the mode stayed the State Map's, and an undo of a later
    adopt took the bit away from the file."""
    initialised({"run.py": APP})
    (repo / "run.py").chmod(0o755)
    git(repo, "commit", "-qam", "run.py is a script")
    assert tm(repo, "status").returncode == 0
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    assert json.loads(git(repo, "show", f"{tip}:meta/run.py"))["executable"] is True
    write(repo, "run.py", APP.replace("0", "1"))
    (repo / "run.py").chmod(0o755)
    done = json.loads(tm(repo, "adopt", "run.py", "--json").stdout)
    assert tm(repo, "undo", done["episode"]).returncode == 0
    assert os.access(repo / "run.py", os.X_OK)


def test_a_sparse_checkout_leaves_files_out_without_deleting_them(
    repo: Path, initialised: Initialise
) -> None:
    """Files left out of the work tree on purpose were STALE "missing", `tm adopt --all`
    recorded them deleted, and once they were back tm no longer tracked them; a commit that
    changed one left the State Map behind git."""
    initialised({"app.py": APP, "lib/d.py": "def d():\n    return 4\n"})
    git(repo, "switch", "-qc", "other")
    write(repo, "lib/d.py", "def d():\n    return 5\n")
    git(repo, "commit", "-qam", "d returns 5")
    git(repo, "switch", "-q", "main")
    git(repo, "sparse-checkout", "set", "--no-cone", "/*", "!/lib/")
    assert not (repo / "lib").exists()
    assert json.loads(tm(repo, "status", "--json").stdout)["clean"] is True
    assert "Nothing to adopt" in tm(repo, "adopt", "--all").stdout
    git(repo, "merge", "-q", "--ff-only", "other")  # a pull that changes a file left out
    assert json.loads(tm(repo, "status", "--json").stdout)["clean"] is True
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    head = git(repo, "rev-parse", "HEAD:lib/d.py").strip()
    assert git(repo, "rev-parse", f"{tip}:files/lib/d.py").strip() == head
    git(repo, "sparse-checkout", "disable")
    assert (repo / "lib/d.py").read_text() == "def d():\n    return 5\n"
    assert json.loads(tm(repo, "status", "--json").stdout)["clean"] is True
    write(repo, "lib/d.py", "def d():\n    return 6\n")
    files = json.loads(tm(repo, "status", "--json").stdout)["files"]
    assert [(f["path"], f["why"]) for f in files] == [("lib/d.py", "modified")]
