"""`tm adopt --path` (and `POST /v1/user/code`, the same core call) killed at any point, or
stopped by a busy ledger, never loses the hand edit the paste replaces: it is stored before
the file is touched, and the next tm command rolls the paste back or finds it recorded, and
names that text either way."""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git, tm, tm_patched, write

BASE = "def alpha():\n    return 1\n"
HAND = "def alpha():\n    return 'my own edit, never adopted'\n"
PASTE = "def alpha():\n    return 'pasted'\n"
INTENT = Path(".git") / "tinymem" / "accept-intent.json"


def _repo_with_hand_edit(repo: Path) -> None:
    write(repo, "a.py", BASE)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    write(repo, "a.py", HAND)


def _paste_dying(repo: Path, patch: str) -> subprocess.CompletedProcess[str]:
    """`tm adopt --path a.py` (PASTE on stdin) in a process that `patch` makes die."""
    return tm_patched(repo, patch, "adopt", "--path", "a.py", input=PASTE)


def _die_after(module: str, name: str, *, before: bool = False) -> str:
    call = "" if before else "real(*a, **k)"
    return f"""
import {module} as m
real = m.{name}
def patched(*a, **k):
    {call}
    os._exit(9)
m.{name} = patched
"""


KILLS = {
    "after storing both texts": _die_after("tinymem.writing.journal", "write", before=True),
    "after the intent record": _die_after(
        "tinymem.writing.transaction", "write_atomic", before=True
    ),
    "between temp file and rename": _die_after("tinymem.writing.atomic", "_write_temp"),
    "after the rename": _die_after("tinymem.writing.transaction", "write_atomic"),
    "before the ledger commit": _die_after("tinymem.adopt", "commit_episode", before=True),
    "after the ledger commit": _die_after("tinymem.writing.journal", "clear", before=True),
}


def _blob(repo: Path, oid: str) -> str:
    return git(repo, "cat-file", "-p", oid)


def _reachable(repo: Path, oid: str) -> bool:
    listed = git(repo, "rev-list", "--objects", "refs/tinymem/heads/main")
    return oid in listed


@pytest.mark.parametrize("point", list(KILLS))
def test_a_killed_paste_never_loses_the_hand_edit_it_replaces(repo: Path, point: str) -> None:
    _repo_with_hand_edit(repo)
    proc = _paste_dying(repo, KILLS[point])
    assert proc.returncode == 9, proc.stderr
    status = tm(repo, "status")
    assert "Traceback" not in status.stderr, status.stderr
    assert not (repo / INTENT).exists()
    disk = (repo / "a.py").read_text()
    if point == "after storing both texts":
        assert disk == HAND  # nothing was touched, nothing to say
        assert "interrupted" not in status.stderr
        return
    assert "interrupted tm adopt --path" in status.stderr, status.stderr
    named = re.findall(r"git cat-file -p ([0-9a-f]{40})", status.stderr)
    assert named and _blob(repo, named[0]) == HAND, status.stderr
    if point == "after the ledger commit":
        assert "had been recorded" in status.stderr
        assert disk == PASTE and _reachable(repo, named[0])
        assert tm(repo, "status", "--check").returncode == 0
    else:
        assert "rolled back" in status.stderr
        assert disk == HAND  # the hand edit is back where it was
        assert "a.py" in tm(repo, "status").stdout  # still the user's, unadopted
    leftovers = git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored")
    assert "tm-tmp" not in leftovers, leftovers


def test_doctor_as_the_next_command_names_the_rolled_back_paste(repo: Path) -> None:
    _repo_with_hand_edit(repo)
    assert _paste_dying(repo, KILLS["after the rename"]).returncode == 9
    doctor = json.loads(tm(repo, "doctor", "--json").stdout)
    said = [c["message"] for c in doctor["checks"] if c["check"] == "interrupted"]
    assert any("interrupted tm adopt --path" in m and "git cat-file -p" in m for m in said), said
    assert (repo / "a.py").read_text() == HAND


