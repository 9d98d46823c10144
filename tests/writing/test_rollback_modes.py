"""A rollback gives a file back its mode with its text: an accept that deleted an executable
file, or an undo that changed a file's executable bit, leaves it as it was when it fails."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import DIE_AFTER_RENAME, PY_APP, git, tm, tm_patched, write
from tinymem.repository import open_repo
from tinymem.writing.transaction import Change, write_all


def _executable(path: Path) -> bool:
    return bool(path.stat().st_mode & 0o100)


def _committed(repo: Path, mode: int) -> None:
    write(repo, "run.py", PY_APP)
    (repo / "run.py").chmod(mode)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0


def _undo_dying(repo: Path, episode: str) -> subprocess.CompletedProcess[str]:
    """`tm undo EPISODE` in a process that dies right after the rename, before the ledger."""
    return tm_patched(repo, DIE_AFTER_RENAME, "undo", episode)


class _LedgerRefused(Exception):
    pass


def _refuse() -> None:
    raise _LedgerRefused


@pytest.mark.parametrize("after", [None, b"x = 1\n"], ids=["removed", "rewritten"])
def test_a_failed_write_gives_an_executable_file_back_executable(
    repo: Path, after: bytes | None
) -> None:
    _committed(repo, 0o755)
    store = open_repo(str(repo))
    change = Change("run.py", after, lambda: None, executable=False if after else None)
    with pytest.raises(_LedgerRefused):
        write_all(store, [change], episode="0123456789ab", tip=store.state_tip(), record=_refuse)
    assert (repo / "run.py").read_text() == PY_APP
    assert _executable(repo / "run.py")
    assert git(repo, "status", "--porcelain") == ""


def test_a_kill_mid_undo_gives_the_mode_back(repo: Path) -> None:
    _committed(repo, 0o644)
    edited = PY_APP + "\n\ndef main():\n    pass\n"
    write(repo, "run.py", edited)
    (repo / "run.py").chmod(0o755)
    adopted = json.loads(tm(repo, "adopt", "run.py", "--json").stdout)["episode"]
    proc = _undo_dying(repo, adopted)  # killed after the rename (text and mode), before the ledger
    assert proc.returncode == 9, proc.stderr
    assert not _executable(repo / "run.py")
    status = tm(repo, "status")
    assert "rolled back" in status.stderr
    assert (repo / "run.py").read_text() == edited
    assert _executable(repo / "run.py")  # as the adopt left it, which the ledger still says
    assert tm(repo, "status", "--check").returncode == 0


def test_an_editor_saving_during_a_rollback_keeps_its_text(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rollback re-hashes a file right before its rename, as every write does: a save
    that lands after it read the file is left, never replaced by the older text."""
    import tinymem.writing.atomic as atomic

    _committed(repo, 0o644)
    store = open_repo(str(repo))
    mine = b"# saved by the editor during the rollback\n"
    real = atomic._write_temp

    def editor_saves(dir_fd: int, name: str, data: bytes, mode: int) -> None:
        real(dir_fd, name, data, mode)
        if "-undo-" in name:  # the rollback's temporary file is ready: the editor saves now
            (repo / "run.py").write_bytes(mine)

    monkeypatch.setattr(atomic, "_write_temp", editor_saves)
    change = Change("run.py", b"x = 1\n", lambda: None)
    with pytest.raises(_LedgerRefused):
        write_all(store, [change], episode="0123456789ab", tip=store.state_tip(), record=_refuse)
    assert (repo / "run.py").read_bytes() == mine
    assert not (repo / ".git" / "tinymem" / "accept-intent.json").exists()
