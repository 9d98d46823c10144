"""Secrets never reach the ledger or the terminal: credentials in an endpoint URL (its user
and password, `?key=…`-style query parameters) and the values of the credential variables in
the environment (an endpoint may echo the key in an error message, and a user may paste it
into the URL)."""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["redact", "redact_url"]

MASK = "***"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
# Query parameters that carry a credential: `key`, `api_key`, `apiKey`, `access_token`,
# `client_secret`, `password`, `auth`; Azure's SAS signature is `sig`, OAuth's grant `code`.
_SECRET_PARAM = re.compile(r"key|token|secret|pass|pwd|credential|auth|signature", re.I)
_SECRET_PARAM_EXACT = frozenset({"sig", "code"})
_MIN_SECRET = 6  # shorter values would mask ordinary words


def _env_secrets() -> list[str]:
    return [
        value
        for name, value in os.environ.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET
    ]


def _is_secret_param(name: str, value: str, known: list[str]) -> bool:
    name = unquote(name)
    return (
        _SECRET_PARAM.search(name) is not None
        or name.lower() in _SECRET_PARAM_EXACT
        or unquote(value) in known
    )


def _query_secrets(query: str, known: list[str]) -> list[str]:
    """The values of `query`'s (`a=1&key=…`) credential parameters, as written."""
    found = []
    for part in re.split(r"[&;]", query):
        name, eq, value = part.partition("=")
        if eq and value and _is_secret_param(name, value, known):
            found.append(value)
    return found


def _mask_query(query: str, known: list[str]) -> str:
    out = []
    for part in re.split(r"([&;])", query):
        name, eq, value = part.partition("=")
        if eq and value and _is_secret_param(name, value, known):
            part = f"{name}={MASK}"
        out.append(part)
    return "".join(out)


def redact_url(url: str | None) -> str | None:
    """`url` without the user and password it may carry, the values of its credential query
    parameters, and any credential of the environment written into it."""
    if not url:
        return url
    known = _env_secrets()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return MASK
    netloc = parts.netloc
    if parts.username is not None or parts.password is not None:
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host  # an IPv6 address keeps its brackets
        netloc = f"{MASK}@{host}" + (f":{port}" if port is not None else "")
    clean = urlunsplit(
        (
            parts.scheme,
            netloc,
            parts.path,
            _mask_query(parts.query, known),
            _mask_query(parts.fragment, known),
        )
    )
    for secret in sorted(set(known), key=len, reverse=True):
        clean = clean.replace(secret, MASK)
    return clean


def _secrets(url: str | None) -> list[str]:
    found = _env_secrets()
    if url:
        try:
            parts = urlsplit(url)
        except ValueError:
            parts = None
        if parts is not None:
            found += [s for s in (parts.password, parts.username) if s and len(s) >= 3]
            for text in (parts.query, parts.fragment):
                found += [s for s in _query_secrets(text, found) if len(s) >= 3]
    return sorted(set(found), key=len, reverse=True)  # longest first: no partial masks


def redact(text: str, url: str | None = None) -> str:
    """`text` with every credential in use (and those of `url`) replaced by ***."""
    if url:
        clean = redact_url(url)
        if clean is not None:
            text = text.replace(url, clean)
    for secret in _secrets(url):
        text = text.replace(secret, MASK)
    return text
