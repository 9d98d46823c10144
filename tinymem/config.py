"""Effective configuration and where each value came from.

Precedence: command-line flag > environment (TM_*) > repository git config > global git config
> default. API keys are never read or stored here: litellm reads the providers' usual
environment variables itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pygit2

from tinymem.errors import UsageError

if TYPE_CHECKING:
    from tinymem.repository import Repo

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
    Setting("repair", "TM_REPAIR", "1", "repair rounds for blocked proposals (0: none)"),
    Setting(
        "memoryShare",
        "TM_MEMORY_SHARE",
        "0.15",
        "share of the budget the notes may take in a prompt (0: no notes)",
    ),
    Setting(
        "embedModel",
        "TM_EMBED_MODEL",
        None,
        "litellm embedding model for note recall (unset: words only)",
    ),
    Setting(
        "embedApiBase",
        "TM_EMBED_API_BASE",
        None,
        "endpoint URL of the embedding model (default: apiBase)",
    ),
)
_BY_KEY = {s.key: s for s in SETTINGS}
NUMERIC_SETTINGS = ("budget", "context", "timeout", "maxReply")


@dataclass(frozen=True)
class Value:
    key: str
    value: str | None
    source: str  # "flag" | "environment" | "repository" | "global" | "default"


def _git_value(repo: pygit2.Repository | None, key: str) -> tuple[str | None, str]:
    name = f"tinymem.{key}"
    if repo is not None:
        from tinymem.repository import common_git_dir

        local = os.path.join(common_git_dir(repo), "config")
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


MAX_REPAIR = 5  # a model that fails five times in a row will not get it right on the sixth


def repair_rounds(values: dict[str, Value]) -> int:
    """`repair`: how many follow-up rounds `tm ask` may spend on blocked proposals."""
    v = values["repair"]
    try:
        n = int(v.value if v.value is not None else "1")
    except ValueError:
        raise UsageError(
            f"repair must be a whole number, got {v.value!r} (from {v.source})"
        ) from None
    if not 0 <= n <= MAX_REPAIR:
        raise UsageError(f"repair must be 0 to {MAX_REPAIR}, got {n} (from {v.source})")
    return n


MAX_MEMORY_SHARE = 0.5  # past half the budget, notes would crowd out the code they are about


def memory_share(values: dict[str, Value]) -> float:
    """`memoryShare`: the fraction of the prompt budget recalled notes may take."""
    v = values["memoryShare"]
    try:
        share = float(v.value if v.value is not None else "0.15")
    except ValueError:
        share = -1.0
    if not 0 <= share <= MAX_MEMORY_SHARE:  # also NaN
        raise UsageError(
            f"memoryShare must be a number from 0 to {MAX_MEMORY_SHARE}, got {v.value!r}"
            f" (from {v.source})"
        )
    return share


@dataclass(frozen=True)
class Embedding:
    """The embedding model note recall asks, and where (`embedModel`, `embedApiBase`)."""

    model: str
    api_base: str | None
    timeout: float


def embedding(values: dict[str, Value]) -> Embedding | None:
    """None when `embedModel` is unset: recall by words only, no call. The chat model's
    endpoint is the embedding model's too unless `embedApiBase` names another."""
    model = (values["embedModel"].value or "").strip()
    if not model:
        return None
    base = values["embedApiBase"].value or values["apiBase"].value
    return Embedding(model, base or None, float(as_int(values, "timeout") or 120))


# tm's own secret for its own server, not a provider's key: `tm config serveToken T` may
# store it. Kept out of SETTINGS so that `tm config` and `tm doctor` never print it.
SERVE_TOKEN = Setting(
    "serveToken", "TM_SERVE_TOKEN", None, "bearer token tm serve requires (never printed)"
)


def serve_token(repo: pygit2.Repository | None, flag: str | None) -> str | None:
    """The bearer token `tm serve` requires: --token > TM_SERVE_TOKEN > tinymem.serveToken."""
    if flag:
        return flag
    env = os.environ.get(SERVE_TOKEN.env)
    if env:
        return env
    value, _ = _git_value(repo, SERVE_TOKEN.key)
    return value or None


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


# ------------------------------------------------------------------------- tm config KEY VALUE

_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "credential")
# Prefixes of the providers' key formats: a value like this is a key pasted in the wrong place.
_SECRET_VALUE_PREFIXES = ("sk-", "sk_", "sk-ant-", "xai-", "gsk_", "AIza", "Bearer ")


