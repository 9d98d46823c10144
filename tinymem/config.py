"""Effective configuration and where each value came from.

Precedence: command-line flag > environment (TM_*) > repository git config > global git config
> default. API keys are never read or stored here: litellm reads the providers' usual
environment variables itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pygit2

from tinymem.errors import UsageError

DEFAULT_MODEL = "ollama_chat/qwen2.5-coder:7b"


@dataclass(frozen=True)
class Setting:
    key: str  # git config name under [tinymem]
    env: str
    default: str | None
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting("model", "TM_MODEL", DEFAULT_MODEL, "litellm model string"),
    Setting("apiBase", "TM_API_BASE", None, "endpoint URL (e.g. http://localhost:11434)"),
    Setting("budget", "TM_BUDGET", None, "prompt token budget (default: from the context)"),
    Setting("context", "TM_CONTEXT", "8192", "model context window in tokens"),
    Setting("timeout", "TM_TIMEOUT", "120", "seconds to wait for the model"),
    Setting("maxReply", "TM_MAX_REPLY", "200000", "largest reply accepted, in characters"),
)
_BY_KEY = {s.key: s for s in SETTINGS}


@dataclass(frozen=True)
class Value:
    key: str
    value: str | None
    source: str  # "flag" | "environment" | "repository" | "global" | "default"


def _git_value(repo: pygit2.Repository | None, key: str) -> tuple[str | None, str]:
    name = f"tinymem.{key}"
    if repo is not None:
        local = os.path.join(repo.path, "config")
        if os.path.exists(local):
            cfg = pygit2.Config(local)
            if name in cfg:
                return str(cfg[name]), "repository"
    try:
        glob = pygit2.Config.get_global_config()
    except (OSError, pygit2.GitError):
        return None, ""
    if name in glob:
        return str(glob[name]), "global"
    return None, ""


def resolve(
    repo: pygit2.Repository | None, flags: dict[str, str | None] | None = None
) -> dict[str, Value]:
    flags = flags or {}
    out: dict[str, Value] = {}
    for s in SETTINGS:
        flag = flags.get(s.key)
        if flag is not None:
            out[s.key] = Value(s.key, flag, "flag")
            continue
        env = os.environ.get(s.env)
        if env:
            out[s.key] = Value(s.key, env, "environment")
            continue
        val, where = _git_value(repo, s.key)
        if val is not None:
            out[s.key] = Value(s.key, val, where)
            continue
        out[s.key] = Value(s.key, s.default, "default")
    return out


def as_int(values: dict[str, Value], key: str) -> int | None:
    v = values[key]
    if v.value is None:
        return None
    try:
        n = int(v.value)
    except ValueError:
        raise UsageError(
            f"{key} must be a whole number, got {v.value!r} (from {v.source})"
        ) from None
    if n <= 0:
        raise UsageError(f"{key} must be positive, got {n} (from {v.source})")
    return n


def setting(key: str) -> Setting:
    try:
        return _BY_KEY[key]
    except KeyError:
        known = ", ".join(_BY_KEY)
        raise UsageError(f"unknown setting {key!r}; known: {known}") from None
