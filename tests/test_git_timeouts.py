"""Every git command tm runs is bounded: a git that never answers (stuck on a lock, a
credential prompt, a dead network filesystem) ends as a clear error or git's documented
fallback, never as a wait for ever. The editor git names is not bounded: a user edits for as
long as they want."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.conftest import git, write
from tinymem import gitcmd
from tinymem.errors import RepositoryError, UsageError
from tinymem.repository import open_repo

# Each test would wait the stuck git's 60 s on the old code: well past this bound.
BOUND = 30


def _stick_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `git` first on PATH that never answers, and tm's bound on git made 1 s."""
    bin_dir = tmp_path / "stuck-bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(gitcmd, "TIMEOUT", 1)


def test_the_default_bound_is_a_minute() -> None:
    assert gitcmd.TIMEOUT == 60


@pytest.mark.timeout(BOUND)
def test_the_hooks_staged_listing_ends_as_a_refusal_when_git_never_answers(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tinymem.hook import staged

    write(repo, "a.py", "x = 1\n")
    git(repo, "add", "a.py")
    opened = open_repo(str(repo))
    _stick_git(tmp_path, monkeypatch)
    with pytest.raises(RepositoryError, match="git diff-index did not finish within 1 s"):
        staged(opened)


@pytest.mark.timeout(BOUND)
def test_the_pager_falls_back_to_pager_when_git_never_answers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tinymem.commands.output import _pager_command

    _stick_git(tmp_path, monkeypatch)
    monkeypatch.delenv("GIT_PAGER", raising=False)
    monkeypatch.setenv("PAGER", "more")
    assert _pager_command() == "more"


@pytest.mark.timeout(BOUND)
def test_asking_git_for_the_editor_ends_as_one_sentence_when_git_never_answers(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tinymem.commands.editor import edit_text

    opened = open_repo(str(repo))
    _stick_git(tmp_path, monkeypatch)
    with pytest.raises(UsageError, match="did not answer within 1 s; use --text"):
        edit_text(opened, "text", "a note")
