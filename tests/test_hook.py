"""The pre-commit hook: each refusal, hand edits passing, installation, the framework."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PY_APP, ROOT, git, tm, tm_ask, write
from tests.modelserver import ModelServer
from tinymem.hook import HOOK_SCRIPT, hook_script, recorded_python

V2 = PY_APP.replace('{"id": uid}', '{"id": uid, "v": 2}')


def _commit(
    repo: Path, *paths: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    git(repo, "add", *paths)
    return subprocess.run(
        ["git", "commit", "-qm", "change"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


# What a GUI git client or another shell has: git, but neither the venv nor tinymem.
BARE_PATH = "/usr/bin:/bin"


@pytest.fixture
def hooked(repo: Path) -> Path:
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    proc = tm(repo, "hook", "install")
    assert proc.returncode == 0, proc.stderr
    return repo


def test_script_in_repository_matches_the_installed_one() -> None:
    assert (ROOT / "hooks" / "pre-commit").read_text() == HOOK_SCRIPT
    assert os.access(ROOT / "hooks" / "pre-commit", os.X_OK)


def test_stale_buffer_of_a_superseded_version_is_refused(hooked: Path) -> None:
    write(hooked, "app.py", V2)
    assert tm(hooked, "adopt", "app.py").returncode == 0
    assert _commit(hooked, "app.py").returncode == 0
    write(hooked, "app.py", PY_APP)  # the editor saves its old buffer
    proc = _commit(hooked, "app.py")
    assert proc.returncode != 0
    assert "app.py::fetch_user" in proc.stderr
    assert "superseded" in proc.stderr
    assert "tm adopt app.py" in proc.stderr and "--no-verify" in proc.stderr
    assert "git show refs/tinymem/heads/main:files/app.py" in proc.stderr


def test_unaccepted_model_output_on_an_old_base_is_refused(
    hooked: Path, server: ModelServer
) -> None:
    new = 'def fetch_user(uid):\n    return {"id": uid, "model": True}'
    server.add(f"```python path=app.py\n{new}\n```\n")
    ask = tm_ask(hooked, server, "x", "--json")
    assert ask.returncode == 0, ask.stderr
    write(hooked, "app.py", V2)
    assert tm(hooked, "adopt", "app.py").returncode == 0
    write(hooked, "app.py", PY_APP.replace('def fetch_user(uid):\n    return {"id": uid}', new))
    proc = _commit(hooked, "app.py")
    assert proc.returncode != 0
    pid = json.loads(ask.stdout)["proposals"][0]["id"]
    assert f"proposal {pid}" in proc.stderr


def test_whole_file_output_dropping_symbols_is_refused(hooked: Path, server: ModelServer) -> None:
    whole = '"""A tiny service."""\n\nimport os\n\n\ndef fetch_user(uid):\n    return None\n'
    server.add(f"```python path=app.py\n{whole}```\n")
    ask = tm_ask(hooked, server, "x")
    assert ask.returncode == 0, ask.stderr
    write(hooked, "app.py", whole)
    proc = _commit(hooked, "app.py")
    assert proc.returncode != 0
    assert "drops authoritative symbols: Client" in proc.stderr


def test_plain_hand_edit_passes_with_a_hint(hooked: Path) -> None:
    write(hooked, "app.py", V2)
    proc = _commit(hooked, "app.py")
    assert proc.returncode == 0, proc.stderr
    assert "`tm adopt app.py` would record them" in proc.stderr


def test_existing_hook_is_chained_and_both_run(repo: Path) -> None:
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    tm(repo, "init")
    old = repo / ".git" / "hooks" / "pre-commit"
    old.write_text("#!/bin/sh\necho previous-hook-ran >&2\n")
    old.chmod(0o755)
    assert "runs first" in tm(repo, "hook", "install").stdout
    write(repo, "app.py", V2)
    assert tm(repo, "adopt", "app.py").returncode == 0
    assert _commit(repo, "app.py").returncode == 0
    write(repo, "app.py", PY_APP)
    proc = _commit(repo, "app.py")
    assert "previous-hook-ran" in proc.stderr
    assert proc.returncode != 0 and "superseded" in proc.stderr
    assert tm(repo, "hook", "uninstall").returncode == 0
    assert old.read_text() == "#!/bin/sh\necho previous-hook-ran >&2\n"


def test_force_replaces_with_a_backup_and_hookspath_is_honoured(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", "githooks")
    (repo / "githooks").mkdir()
    (repo / "githooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    proc = tm(repo, "hook", "install", "--force")
    assert proc.returncode == 0, proc.stderr
    assert (repo / "githooks" / "pre-commit").read_text() == hook_script(sys.executable)
    assert (repo / "githooks" / "pre-commit.tinymem-backup").exists()


def test_pre_commit_framework_runs_the_check(repo: Path) -> None:
    # pre-commit is a test dependency: its absence is a broken install, not a skip.
    tool = shutil.which("pre-commit")
    assert tool is not None
    write(repo, "app.py", PY_APP)
    write(
        repo,
        ".pre-commit-config.yaml",
        "repos:\n  - repo: local\n    hooks:\n      - id: tinymem-stale-overwrite\n"
        "        name: tinymem\n        entry: tm hook run pre-commit\n"
        "        language: system\n        pass_filenames: false\n        always_run: true\n",
    )
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    tm(repo, "init")
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pc-home")}
    subprocess.run([tool, "install"], cwd=repo, check=True, env=env, capture_output=True)
    write(repo, "app.py", V2)
    assert tm(repo, "adopt", "app.py").returncode == 0
    git(repo, "add", "app.py")
    subprocess.run(
        ["git", "commit", "-qm", "v2"], cwd=repo, env=env, check=True, capture_output=True
    )
    write(repo, "app.py", PY_APP)
    git(repo, "add", "app.py")
    proc = subprocess.run(
        ["git", "commit", "-qm", "x"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert "superseded" in proc.stdout + proc.stderr


def test_pre_commit_framework_installs_tinymem_itself(repo: Path, tmp_path: Path) -> None:
    """`.pre-commit-hooks.yaml` as users take it (`repo:` this project at a commit), from a
    clean pre-commit cache, with neither the venv nor tm on PATH: the framework's own
    environment installs tinymem, and the stale buffer is refused."""
    tool = shutil.which("pre-commit")
    assert tool is not None  # a test dependency
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if head.returncode != 0:
        pytest.skip("the project is not a git checkout: pre-commit needs a commit to install")
    write(repo, "app.py", PY_APP)
    write(
        repo,
        ".pre-commit-config.yaml",
        f"repos:\n  - repo: {ROOT}\n    rev: {head.stdout.strip()}\n"
        "    hooks:\n      - id: tinymem-stale-overwrite\n",
    )
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pc-home")}
    subprocess.run([tool, "install"], cwd=repo, check=True, env=env, capture_output=True)
    write(repo, "app.py", V2)
    assert tm(repo, "adopt", "app.py").returncode == 0
    git(repo, "add", "app.py")
    # Installs the hook's environment (pip, from the package index) on this first commit.
    first = subprocess.run(
        ["git", "commit", "-qm", "v2"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert first.returncode == 0, first.stdout + first.stderr
    write(repo, "app.py", PY_APP)
    git(repo, "add", "app.py")
    proc = subprocess.run(  # pre-commit by its absolute path; git on PATH, tm not
        [tool, "run", "--hook-stage", "pre-commit"],
        cwd=repo,
        env={**env, "PATH": BARE_PATH},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert "superseded" in proc.stdout + proc.stderr


@pytest.mark.parametrize("how", [["-a"], ["--", "app.py"]])
def test_commit_all_and_commit_paths_are_checked_too(hooked: Path, how: list[str]) -> None:
    """git hands hooks a temporary index for these (GIT_INDEX_FILE): it must be the one read."""
    write(hooked, "app.py", V2)
    assert tm(hooked, "adopt", "app.py").returncode == 0
    assert _commit(hooked, "app.py").returncode == 0
    write(hooked, "app.py", PY_APP)
    proc = subprocess.run(
        ["git", "commit", "-qm", "stale", *how],
        cwd=hooked,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert "superseded" in proc.stderr


def _hook_path(repo: Path) -> Path:
    return repo / ".git" / "hooks" / "pre-commit"


def test_the_hook_records_the_python_that_installed_it(hooked: Path) -> None:
    assert recorded_python(_hook_path(hooked).read_text()) == os.path.abspath(sys.executable)


def test_the_check_runs_without_tm_on_path(hooked: Path) -> None:
    write(hooked, "app.py", V2)
    assert tm(hooked, "adopt", "app.py").returncode == 0
    assert _commit(hooked, "app.py").returncode == 0
    write(hooked, "app.py", PY_APP)  # a stale editor buffer, saved from a GUI client
    env = {**os.environ, "PATH": BARE_PATH}
    assert shutil.which("tm", path=BARE_PATH) is None
    proc = _commit(hooked, "app.py", env=env)
    assert proc.returncode != 0
    assert "superseded" in proc.stderr


def test_a_hook_that_cannot_run_the_check_refuses_the_commit(hooked: Path) -> None:
    hook = _hook_path(hooked)
    gone = "/nonexistent/venv/bin/python3"
    hook.write_text(hook.read_text().replace(recorded_python(hook.read_text()) or "", gone))
    write(hooked, "app.py", V2)
    proc = _commit(hooked, "app.py", env={**os.environ, "PATH": BARE_PATH})
    assert proc.returncode != 0
    assert "commit refused" in proc.stderr and "tm hook install" in proc.stderr
    assert "--no-verify" in proc.stderr
    doctor = json.loads(tm(hooked, "doctor", "--json").stdout)
    (check,) = [c for c in doctor["checks"] if c["check"] == "hook"]
    assert check["status"] == "warn" and gone in check["message"]


def test_an_older_version_after_git_reset_is_no_stale_buffer(hooked: Path) -> None:
    write(hooked, "app.py", V2)
    assert tm(hooked, "adopt", "app.py").returncode == 0
    assert _commit(hooked, "app.py").returncode == 0
    git(hooked, "reset", "-q", "--hard", "HEAD~1")  # the user drops the commit that held V2
    write(hooked, "app.py", PY_APP + "\n\ndef added():\n    return 1\n")
    proc = _commit(hooked, "app.py")
    assert proc.returncode == 0, proc.stderr
    assert "app.py::fetch_user is the version HEAD holds" in proc.stderr
    assert "tm adopt app.py" in proc.stderr


def test_amending_an_older_commit_in_a_rebase_is_no_stale_buffer(hooked: Path) -> None:
    write(hooked, "app.py", PY_APP + "\n\ndef added():\n    return 1\n")
    assert tm(hooked, "adopt", "app.py").returncode == 0
    assert _commit(hooked, "app.py").returncode == 0
    write(hooked, "app.py", V2 + "\n\ndef added():\n    return 1\n")
    assert tm(hooked, "adopt", "app.py").returncode == 0
    assert _commit(hooked, "app.py").returncode == 0
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/", "GIT_EDITOR": "true"}
    subprocess.run(["git", "rebase", "-q", "-i", "HEAD~2"], cwd=hooked, env=env, check=True)
    write(hooked, "app.py", PY_APP + "\n\ndef added():\n    return 2\n")
    git(hooked, "add", "app.py")
    proc = subprocess.run(
        ["git", "commit", "-q", "--amend", "--no-edit"],
        cwd=hooked,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "moved back past" in proc.stderr


def test_a_stale_buffer_over_an_uncommitted_accept_is_still_refused(hooked: Path) -> None:
    write(hooked, "app.py", V2)
    assert tm(hooked, "adopt", "app.py").returncode == 0
    write(hooked, "app.py", PY_APP + "\n\ndef added():\n    return 1\n")  # the old buffer
    proc = _commit(hooked, "app.py")
    assert proc.returncode != 0 and "superseded" in proc.stderr, proc.stderr


def _wrapper(tmp: Path, python: str, log: Path) -> Path:
    """An interpreter that notes each start in `log`, then runs `python`."""
    path = tmp / "logged-python"
    path.write_text(f'#!/bin/sh\necho start >> "{log}"\nexec "{python}" "$@"\n')
    path.chmod(0o755)
    return path


def _record(repo: Path, python: Path) -> None:
    hook = _hook_path(repo)
    text = hook.read_text()
    hook.write_text(text.replace(recorded_python(text) or "", str(python)))


def test_the_hook_starts_one_interpreter(hooked: Path, tmp_path: Path) -> None:
    """The check itself tells whether tinymem is importable: no `python -c "import tinymem"`
    start before it (each start is ~50-100 ms on every commit)."""
    log = tmp_path / "starts"
    _record(hooked, _wrapper(tmp_path, sys.executable, log))
    write(hooked, "app.py", V2)
    assert tm(hooked, "adopt", "app.py").returncode == 0
    proc = _commit(hooked, "app.py", env={**os.environ, "PATH": BARE_PATH})
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().splitlines() == ["start"]
    log.unlink()
    write(hooked, "app.py", PY_APP)  # a stale buffer: still refused, by that one start
    proc = _commit(hooked, "app.py", env={**os.environ, "PATH": BARE_PATH})
    assert proc.returncode == 1 and "superseded" in proc.stderr
    assert log.read_text().splitlines() == ["start"]


def test_a_recorded_python_without_tinymem_refuses_in_one_sentence(
    hooked: Path, tmp_path: Path
) -> None:
    """The recorded interpreter runs but cannot import tinymem (its venv was rebuilt without
    it), and nothing else on PATH has it: the documented refusal, not Python's ImportError."""
    bare = getattr(sys, "_base_executable", "") or "/usr/bin/python3"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run(
        [bare, "-c", "import tinymem"], cwd=hooked, capture_output=True, env=env, check=False
    )
    if probe.returncode == 0:
        pytest.skip(f"{bare} has tinymem installed")
    log = tmp_path / "starts"
    _record(hooked, _wrapper(tmp_path, bare, log))
    write(hooked, "app.py", V2)
    proc = _commit(hooked, "app.py", env={**env, "PATH": BARE_PATH})
    assert proc.returncode == 1
    assert log.read_text().splitlines() == ["start"]  # it was tried
    assert proc.stderr.startswith("tinymem: commit refused: the stale-overwrite check cannot")
    assert "tm hook install" in proc.stderr and "--no-verify" in proc.stderr
    assert "Traceback" not in proc.stderr and "ModuleNotFoundError" not in proc.stderr


