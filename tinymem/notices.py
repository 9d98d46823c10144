"""Things tm did on its own that the user must hear about (a crash recovered, a stale lock
removed), said once on stderr whatever command is running. The CLI may redirect them; core
modules only call `emit`."""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = ["emit", "heard", "set_sink"]

_heard: list[str] = []


def _stderr(message: str) -> None:
    print(f"tm: {message}", file=sys.stderr)


_sink: Callable[[str], None] = _stderr


def set_sink(sink: Callable[[str], None]) -> None:
    global _sink
    _sink = sink


def emit(message: str) -> None:
    _heard.append(message)
    _sink(message)


def heard() -> list[str]:
    """Every notice of this process so far (`tm doctor` reports them)."""
    return list(_heard)
