"""`tm doctor`: each problem reported once, with its fix and exit 1; healthy means exit 0."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PY_APP, Initialise, git, tm, write
from tests.modelserver import ModelServer
from tests.test_auditlog import clear_model_env, tma


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_model_env(monkeypatch)


OPENAI = {"TM_MODEL": "openai/test", "OPENAI_API_KEY": "sk-test"}


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as s:
        yield s


FILES = {"app.py": PY_APP, "a.py": "def a():\n    return 1\n"}


def _doctor(repo: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, Any]:
    proc = tma(repo, "doctor", "--json", *args, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _status(doc: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c in doc["checks"]:
        out.setdefault(c["check"], []).append(c["status"])
    return out


def _problems(doc: Any) -> list[dict[str, Any]]:
    return [c for c in doc["checks"] if c["status"] == "fail"]


def _install_hook(repo: Path, text: str | None = None) -> Path:
    from tinymem.hook import HOOK_SCRIPT

    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(HOOK_SCRIPT if text is None else text)
    hook.chmod(0o755)
    return hook


def test_healthy_repository_exits_0(repo: Path, initialised: Initialise) -> None:
    initialised(FILES, commit=False)
    _install_hook(repo)
    code, doc = _doctor(repo)
    assert code == 0, doc
    assert doc["ok"] is True and doc["problems"] == 0 and doc["warnings"] == 0
    assert _status(doc) == {
        "repository": ["ok"],
        "state ref": ["ok"],
        "layout": ["ok"],
        "artifacts": ["ok"],
        "rebuild": ["ok"],
        "work tree": ["ok"],
        "grammars": ["ok"],
        "hook": ["ok"],
        "interrupted": ["ok"],
        "config": ["ok"],
        "api keys": ["ok"],
    }
    assert doc["stale_entities"] == 0 and doc["unreadable_files"] == []
    assert {c["key"]: c["source"] for c in doc["config"]}["model"] == "default"
    assert set(doc["api_keys"].values()) == {"not set"}
    proc = tma(repo, "doctor")
    assert proc.returncode == 0
    assert "No problems found (0 warning(s))." in proc.stdout


def test_hook_missing_foreign_or_old_is_a_warning_not_a_failure(
    repo: Path, initialised: Initialise
) -> None:
    initialised(FILES, commit=False)
    code, doc = _doctor(repo)
    assert code == 0
    (hook,) = [c for c in doc["checks"] if c["check"] == "hook"]
    assert hook["status"] == "warn" and "not installed" in hook["message"]
    assert hook["fix"] == "tm hook install"
    _install_hook(repo, "#!/bin/sh\nexit 0\n")
    (hook,) = [c for c in _doctor(repo)[1]["checks"] if c["check"] == "hook"]
    assert hook["status"] == "warn" and "not tinymem's hook" in hook["message"]
    _install_hook(repo, "#!/bin/sh\n# tinymem-hook v0\nexec tm hook run pre-commit\n")
    (hook,) = [c for c in _doctor(repo)[1]["checks"] if c["check"] == "hook"]
    assert hook["status"] == "warn" and "older tinymem hook" in hook["message"]
    # core.hooksPath is honored.
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    git(repo, "config", "core.hooksPath", "githooks")
    (repo / "githooks").mkdir()
    from tinymem.hook import HOOK_SCRIPT

    (repo / "githooks" / "pre-commit").write_text(HOOK_SCRIPT)
    (repo / "githooks" / "pre-commit").chmod(0o755)
    (hook,) = [c for c in _doctor(repo)[1]["checks"] if c["check"] == "hook"]
    assert hook["status"] == "ok" and "githooks" in hook["message"]


def test_not_initialized_is_one_problem(repo: Path) -> None:
    code, doc = _doctor(repo)
    assert code == 1
    (problem,) = _problems(doc)
    assert problem["check"] == "state ref" and problem["fix"] == "tm init"
    assert _status(doc)["rebuild"] == ["skip"]


def _garbage(repo: Path) -> None:
    (repo / ".git" / "refs" / "tinymem" / "heads" / "main").write_text("garbage\n")


def _blob(repo: Path) -> None:
    blob = git(repo, "rev-parse", "refs/tinymem/heads/main:files/a.py").strip()
    git(repo, "update-ref", "refs/tinymem/heads/main", blob)


def _absent(repo: Path) -> None:
    (repo / ".git" / "refs" / "tinymem" / "heads" / "main").write_text("01" * 20 + "\n")


@pytest.mark.parametrize(
    "corrupt,needle",
    [
        (_garbage, "unreadable"),
        (_blob, "points at a blob"),
        (_absent, "missing from the object database"),
    ],
)
def test_corrupted_state_ref_is_one_problem(
    repo: Path, initialised: Initialise, corrupt: Any, needle: str
) -> None:
    initialised(FILES, commit=False)
    corrupt(repo)
    code, doc = _doctor(repo)
    assert code == 1
    (problem,) = _problems(doc)
    assert problem["check"] == "state ref" and needle in problem["message"]
    assert "git update-ref refs/tinymem/heads/main" in problem["fix"]
    status = _status(doc)
    assert status["artifacts"] == status["rebuild"] == status["work tree"] == ["skip"]
    assert status["grammars"] == ["ok"]  # checks that do not need the ledger still run
    text = tma(repo, "doctor")
    assert text.returncode == 1
    assert text.stdout.count("FAIL") == 1 and "fix: point it back" in text.stdout
    assert "1 problem(s)" in text.stdout


def _forge_missing_artifact(repo: Path) -> str:
    """A well-formed episode whose entity record names an artifact that is not in the vault.

    The forged episode records its own files and transitions, so the ledger still replays to
    the stored State Map: the missing object is the only thing wrong.
    """
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    meta = json.loads(git(repo, "show", f"{tip}:meta/a.py"))
    old = meta["entities"]["a"]["artifact"]
    text = b"def a():\n    return 'never stored'"
    missing = hashlib.sha1(b"blob %d\x00" % len(text) + text).hexdigest()
    meta["entities"]["a"].update(artifact=missing, superseded=[old], source="user")
    env = {**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "forge-index")}

    def run(*args: str, data: str | None = None) -> str:
        return subprocess.run(
            ["git", *args],
            cwd=repo,
            env=env,
            input=data,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    meta_oid = run("hash-object", "-w", "--stdin", data=json.dumps(meta, indent=1) + "\n")
    episode = {
        "version": 1,
        "id": "f0f0f0f0f0f0",
        "kind": "adopt",
        "time": "2025-01-01T00:00:00.000000Z",
        "who": "forger",
        "summary": "forged",
        "outcome": "ok",
        "files": {"a.py": {"snapshot": meta["snapshot"], "meta": meta_oid}},
        "proposals": {},
        "transitions": [
            {
                "entity": "a.py::a",
                "from": "AUTHORITATIVE",
                "to": "SUPERSEDED",
                "artifact": old,
                "reason": "forged",
            },
            {
                "entity": "a.py::a",
                "from": None,
                "to": "AUTHORITATIVE",
                "artifact": missing,
                "reason": "forged",
            },
        ],
        "details": {},
    }
    episode_oid = run("hash-object", "-w", "--stdin", data=json.dumps(episode))
    run("read-tree", tip)
    run("update-index", "--cacheinfo", f"100644,{meta_oid},meta/a.py")
    run("update-index", "--cacheinfo", f"100644,{missing},entities/a.py/a")
    run("update-index", "--cacheinfo", f"100644,{episode_oid},episode/episode.json")
    tree = run("write-tree", "--missing-ok")
    forged = run("commit-tree", tree, "-p", tip, "-m", "forged")
    git(repo, "update-ref", "refs/tinymem/heads/main", forged)
    return missing


def test_missing_artifact_is_one_problem(repo: Path, initialised: Initialise) -> None:
    initialised(FILES, commit=False)
    missing = _forge_missing_artifact(repo)
    assert tm(repo, "rebuild").returncode == 0  # the ledger itself is consistent
    code, doc = _doctor(repo)
    assert code == 1
    (problem,) = _problems(doc)
    assert problem["check"] == "artifacts"
    assert problem["message"] == "1 object(s) the State Map names are missing from the vault"
    # Named twice (entities/ tree and the meta record), reported once.
    assert problem["details"] == [f"a.py::a in entities/: {missing[:12]}"]
    assert _status(doc)["rebuild"] == ["skip"]


def test_unreadable_file_and_stale_entities(repo: Path, initialised: Initialise) -> None:
    initialised(FILES, commit=False)
    write(repo, "app.py", PY_APP.replace("return path\n", "return path + '/'\n"))
    (repo / "a.py").unlink()
    (repo / "a.py").mkdir()  # a tracked file replaced by a directory cannot be read
    code, doc = _doctor(repo)
    assert code == 1
    (problem,) = _problems(doc)
    assert problem["check"] == "unreadable" and problem["details"] == ["a.py: not a regular file"]
    assert doc["unreadable_files"] == ["a.py"]
    # Client.get, Client and a: STALE entities are a warning, not a failure.
    assert doc["stale_entities"] == 3
    (wt,) = [c for c in doc["checks"] if c["check"] == "work tree"]
    assert wt["status"] == "warn" and wt["message"].startswith("3 STALE entities in 2 file(s)")


def test_bad_config_value_is_a_problem_and_keys_are_never_shown(
    repo: Path, initialised: Initialise
) -> None:
    initialised(FILES, commit=False)
    secret = "sk-do-not-print-this-0123456789"
    env = {"TM_BUDGET": "lots", "OPENAI_API_KEY": secret, "TM_MODEL": "openai/gpt-x"}
    code, doc = _doctor(repo, env=env)
    assert code == 1
    (problem,) = _problems(doc)
    assert problem["check"] == "config"
    assert "budget must be a whole number, got 'lots' (from environment)" in problem["message"]
    assert doc["api_keys"]["OPENAI_API_KEY"] == "set"
    assert doc["api_keys"]["ANTHROPIC_API_KEY"] == "not set"
    for args in ((), ("--json",)):
        proc = tma(repo, "doctor", *args, env=env)
        assert secret not in proc.stdout + proc.stderr
        assert "sk-do" not in proc.stdout + proc.stderr


def test_provider_key_not_set_is_a_warning(repo: Path, initialised: Initialise) -> None:
    initialised(FILES, commit=False)
    code, doc = _doctor(repo, env={"TM_MODEL": "anthropic/claude-x"})
    assert code == 0
    (keys,) = [c for c in doc["checks"] if c["check"] == "api keys"]
    assert keys["status"] == "warn" and keys["message"].startswith("ANTHROPIC_API_KEY is not set")


def test_unreachable_model_is_one_problem(repo: Path, initialised: Initialise) -> None:
    initialised(FILES, commit=False)
    code, doc = _doctor(repo, "--model", "--api-base", "http://127.0.0.1:9/v1", env=OPENAI)
    assert code == 1
    (problem,) = _problems(doc)
    assert problem["check"] == "model"
    assert "127.0.0.1:9" in problem["message"]
    assert problem["fix"].startswith("start the model server")
    assert {c["key"]: c["source"] for c in doc["config"]}["apiBase"] == "flag"
    # The same endpoint from git config; and without --model nothing is called at all.
    git(repo, "config", "tinymem.apiBase", "http://127.0.0.1:9/v1")
    code, doc = _doctor(repo, "--model", env=OPENAI)
    assert code == 1 and [p["check"] for p in _problems(doc)] == ["model"]
    assert {c["key"]: c["source"] for c in doc["config"]}["apiBase"] == "repository"
    assert _doctor(repo, env=OPENAI)[0] == 0


def test_reachable_model(repo: Path, initialised: Initialise, server: ModelServer) -> None:
    initialised(FILES, commit=False)
    server.add("OK")
    code, doc = _doctor(repo, "--model", "--api-base", server.openai_base, env=OPENAI)
    assert code == 0, doc
    (model,) = [c for c in doc["checks"] if c["check"] == "model"]
    assert model["status"] == "ok" and "answered in" in model["message"]
    assert len(server.chat_requests) == 1


def test_outside_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, doc = _doctor(plain, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert code == 1
    (problem,) = _problems(doc)
    assert problem["check"] == "repository"
    assert _status(doc)["grammars"] == ["ok"]