# The check ends with os._exit (no interpreter teardown, no atexit): the child reports there.
HOOK_CHILD = """
import os, sys
sys.path.insert(0, {root!r})
_exit = os._exit
def _report(code):
    print("loaded:", "typer" in sys.modules, file=sys.stderr)
    sys.stderr.flush()
    _exit(code)
os._exit = _report
sys.argv = ["tm", "hook", "run", "pre-commit"]
from tinymem.entry import main
main()
"""


def _hook_run(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", HOOK_CHILD.format(root=str(ROOT))],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_hooks_run_skips_the_command_line(hooked: Path, tmp_path: Path) -> None:
    """`tm hook run pre-commit` (what the script runs) loads neither typer nor the commands,
    and still ends as every command does: the refusal (1), one sentence for an error."""
    write(hooked, "app.py", V2)
    assert tm(hooked, "adopt", "app.py").returncode == 0
    assert _commit(hooked, "app.py").returncode == 0
    write(hooked, "app.py", PY_APP)
    git(hooked, "add", "app.py")
    proc = _hook_run(hooked)
    assert proc.returncode == 1 and "superseded" in proc.stderr
    assert proc.stderr.splitlines()[-1] == "loaded: False"
    outside = tmp_path / "not-a-repository"
    outside.mkdir()
    proc = _hook_run(outside)
    assert proc.returncode == 3, proc.stderr
    sentence, loaded = proc.stderr.splitlines()
    assert sentence.startswith("tm: ") and loaded == "loaded: False"


LOADED_CHILD = """
import json, os, sys
sys.path.insert(0, {root!r})
watched = {watched!r}
_exit = os._exit
def _report(code):
    print(json.dumps(sorted(m for m in watched if m in sys.modules)), file=sys.stderr)
    sys.stderr.flush()
    _exit(code)
os._exit = _report
sys.argv = ["tm", "hook", "run", "pre-commit"]
from tinymem.entry import main
main()
"""
# Loaded only to record a HEAD move, to read proposals, or to parse a staged file.
HEAVY = [
    "tinymem.ledger",
    "tinymem.sync.headmove",
    "tinymem.proposalrecords",
    "tinymem.symbols.treesitter",
    "tree_sitter",
    "tree_sitter_language_pack",
]


def _loaded_by_hook(cwd: Path) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The hook's exit code and output, and which of HEAVY it loaded (reported from os._exit,
    which it ends with: no interpreter teardown, ~15 % of a one-file commit's hook run)."""
    code = LOADED_CHILD.format(root=str(ROOT), watched=HEAVY)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False
    )
    return proc, json.loads(proc.stderr.splitlines()[-1])