@dataclass(frozen=True)
class Written:
    key: str
    value: str
    scope: str  # "repository" | "global"
    path: str  # the config file written
    overridden_by: str | None  # a TM_* variable that wins over the file right now


def find_setting(key: str) -> Setting:
    """The setting named `key` (`model`, `tinymem.model`, any case); UsageError otherwise."""
    name = key.removeprefix("tinymem.")
    lowered = name.lower()
    if lowered == SERVE_TOKEN.key.lower():
        return SERVE_TOKEN  # "token" in its name, but it is no provider's key
    if any(word in lowered for word in _SECRET_WORDS):
        raise UsageError(
            f"{key!r} looks like an API key setting: tm never stores keys; export the"
            " provider's environment variable (e.g. OPENAI_API_KEY) in your shell instead"
        )
    for s in SETTINGS:
        if s.key.lower() == lowered:
            return s
    return setting(name)  # raises UsageError naming the known settings


def write_setting(repo: Repo | None, key: str, value: str, *, global_: bool) -> Written:
    """Set `tinymem.KEY` in the repository's git config, or the user's with `global_`."""
    s = find_setting(key)
    if value.startswith(_SECRET_VALUE_PREFIXES):
        raise UsageError(
            f"the value for {s.key} looks like an API key: tm never stores keys; export the"
            " provider's environment variable instead"
        )
    if s.key in NUMERIC_SETTINGS:
        as_int({s.key: Value(s.key, value, "argument")}, s.key)
    if s.key == "memoryShare":
        memory_share({s.key: Value(s.key, value, "argument")})
    if not value.strip():
        raise UsageError(f"{s.key} needs a value")
    if s.key in ("apiBase", "embedApiBase"):
        check_api_base(value)
    conf, path, scope = _config_file(repo, global_)
    name = f"tinymem.{s.key}"
    try:
        conf[name] = value
    except (OSError, pygit2.GitError) as exc:
        raise UsageError(f"cannot write {name} to the {scope} git config: {exc}") from exc
    env = os.environ.get(s.env)
    return Written(s.key, value, scope, path, s.env if env else None)


def check_api_base(value: str) -> None:
    """An endpoint URL: http(s)://host[:port][/path]. Anything else would fail at the first
    ask, far from where it was set."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 (raises ValueError for a port that is no number)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"apiBase must be a URL such as http://localhost:11434 (Ollama) or"
            f" http://localhost:8080/v1 (an OpenAI-compatible server), got {value!r}"
        )


@dataclass(frozen=True)
class Unset:
    key: str
    scope: str
    path: str
    removed: bool  # False: it was not set there


def unset_setting(repo: Repo | None, key: str, *, global_: bool) -> Unset:
    """Remove `tinymem.KEY` from the repository's git config, or the user's with `global_`."""
    s = find_setting(key)
    _, path, scope = _config_file(repo, global_)
    # That file alone: the repository's config object also reads the global one.
    conf = pygit2.Config(path) if os.path.exists(path) else None
    name = f"tinymem.{s.key}"
    if conf is None or name not in conf:
        return Unset(s.key, scope, path, False)
    try:
        del conf[name]
    except (OSError, pygit2.GitError) as exc:
        raise UsageError(f"cannot remove {name} from the {scope} git config: {exc}") from exc
    return Unset(s.key, scope, path, True)


def _config_file(repo: Repo | None, global_: bool) -> tuple[pygit2.Config, str, str]:
    """The git config file a setting is written to: (config, its path, scope)."""
    if global_:
        try:
            conf = pygit2.Config.get_global_config()
            path = _global_config_path()
        except (OSError, pygit2.GitError):
            # No global config file yet: create ~/.gitconfig, where git itself would.
            path = os.path.join(os.path.expanduser("~"), ".gitconfig")
            conf = pygit2.Config(path)
        scope = "global"
    else:
        if repo is None:
            raise UsageError("not inside a repository: use --global to set it for your user")
        # The repository level of git's own config (shared by linked worktrees).
        conf = repo.git.config
        path = os.path.join(repo.common_dir, "config")
        scope = "repository"
    return conf, path, scope


def _global_config_path() -> str:
    home = os.path.join(os.path.expanduser("~"), ".gitconfig")
    xdg = os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config"),
        "git",
        "config",
    )
    return home if os.path.exists(home) or not os.path.exists(xdg) else xdg
