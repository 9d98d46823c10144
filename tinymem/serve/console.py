"""What `tm serve` prints while it runs: one line an event, never a traceback.

aiohttp logs a malformed request (a bad request line, header or chunk) as "Error handling
request" with the parser's traceback, through the `logging` module's last-resort handler; a
client's mistake is not tm's to report, so it is one line naming what was refused.
TM_DEBUG=1 adds the traceback, as it does for tm's own errors.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback

__all__ = ["install", "say"]

_LOGGERS = ("aiohttp",)  # aiohttp.server, aiohttp.web, aiohttp.access...


def say(message: str) -> None:
    print(f"tm serve: {message}", file=sys.stderr, flush=True)


class _OneLine(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            say(_line(record))
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