def test_a_hand_edit_tm_never_changed_loads_no_ledger_writer_nor_grammar(hooked: Path) -> None:
    """A commit of a file with no older artifact and no proposal cannot be refused: the hook
    neither parses it nor loads the code that records a HEAD move (issue 29: its start-up)."""
    assert tm(hooked, "status").returncode == 0  # HEAD as the ledger last saw it
    write(hooked, "app.py", V2)
    git(hooked, "add", "app.py")
    proc, loaded = _loaded_by_hook(hooked)
    assert proc.returncode == 0, proc.stderr
    assert "app.py has hand edits" in proc.stderr
    assert loaded == []


def test_a_file_with_an_older_artifact_is_still_parsed_and_refused(hooked: Path) -> None:
    """The same hook, once the file has a superseded artifact: parsed, and the stale buffer
    refused (what the lazy path must never skip)."""
    write(hooked, "app.py", V2)
    assert tm(hooked, "adopt", "app.py").returncode == 0
    assert _commit(hooked, "app.py").returncode == 0
    write(hooked, "app.py", PY_APP)
    git(hooked, "add", "app.py")
    proc, loaded = _loaded_by_hook(hooked)
    assert proc.returncode == 1 and "superseded" in proc.stderr
    assert "tinymem.symbols.treesitter" in loaded and "tree_sitter_language_pack" not in loaded