@pytest.mark.parametrize("via", ["tm adopt --path", "POST /v1/user/code"])
def test_a_busy_ledger_leaves_the_file_as_it_was(
    repo: Path, monkeypatch: pytest.MonkeyPatch, via: str
) -> None:
    # A tm stopped with Ctrl-Z holds the ledger lock: the paste gives up (exit 4) and must
    # not leave the hand edit replaced by a text nothing recorded.
    import tinymem.reflock
    from tinymem.adopt import adopt_content
    from tinymem.errors import ConcurrencyError
    from tinymem.repository import open_repo
    from tinymem.serve.chat import ServeSettings
    from tinymem.serve.views import user_code

    _repo_with_hand_edit(repo)
    monkeypatch.setattr(tinymem.reflock, "WAIT", 0.2)
    lock = os.open(repo / ".git" / "tinymem" / "ledger.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ConcurrencyError) as caught:
            if via == "tm adopt --path":
                adopt_content(open_repo(str(repo)), str(repo / "a.py"), PASTE.encode())
            else:
                user_code(ServeSettings(str(repo)), {"path": "a.py", "content": PASTE})
    finally:
        os.close(lock)
    assert "the paste was not written, a.py is as it was" in str(caught.value)
    assert (repo / "a.py").read_text() == HAND
    assert not (repo / INTENT).exists()
    assert not os.listdir(repo / ".git" / "tinymem" / "tmp")
    # Once the ledger is free, the paste goes through and keeps the hand edit in the vault.
    result = adopt_content(open_repo(str(repo)), str(repo / "a.py"), PASTE.encode())
    assert result.saved_disk_text and _blob(repo, result.saved_disk_text) == HAND
    assert _reachable(repo, result.saved_disk_text)
    assert (repo / "a.py").read_text() == PASTE


def test_pasting_the_recorded_text_over_a_hand_edit_keeps_the_hand_edit(repo: Path) -> None:
    from tinymem.adopt import adopt_content
    from tinymem.repository import open_repo

    _repo_with_hand_edit(repo)
    result = adopt_content(open_repo(str(repo)), str(repo / "a.py"), BASE.encode())
    assert (repo / "a.py").read_text() == BASE
    assert result.committed is not None and result.saved_disk_text is not None
    assert _reachable(repo, result.saved_disk_text)
    assert _blob(repo, result.saved_disk_text) == HAND


# `.git` on another file system than the work tree: the rename out of `.git/tinymem/tmp/`
# fails with EXDEV, and the temporary file is written beside the target instead.
CROSS_DEVICE = """
import errno
real_rename = os.rename
def rename(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
    if src_dir_fd is not None and src_dir_fd != dst_dir_fd:
        raise OSError(errno.EXDEV, "Invalid cross-device link")
    return real_rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
os.rename = rename
"""


def _cross_device(monkeypatch: pytest.MonkeyPatch) -> None:
    namespace: dict[str, object] = {"os": os}
    exec(CROSS_DEVICE.replace("os.rename = rename", ""), namespace)
    monkeypatch.setattr(os, "rename", namespace["rename"])


def _strays(repo: Path) -> list[str]:
    return [p.name for p in repo.rglob("*.tm-tmp")]


def test_a_paste_killed_beside_the_file_leaves_nothing_that_blocks_the_next(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tinymem.adopt import adopt_content
    from tinymem.sync import open_synced

    _repo_with_hand_edit(repo)
    # Killed after writing its temporary file beside a.py (the second one: the first, in
    # .git/tinymem/tmp/, could not be renamed across file systems).
    kill = (
        CROSS_DEVICE
        + """
import tinymem.writing.atomic as m
real = m._write_temp
calls = []
def patched(*a, **k):
    real(*a, **k)
    calls.append(1)
    if len(calls) == 2:
        os._exit(9)
m._write_temp = patched
"""
    )
    assert _paste_dying(repo, kill).returncode == 9
    assert len(_strays(repo)) == 1 and _strays(repo)[0].startswith(".a.py.tm-")
    assert (repo / "a.py").read_text() == HAND
    # The next command (in-process: the same forced cross-device rename) cleans up.
    _cross_device(monkeypatch)
    r = open_synced(str(repo))
    assert _strays(repo) == []
    result = adopt_content(r, str(repo / "a.py"), PASTE.encode())
    assert (repo / "a.py").read_text() == PASTE and _strays(repo) == []
    assert result.saved_disk_text and _blob(repo, result.saved_disk_text) == HAND


def test_a_stray_temp_file_of_an_older_tm_is_reported_and_removed_by_the_next_paste(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tinymem.adopt import adopt_content
    from tinymem.repository import open_repo

    _repo_with_hand_edit(repo)
    write(repo, ".gitignore", ".*\n")  # an ignore rule must not hide it from doctor
    write(repo, "sub/b.py", BASE)
    (repo / "sub" / ".b.py.tm-adopt.tm-tmp").write_text("half a paste")
    (repo / ".a.py.tm-adopt.tm-tmp").write_text("half a paste")  # the name it always used
    doctor = json.loads(tm(repo, "doctor", "--json").stdout)
    found = [c for c in doctor["checks"] if c["check"] == "interrupted"]
    assert any("temporary file" in c["message"] for c in found), found
    listed = json.dumps(found)
    assert ".a.py.tm-adopt.tm-tmp" in listed and "sub/.b.py.tm-adopt.tm-tmp" in listed
    _cross_device(monkeypatch)
    adopt_content(open_repo(str(repo)), str(repo / "a.py"), PASTE.encode())
    assert (repo / "a.py").read_text() == PASTE
    assert _strays(repo) == [".b.py.tm-adopt.tm-tmp"]  # beside another file: not touched
