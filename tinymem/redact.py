"""Secrets never reach the ledger or the terminal: credentials in an endpoint URL
(`https://user:key@host`) and the values of the credential variables in the environment
(an endpoint may echo the key in an error message)."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["redact", "redact_url"]

MASK = "***"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
_MIN_SECRET = 6  # shorter values would mask ordinary words


def redact_url(url: str | None) -> str | None:
    """`url` without the user and password it may carry."""
    if not url or "@" not in url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, f"{MASK}@{host}", parts.path, parts.query, parts.fragment))


def _secrets(url: str | None) -> list[str]:
    found = [
        value
        for name, value in os.environ.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET
    ]
    if url and "@" in url:
        try:
            parts = urlsplit(url)
        except ValueError:
            parts = None
        if parts is not None:
            found += [s for s in (parts.password, parts.username) if s and len(s) >= 3]
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