def test_an_edit_holding_no_older_text_is_not_parsed(hooked: Path) -> None:
    """The file has an older artifact, but the staged text does not contain it (nor any
    proposal's): no entity of it can be that artifact, so it passes unparsed; the same file
    staged with the older text is parsed and refused (the test above)."""
    write(hooked, "app.py", V2)
    assert tm(hooked, "adopt", "app.py").returncode == 0
    assert _commit(hooked, "app.py").returncode == 0
    assert tm(hooked, "status").returncode == 0  # the commit seen: no HEAD move left
    write(hooked, "app.py", V2.replace('"v": 2', '"v": 3'))
    git(hooked, "add", "app.py")
    proc, loaded = _loaded_by_hook(hooked)
    assert proc.returncode == 0, proc.stderr
    assert "app.py has hand edits" in proc.stderr
    assert loaded == []


def test_a_head_move_is_still_recorded_by_the_hook(hooked: Path) -> None:
    """HEAD moved since the ledger last looked (a commit made with --no-verify): the hook
    loads the recording code and records the move before judging what is staged."""
    write(hooked, "app.py", V2)
    git(hooked, "add", "app.py")
    git(hooked, "commit", "-qm", "v2", "--no-verify")
    before = git(hooked, "rev-parse", "refs/tinymem/heads/main").strip()
    write(hooked, "notes.txt", "todo\n")
    git(hooked, "add", "notes.txt")
    proc, loaded = _loaded_by_hook(hooked)
    assert proc.returncode == 0, proc.stderr
    assert "recorded 1 file git committed" in proc.stderr
    assert "tinymem.sync.headmove" in loaded
    assert git(hooked, "rev-parse", "refs/tinymem/heads/main").strip() != before
