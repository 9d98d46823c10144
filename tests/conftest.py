"""Shared fixtures: real git repositories in temporary directories, and `tm` run for real."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol

import pytest

from tests import inprocess
from tests.modelserver import ModelServer

ROOT = Path(__file__).resolve().parent.parent

# This machine exports PYTHONDONTWRITEBYTECODE=1, which made every `tm` process a test starts
# (and every hook git runs) compile the package again. The children write bytecode under a
# prefix outside the source tree instead; Python checks each file's mtime, so it is never stale.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    os.environ.setdefault(
        "PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), f"tinymem-tests-{os.getuid()}")
    )


@pytest.fixture(autouse=True)
def _isolated_git(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads or writes the developer's own git configuration."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch_restore: list[tuple[object, str]] = []
    # Hooks installed by tests call `tm`: the one from this interpreter's environment.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test User")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test User")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.com")
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    # libgit2 fixed its config search path when pygit2 was first imported: in-process calls
    # would read the developer's ~/.gitconfig without this.
    import pygit2
    from pygit2.enums import ConfigLevel

    for level, where in (
        (ConfigLevel.GLOBAL, home),
        (ConfigLevel.XDG, home / ".config" / "git"),
        (ConfigLevel.SYSTEM, home / "etc"),
    ):
        saved = pygit2.settings.search_path[level]
        pygit2.settings.search_path[level] = str(where)
        monkeypatch_restore.append((level, saved))
    yield
    for level, saved in monkeypatch_restore:
        pygit2.settings.search_path[level] = saved


def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def write(repo: Path, rel: str, text: str | bytes) -> Path:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """An empty git work tree (no commits)."""
    path = tmp_path / "work"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    yield path


def tm(
    cwd: Path, *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `tm` as a user would, in this process (see `tests/inprocess.py`): what a pipe
    receives, the exit code, the environment and working directory of a real run.
    `tm_process` runs it as a real process, for tests whose subject is the process."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env.setdefault("COLUMNS", "200")
    if not inprocess.usable():
        return tm_process(cwd, *args, input=input, env=env)
    return inprocess.run(cwd, list(args), input, full_env)


def tm_process(
    cwd: Path, *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real `tm` (python -m tinymem) in a process of its own."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env.setdefault("COLUMNS", "200")
    data = input.decode() if isinstance(input, bytes) else input
    return subprocess.run(
        [sys.executable, "-m", "tinymem", *args],
        cwd=cwd,
        input=data if data is not None else "",
        capture_output=True,
        text=True,
        env=full_env,
        check=False,
    )


# A patch for `tm_patched`: the process dies right after a file's rename, before the ledger.
DIE_AFTER_RENAME = """
import tinymem.writing.transaction as m
real = m.write_atomic
def dying(*a, **k):
    real(*a, **k)
    os._exit(9)
m.write_atomic = dying
"""


def tm_patched(
    cwd: Path, patch: str, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `tm ARGS` in a process of its own after `patch` (Python, with `os` imported) has
    replaced one of tm's functions: to kill it (`os._exit(9)`) at a chosen step."""
    script = (
        f"import os, sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        + textwrap.dedent(patch)
        + f"\nsys.argv = {['tm', *args]!r}\nfrom tinymem.cli import main\nmain()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        input=input if input is not None else "",
        capture_output=True,
        text=True,
        check=False,
    )


PY_APP = '''\
"""A tiny service."""

import os


def fetch_user(uid):
    return {"id": uid}


class Client:
    def get(self, path):
        return path

    def post(self, path, body):
        return (path, body)
'''


@pytest.fixture
def server() -> Iterator[ModelServer]:
    """A real OpenAI/Ollama-compatible model server on loopback."""
    with ModelServer() as s:
        yield s


MODEL_ENV = {"OPENAI_API_KEY": "sk-test"}


def ask_argv(server: ModelServer, prompt: str, *extra: str) -> list[str]:
    """`tm ask` arguments against the loopback server's OpenAI endpoint."""
    return ["ask", prompt, "-m", "openai/test", "--api-base", server.openai_base, *extra]


def tm_ask(
    repo: Path, server: ModelServer, prompt: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return tm(repo, *ask_argv(server, prompt, *extra), env={**MODEL_ENV, **(env or {})})


def init_repo(
    path: Path, files: Mapping[str, str | bytes], *, commit: bool = True, message: str = "base"
) -> Path:
    """The start most tests need: `files` written into the git work tree `path`, staged,
    committed (`commit=False` leaves them staged: `tm init` then imports the index), and
    `tm init` run in-process."""
    for rel, text in files.items():
        write(path, rel, text)
    git(path, "add", ".")
    if commit:
        git(path, "commit", "-qm", message)
    proc = tm(path, "init")
    assert proc.returncode == 0, proc.stderr
    return path


class Initialise(Protocol):
    def __call__(
        self, files: Mapping[str, str | bytes], *, commit: bool = True, message: str = "base"
    ) -> Path: ...


class _Templates:
    """Repositories `init_repo` prepared once per session, one per distinct setup, copied into
    each test's `repo`: a copy costs a fraction of the writes, git processes and init it
    replaces. Nothing in `.git` names the template's own path (init writes no worktree or
    absolute path into it; `test_a_copied_template_names_nothing_of_the_template` checks),
    and the stat cache keys on inode and ctime, so a copy never trusts the template's stats."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[tuple[object, ...], Path] = {}

    def copy_into(
        self, repo: Path, files: Mapping[str, str | bytes], *, commit: bool, message: str
    ) -> Path:
        key = (tuple(files.items()), commit, message)
        template = self.made.get(key)
        if template is None:
            template = self.root / f"t{len(self.made)}"
            template.mkdir()
            git(template, "init", "-q", "-b", "main")
            init_repo(template, files, commit=commit, message=message)
            self.made[key] = template
        assert [p.name for p in repo.iterdir()] == [".git"], "copy_into wants a fresh `repo`"
        shutil.rmtree(repo / ".git")
        shutil.copytree(template, repo, symlinks=True, dirs_exist_ok=True)
        return repo


@pytest.fixture(scope="session")
def _repo_templates(tmp_path_factory: pytest.TempPathFactory) -> _Templates:
    return _Templates(tmp_path_factory.mktemp("templates"))


@pytest.fixture
def initialised(repo: Path, _repo_templates: _Templates) -> Initialise:
    """`initialised(files)`: the test's `repo` as `init_repo(repo, files)` would leave it,
    copied from a template made once per session for those same files. The template is made
    inside the first test that asks for it: call this first, before the test writes into
    `repo`, patches tinymem or sets git configuration (those setups use `init_repo`)."""

    def make(
        files: Mapping[str, str | bytes], *, commit: bool = True, message: str = "base"
    ) -> Path:
        return _repo_templates.copy_into(repo, files, commit=commit, message=message)

    return make
