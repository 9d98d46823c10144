"""What `tm serve` prints while it runs, on stderr: one line per request, so that whoever
started it sees what it does (time, method and path, status; for a chat, the model, the
episode and its proposals; an error's sentence; a prompt the endpoint truncated), and one line
per event aiohttp logs, never a traceback.

Handlers add what they know to the request (`note`); the outermost middleware writes the line
once the response is decided. aiohttp logs a malformed request (a bad request line, header or
chunk) as "Error handling request" with the parser's traceback; a client's mistake is not
tm's to report, so it is one line naming what was refused. TM_DEBUG=1 adds the traceback, as
it does for tm's own errors.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import traceback
from typing import Any

from aiohttp import web

__all__ = ["emit", "install", "line", "note"]

_KEY = "tinymem.console"
_LOGGERS = ("aiohttp",)  # aiohttp.server, aiohttp.web, aiohttp.access...


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


class _OneLine(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            emit(f"tm serve: {_line(record)}")
            if os.environ.get("TM_DEBUG") and record.exc_info and record.exc_info[1]:
                traceback.print_exception(record.exc_info[1], file=sys.stderr)
        except Exception:
            self.handleError(record)


def _line(record: logging.LogRecord) -> str:
    from aiohttp.http_exceptions import HttpProcessingError

    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, HttpProcessingError):
        # "Error handling request from %s": the parser's message, first line, is the why.
        peer = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
        why = _first_line(exc.message) or type(exc).__name__
        return f"refused a malformed HTTP request from {peer} ({exc.code}: {why})"
    message = _first_line(record.getMessage())
    if exc is not None:
        message += f" ({type(exc).__name__}: {_first_line(str(exc))})"
    return message


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0].rstrip(" :") if lines else ""


def install() -> None:
    """Route aiohttp's log records (warnings and worse) through `_OneLine`."""
    handler = _OneLine(logging.WARNING)
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.propagate = False
        logger.setLevel(logging.WARNING)
