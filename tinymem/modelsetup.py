"""The commonest first-run mistakes in a model setting, told apart before any model is called.

A model string without its provider, an OpenAI-compatible local server with no key in the
environment, an Ollama route pointed at Ollama's OpenAI path: litellm reports each late (after
its ~2.5 s import), in its own words, as an unreachable or unknown model. Their shape is
enough to know them, so this module reads only the strings and never imports litellm.

`endpoint` answers whether anything listens at the api base: a TCP connect to its host and
port, so that a server that is not running is reported in milliseconds, not after the import.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from tinymem.errors import ModelSetupError, ModelUnreachableError
from tinymem.redact import redact_url

__all__ = [
    "OLLAMA_DEFAULT_BASE",
    "SetupProblem",
    "check_endpoint",
    "check_setup",
    "endpoint_address",
    "is_ollama",
    "problem",
]

OLLAMA_PREFIXES = ("ollama/", "ollama_chat/")
OLLAMA_DEFAULT_BASE = "http://localhost:11434"
# How long a TCP connect to the endpoint may take: a listening server answers a connect in
# milliseconds even when loaded (the kernel completes it, not the server's code).
CONNECT_TIMEOUT = 2.0


@dataclass(frozen=True)
class SetupProblem:
    message: str  # one sentence naming the fix
    fix: str  # the fix alone, as `tm doctor` lists it


def is_ollama(model: str) -> bool:
    return model.startswith(OLLAMA_PREFIXES)


def problem(
    model: str, api_base: str | None, environ: Mapping[str, str] | None = None
) -> SetupProblem | None:
    """The mistake in this model setting, if its shape shows one."""
    env = os.environ if environ is None else environ
    if "/" not in model and ":" in model:
        # An Ollama tag (`qwen2.5-coder:7b`) given without litellm's provider prefix.
        fix = f"--model ollama_chat/{model} (or `tm config model ollama_chat/{model}`)"
        return SetupProblem(
            f"the model {model} names no provider: did you mean ollama_chat/{model}? use {fix}",
            fix,
        )
    if is_ollama(model) and api_base and _path(api_base).rstrip("/").endswith("/v1"):
        base = _without_v1(api_base)
        route = model.split("/", 1)[0]
        fix = f"--api-base {base} (or keep /v1 with --model openai/{model.split('/', 1)[1]})"
        return SetupProblem(
            f"{redact_url(api_base)} is Ollama's OpenAI-compatible path: drop /v1 for"
            f" {route}/, e.g. {fix}",
            fix,
        )
    provider = model.split("/", 1)[0] if "/" in model else _bare_provider(model)
    if provider == "openai" and not env.get("OPENAI_API_KEY"):
        if api_base:
            fix = "export OPENAI_API_KEY=none"
            return SetupProblem(
                f"a local OpenAI-compatible server needs any key: {fix} (tm never stores keys)",
                fix,
            )
        fix = "export OPENAI_API_KEY=... in your shell"
        return SetupProblem(
            f"the model {model} is OpenAI's and OPENAI_API_KEY is not set: {fix}"
            " (tm never stores keys), or point tm at a local server with --api-base",
            fix,
        )
    return None


def check_setup(model: str, api_base: str | None) -> None:
    """Raise ModelSetupError (exit 2) when the setting cannot work as given."""
    found = problem(model, api_base)
    if found is not None:
        raise ModelSetupError(found.message)


def endpoint_address(model: str, api_base: str | None) -> tuple[str, int] | None:
    """The host and port a call to `model` connects to, when tm can know it without litellm:
    the api base's, or Ollama's default for an Ollama model with none."""
    base = api_base or (OLLAMA_DEFAULT_BASE if is_ollama(model) else None)
    if not base:
        return None  # a hosted provider's default endpoint: litellm knows it, tm does not
    try:
        parts = urlsplit(base if "://" in base else f"http://{base}")
        host = parts.hostname
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None  # litellm reports a URL it cannot use in its own words
    return (host, port) if host else None


def check_endpoint(model: str, api_base: str | None, where: str, timeout: float) -> None:
    """ModelUnreachableError when nothing accepts a connection at the endpoint: told at once
    (a refused connect takes microseconds) instead of after litellm's import and its retries."""
    address = endpoint_address(model, api_base)
    if address is None:
        return
    host, port = address
    if _proxied(host, api_base):
        return  # the call goes through a proxy: a direct connect proves nothing either way
    try:
        with socket.create_connection((host, port), timeout=min(timeout, CONNECT_TIMEOUT)):
            pass
    except socket.gaierror:
        raise ModelUnreachableError(
            f"cannot reach the model endpoint {where}: the host name {host} does not resolve;"
            " check --api-base or TM_API_BASE"
        ) from None
    except TimeoutError:
        raise ModelUnreachableError(
            f"cannot reach the model endpoint {where}: no answer to a connection within"
            f" {min(timeout, CONNECT_TIMEOUT):g} s; is the server running and the address right?"
        ) from None
    except OSError:
        raise ModelUnreachableError(
            f"cannot reach the model endpoint {where} for {model}: nothing listens at"
            f" {host}:{port}; is the server running? Set it with --api-base or TM_API_BASE"
        ) from None


def _proxied(host: str, api_base: str | None) -> bool:
    """Whether the HTTP client would reach `host` through a proxy (HTTP(S)_PROXY, ALL_PROXY,
    minus NO_PROXY), as httpx decides from the same variables."""
    from urllib.request import getproxies, proxy_bypass

    scheme = "https" if (api_base or "").startswith("https:") else "http"
    proxies = getproxies()
    if not (proxies.get(scheme) or proxies.get("all")):
        return False
    return not proxy_bypass(host)


def _path(url: str) -> str:
    try:
        return urlsplit(url).path
    except ValueError:
        return url


def _without_v1(url: str) -> str:
    trimmed = (redact_url(url) or url).rstrip("/")
    return trimmed[: -len("/v1")] if trimmed.endswith("/v1") else trimmed


def _bare_provider(model: str) -> str | None:
    # Bare names litellm routes to OpenAI by itself (`gpt-4o`, `o3-mini`).
    if model.startswith(("gpt-", "chatgpt-", "o1", "o3", "o4", "text-")):
        return "openai"
    return None
