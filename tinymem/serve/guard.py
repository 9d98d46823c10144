"""Who may ask `tm serve`: checked on every request before any handler runs.

A server on 127.0.0.1 is not private: every web page the user opens can send it requests.
Browsers send a POST with a "simple" Content-Type (text/plain, form data) without asking
first (no CORS preflight), so a page could write files through `/v1/user/code`; and a page
whose domain the attacker re-points at 127.0.0.1 (DNS rebinding) can even read the answers,
its requests then carrying the attacker's own name in `Host`. Hence, when bound to loopback:
the Host must name loopback, any Origin must be a loopback origin, and a POST must be
`application/json` (a type a browser only sends cross-origin after a preflight that tm never
answers with CORS headers). Off loopback the bearer token is the defence (a page cannot add
`Authorization` to a cross-origin request without that preflight either); the JSON rule stays.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["LOOPBACK_HOSTS", "Access", "Refusal", "is_loopback", "refusal"]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class Access:
    loopback: bool  # bound to a loopback address: Host and Origin must be loopback as well
    token: str = ""  # the bearer token every request must carry; "" for none


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str
    headers: Mapping[str, str] | None = None


def is_loopback(host: str) -> bool:
    return host.strip().strip("[]").lower() in LOOPBACK_HOSTS


def _hostname(authority: str) -> str | None:
    """The host part of `Host` ("localhost:4321", "[::1]:4321"), lower-cased, or None."""
    try:
        return urlsplit("//" + authority.strip()).hostname
    except ValueError:  # "[::1" and the like
        return None


def _loopback_origin(origin: str) -> bool:
    try:
        parts = urlsplit(origin.strip())
        name = parts.hostname
    except ValueError:
        return False
    # "null" (a sandboxed frame, a file:// page) has no host and is refused like any other.
    return parts.scheme in ("http", "https") and name is not None and name in LOOPBACK_HOSTS


def _bearer(header: str) -> str | None:
    """The token of `Authorization: Bearer TOKEN`; the scheme is case-insensitive (RFC 7235)."""
    scheme, _, value = header.strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def refusal(
    access: Access, method: str, headers: Mapping[str, str], content_type: str
) -> Refusal | None:
    """Why this request is refused, or None when it may go on."""
    if access.loopback:
        host = headers.get("Host")
        # No Host at all is not a browser (browsers always send one): nothing to rebind.
        if host is not None and _hostname(host) not in LOOPBACK_HOSTS:
            return Refusal(
                403,
                f"the Host {host!r} is not this machine's loopback; tm serve answers only"
                " requests addressed to 127.0.0.1, localhost or [::1]",
            )
        origin = headers.get("Origin")
        if origin is not None and not _loopback_origin(origin):
            return Refusal(
                403,
                f"requests from the web page {origin!r} are refused; tm serve answers"
                " only local clients and pages served from loopback",
            )
    if access.token:
        given = _bearer(headers.get("Authorization", ""))
        challenge = {"WWW-Authenticate": "Bearer"}
        if given is None:
            return Refusal(
                401, "a bearer token is required (Authorization: Bearer TOKEN)", challenge
            )
        if not hmac.compare_digest(given.encode(), access.token.encode()):
            return Refusal(
                401,
                "the bearer token is wrong: send the one tm serve was started with"
                " (--token, TM_SERVE_TOKEN or tinymem.serveToken)",
                challenge,
            )
    if method == "POST" and content_type != "application/json":
        return Refusal(
            415,
            f"the request body must be JSON sent as Content-Type: application/json, not"
            f" {content_type!r}",
        )
    return None
