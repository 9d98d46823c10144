"""A request's JSON body, refused at the door when tm could not store its text, or when it
does not arrive in time.

JSON may spell a lone UTF-16 surrogate (`"\\ud83d"`, half an emoji cut by a careless client);
Python decodes it into a str that no UTF-8 encoder takes, so it would fail deep in the core
(writing the prompt, the file) as a 500. Naming the field here makes it the client's 400.
"""

from __future__ import annotations

import asyncio
import math
import os
from typing import Any

from aiohttp import web

from tinymem.errors import UsageError

__all__ = [
    "BODY_DEADLINE",
    "BODY_TIMEOUT",
    "BODY_TIMEOUT_ENV",
    "MAX_DEPTH",
    "BodyTimeout",
    "ClientGone",
    "body_timeout",
    "env_seconds",
    "json_body",
    "lone_surrogate",
    "too_deep",
]

# Seconds a request has to send its whole body once its headers are in. A client sends its
# request at once (even MAX_BODY's 8 MiB takes well under a second on loopback or a LAN); one
# that stops half-way and keeps its connection open would otherwise hold its request in flight
# for good, and with it a stop of the server (Ctrl-C, systemd's SIGTERM), which waits for
# every request in flight. Nothing has been done for such a request, so ending it costs
# nothing. TM_SERVE_BODY_TIMEOUT changes it (the tests use seconds, not 30).
BODY_TIMEOUT = 30.0
BODY_TIMEOUT_ENV = "TM_SERVE_BODY_TIMEOUT"

# Arrays and objects inside one another. An OpenAI request is ~5 deep and a tool's JSON
# schema seldom passes 20; nesting near the recursion limit (~1,000) is refused by json.loads
# with a RecursionError, or read and then met by every recursive step after it.
MAX_DEPTH = 100
_TOO_DEEP = f"the request body nests arrays and objects more than {MAX_DEPTH} deep"


class ClientGone(Exception):
    """The client hung up before its whole request body arrived: there is no one to answer,
    and nothing was done."""


class BodyTimeout(Exception):
    """The client sent its headers but not its whole body within the deadline: answered 408,
    and the connection closed (the rest of the body is never read)."""


def body_timeout() -> float:
    """BODY_TIMEOUT, or TM_SERVE_BODY_TIMEOUT's seconds; read once, when the server starts."""
    return env_seconds(BODY_TIMEOUT_ENV, BODY_TIMEOUT)


def env_seconds(name: str, default: float) -> float:
    """The seconds the environment variable `name` gives (above 0), or `default` unset."""
    given = os.environ.get(name, "").strip()
    if not given:
        return default
    try:
        seconds = float(given)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise UsageError(f"{name} must be a number of seconds above 0, not {given!r}")
    return seconds


BODY_DEADLINE: web.AppKey[float] = web.AppKey("body_deadline", float)


async def json_body(request: web.Request) -> Any:
    limit = request.app[BODY_DEADLINE]
    try:
        async with asyncio.timeout(limit):
            doc = await request.json()
    except TimeoutError:
        raise BodyTimeout(
            f"the request body did not arrive within {limit:g} s of its headers"
            f" ({request.method} {request.path}); send the whole request at once"
        ) from None
    except ConnectionResetError:  # aiohttp's "Connection lost" mid-body
        raise ClientGone(
            f"a client hung up before sending its whole request ({request.method}"
            f" {request.path}); nothing was done"
        ) from None
    except UnicodeDecodeError:
        raise UsageError("the request body is not UTF-8 text") from None
    except ValueError:
        raise UsageError("the request body is not JSON") from None
    except RecursionError:
        raise UsageError(_TOO_DEEP) from None
    if too_deep(doc):
        raise UsageError(_TOO_DEEP)
    where = lone_surrogate(doc)
    if where is not None:
        raise UsageError(
            f"{where} holds a lone UTF-16 surrogate (half of a character, such as"
            " \\ud83d without its pair), which is not text; send whole characters"
        )
    return doc


def _bad(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def lone_surrogate(doc: Any) -> str | None:
    """The field (`messages[0].content`) whose string holds a lone surrogate, or None.

    Iterative: json.loads accepts nesting as deep as the recursion limit allows, and a walk
    that recursed would hit that limit first."""
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if _bad(value):
                return where or "the body"
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                if _bad(key):
                    return f"a key of {where or 'the body'}"
                stack.append((f"{where}.{key}" if where else key, item))
        elif isinstance(value, list):
            for index in reversed(range(len(value))):
                stack.append((f"{where}[{index}]", value[index]))
    return None


def too_deep(doc: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest in `doc` more than `limit` deep (iterative, as above)."""
    stack: list[tuple[int, Any]] = [(0, doc)]
    while stack:
        depth, value = stack.pop()
        if isinstance(value, dict):
            items: Any = value.values()
        elif isinstance(value, list):
            items = value
        else:
            continue
        if depth == limit:
            return True
        stack.extend((depth + 1, item) for item in items)
    return False
