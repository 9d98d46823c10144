"""A repository with tm initialised on one Python file, for the notes tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PY_APP, git, tm, write
from tinymem.repository import Repo, open_repo


@pytest.fixture
def inited(repo: Path) -> Iterator[Path]:
    write(repo, "app.py", PY_APP)
    write(repo, "README.md", "# app\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    assert tm(repo, "init").returncode == 0
    yield repo


@pytest.fixture
def store(inited: Path) -> Repo:
    return open_repo(str(inited))
