"""`tm config`: the effective configuration with sources; setting values in git config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git
from tests.test_auditlog import clear_model_env, tma


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_model_env(monkeypatch)


def _settings(cwd: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = tma(cwd, "config", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return {s["key"]: s for s in json.loads(proc.stdout)["settings"]}


def test_defaults_with_sources_exact(repo: Path) -> None:
    proc = tma(repo, "config", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "settings": [
            {
                "key": "model",
                "value": "ollama_chat/qwen2.5-coder:7b",
                "source": "default",
                "env": "TM_MODEL",
                "default": "ollama_chat/qwen2.5-coder:7b",
                "help": "litellm model string",
            },
            {
                "key": "apiBase",
                "value": None,
                "source": "default",
                "env": "TM_API_BASE",
                "default": None,
                "help": "endpoint URL (e.g. http://localhost:11434)",
            },
            {
                "key": "budget",
                "value": None,
                "source": "default",
                "env": "TM_BUDGET",
                "default": None,
                "help": "prompt token budget (default: from the context)",
            },
            {
                "key": "context",
                "value": "8192",
                "source": "default",
                "env": "TM_CONTEXT",
                "default": "8192",
                "help": "model context window in tokens",
            },
            {
                "key": "timeout",
                "value": "120",
                "source": "default",
                "env": "TM_TIMEOUT",
                "default": "120",
                "help": "seconds to wait for the model",
            },
            {
                "key": "maxReply",
                "value": "200000",
                "source": "default",
                "env": "TM_MAX_REPLY",
                "default": "200000",
                "help": "largest reply accepted, in characters",
            },
            {
                "key": "repair",
                "value": "1",
                "source": "default",
                "env": "TM_REPAIR",
                "default": "1",
                "help": "repair rounds for blocked proposals (0: none)",
            },
            {
                "key": "memoryShare",
                "value": "0.15",
                "source": "default",
                "env": "TM_MEMORY_SHARE",
                "default": "0.15",
                "help": "share of the budget the notes may take in a prompt (0: no notes)",
            },
            {
                "key": "embedModel",
                "value": None,
                "source": "default",
                "env": "TM_EMBED_MODEL",
                "default": None,
                "help": "litellm embedding model for note recall (unset: words only)",
            },
            {
                "key": "embedApiBase",
                "value": None,
                "source": "default",
                "env": "TM_EMBED_API_BASE",
                "default": None,
                "help": "endpoint URL of the embedding model (default: apiBase)",
            },
        ]
    }
    text = tma(repo, "config").stdout.splitlines()
    assert text[0].split()[:3] == ["model", "ollama_chat/qwen2.5-coder:7b", "(default;"]
    assert text[1].split()[:3] == ["apiBase", "(not", "set)"]


def test_set_repository_and_global_values_and_precedence(repo: Path) -> None:
    proc = tma(repo, "config", "model", "openai/local")
    assert proc.returncode == 0, proc.stderr
    assert "tinymem.model = openai/local  (repository:" in proc.stdout
    assert git(repo, "config", "--local", "tinymem.model").strip() == "openai/local"
    proc = tma(repo, "config", "--global", "tinymem.apibase", "http://localhost:1234/v1")
    assert proc.returncode == 0, proc.stderr
    assert git(repo, "config", "--global", "tinymem.apiBase").strip() == "http://localhost:1234/v1"
    assert tma(repo, "config", "--global", "model", "ollama/global").returncode == 0
    s = _settings(repo)
    assert (s["model"]["value"], s["model"]["source"]) == ("openai/local", "repository")
    assert (s["apiBase"]["value"], s["apiBase"]["source"]) == ("http://localhost:1234/v1", "global")
    s = _settings(repo, env={"TM_MODEL": "from/env"})
    assert (s["model"]["value"], s["model"]["source"]) == ("from/env", "environment")
    # KEY alone prints the value, like git config KEY; an unset key prints nothing, exit 1.
    assert tma(repo, "config", "model").stdout == "openai/local\n"
    unset = tma(repo, "config", "budget")
    assert (unset.returncode, unset.stdout) == (1, "")
    one = json.loads(tma(repo, "config", "apiBase", "--json").stdout)
    assert (one["value"], one["source"]) == ("http://localhost:1234/v1", "global")
    # Setting while the environment overrides says so.
    proc = tma(repo, "config", "timeout", "30", env={"TM_TIMEOUT": "5"})
    assert proc.returncode == 0 and "TM_TIMEOUT is set in the environment" in proc.stdout
    written = json.loads(tma(repo, "config", "context", "16384", "--json").stdout)
    assert written["key"] == "context" and written["scope"] == "repository"
    assert written["overridden_by"] is None


def test_refuses_unknown_keys_api_keys_and_bad_values(repo: Path) -> None:
    cases = [
        (["config", "colour", "blue"], "unknown setting 'colour'"),
        (["config", "apiKey", "x"], "never stores keys"),
        (["config", "OPENAI_API_KEY", "x"], "never stores keys"),
        (["config", "tinymem.token", "x"], "never stores keys"),
        (["config", "apiBase", "sk-abcdef0123456789"], "looks like an API key"),
        (["config", "budget", "lots"], "budget must be a whole number"),
        (["config", "timeout", "0"], "timeout must be positive"),
        (["config", "--global", "model"], "--global applies when setting"),
        (["config", "nope"], "unknown setting 'nope'"),
    ]
    for args, needle in cases:
        proc = tma(repo, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert needle in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    config = (repo / ".git" / "config").read_text()
    assert "tinymem" not in config and "sk-" not in config


def test_outside_a_repository_only_global(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    s = _settings(plain, env=env)
    assert s["model"]["source"] == "default"
    proc = tma(plain, "config", "model", "x/y", env=env)
    assert proc.returncode == 2 and "--global" in proc.stderr
    assert tma(plain, "config", "--global", "model", "x/y", env=env).returncode == 0
    assert _settings(plain, env=env)["model"]["source"] == "global"
