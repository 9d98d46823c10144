"""The server's console: one line on stderr per request, so that whoever started `tm serve`
sees what it does (time, method and path, status; for a chat, the model, the episode and its
proposals; an error's sentence; a prompt the endpoint truncated).

Handlers add what they know to the request (`note`); the outermost middleware writes the line
once the response is decided."""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Any

from aiohttp import web

__all__ = ["emit", "line", "note"]

_KEY = "tinymem.console"


def note(request: web.Request, **fields: Any) -> None:
    """Add fields (model, episode, proposals, error, notice) to this request's line."""
    request.setdefault(_KEY, {}).update(fields)


def line(request: web.Request, status: int, error: str | None = None) -> str:
    fields: dict[str, Any] = dict(request.get(_KEY, {}))
    if error is not None:
        fields.setdefault("error", error)
    parts = [time.strftime("%H:%M:%S"), request.method, request.path, str(status)]
    if "model" in fields:
        parts.append(f"model {fields['model']}")
    if "episode" in fields:
        parts.append(f"episode {fields['episode']}")
    if "proposals" in fields:
        parts.append(f"proposals {fields['proposals']}")
    text = "tm serve: " + " ".join(parts)
    if fields.get("error"):
        text += f": {fields['error']}"
    if fields.get("notice"):
        text += f"; {fields['notice']}"
    return text


def emit(text: str) -> None:
    # A console that went away must not fail the request.
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)
