"""Every path is checked again when it is written, through the very directories written to:
a directory that became a symlink or a repository of its own after `tm ask` is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import git, init_repo, tm, tm_ask
from tests.modelserver import ModelServer
from tinymem.errors import UnsafePathError
from tinymem.paths import repo_relative
from tinymem.writing.safedir import open_parent

OLD = "def util():\n    return 1\n"
NEW = "def util():\n    return 2\n"


def _proposal(repo: Path, server: ModelServer, path: str) -> None:
    init_repo(repo, {path: OLD})
    server.add(f"```python path={path}\n{NEW}```\n")
    proc = tm_ask(repo, server, "change util", "--json")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert prop["gates"]["A"] == "pass", prop


def _swap_for_symlink(repo: Path, directory: str, target: Path) -> None:
    shutil.rmtree(repo / directory)
    (repo / directory).symlink_to(target, target_is_directory=True)


def test_a_directory_turned_symlink_outside_is_not_written_through(
    repo: Path, server: ModelServer, tmp_path: Path
) -> None:
    _proposal(repo, server, "lib/util.py")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "util.py").write_text(OLD)  # what ETV expects, so only the path check stops it
    _swap_for_symlink(repo, "lib", outside)
    proc = tm(repo, "accept", "--all")
    assert proc.returncode == 11, proc.stderr
    assert "symlink" in proc.stderr and "Traceback" not in proc.stderr
    assert (outside / "util.py").read_text() == OLD
    assert sorted(p.name for p in outside.iterdir()) == ["util.py"]


def test_a_directory_turned_symlink_into_git_hooks_is_not_written_through(
    repo: Path, server: ModelServer
) -> None:
    _proposal(repo, server, "tools/pre-commit")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text(OLD)
    before = sorted(p.name for p in hooks.iterdir())
    _swap_for_symlink(repo, "tools", hooks)
    proc = tm(repo, "accept", "--all")
    assert proc.returncode == 11, proc.stderr
    assert (hooks / "pre-commit").read_text() == OLD
    assert sorted(p.name for p in hooks.iterdir()) == before


def test_a_directory_turned_repository_is_not_written_into(repo: Path, server: ModelServer) -> None:
    _proposal(repo, server, "vendor/util.py")
    git(repo / "vendor", "init", "-q")  # now a nested repository (as a submodule is)
    proc = tm(repo, "accept", "--all")
    assert proc.returncode == 11, proc.stderr
    assert "submodule or a nested repository" in proc.stderr
    assert (repo / "vendor" / "util.py").read_text() == OLD


def test_paths_inside_a_submodule_are_refused_when_named(repo: Path) -> None:
    (repo / "sub").mkdir()
    git(repo / "sub", "init", "-q")
    with pytest.raises(UnsafePathError, match="submodule"):
        repo_relative(str(repo), "sub/x.py")
    (repo / "sub" / ".git").rename(repo / "sub" / "moved")
    (repo / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")  # a submodule's form
    with pytest.raises(UnsafePathError, match="submodule"):
        repo_relative(str(repo), "sub/deeper/x.py")


@pytest.mark.parametrize("rel", [".git/config", "a/.GIT/x", "a/../b", "", "a//b", "./a"])
def test_open_parent_refuses_names_it_never_writes_through(repo: Path, rel: str) -> None:
    with pytest.raises(UnsafePathError):
        open_parent(str(repo), rel, create=True)


def test_open_parent_refuses_a_final_symlink(repo: Path, tmp_path: Path) -> None:
    (repo / "link.py").symlink_to(tmp_path / "elsewhere.py")
    with pytest.raises(UnsafePathError, match="symlink"):
        open_parent(str(repo), "link.py", create=False)
