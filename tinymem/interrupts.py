"""Ctrl-C in `tm`: a KeyboardInterrupt while a command runs, a quiet exit around it.

While a command runs, SIGINT raises KeyboardInterrupt as usual (an accept rolls back on it, a
model call keeps what arrived) and is remembered: an interrupt that lands inside an import of
a C extension comes out as an ImportError ("PyCapsule_Import could not import module"), and
`cli.main` must not call that an internal error. Before the command (Python's imports of tm,
typer, rich: ~300 ms) nothing is being written, and an interrupt there used to print the
traceback of whichever import it hit: there it ends the process at once with
`tm: interrupted` and exit 130. After the command it is ignored: the command's work and exit
code stand, and what is left is the interpreter's teardown (where Python would restore the
default action and die of the signal). What Python does before `entry.main` runs (its own
start-up, `site`, finding the tinymem package) is beyond tm's reach.

Imports nothing beyond what Python has loaded at start-up: it is installed first.
"""

from __future__ import annotations

import os
import signal

__all__ = ["EXIT_INTERRUPTED", "after_command", "before_command", "during_command", "seen"]

EXIT_INTERRUPTED = 130  # errors.EXIT_CODES
_seen = False


def seen() -> bool:
    """Whether SIGINT came while the command ran."""
    return _seen


def _raise(signum: int, frame: object) -> None:
    global _seen
    _seen = True
    raise KeyboardInterrupt


def _leave(signum: int, frame: object) -> None:
    os.write(2, b"tm: interrupted\n")
    os._exit(EXIT_INTERRUPTED)  # nothing written yet, nothing printed: nothing to flush


def before_command() -> None:
    signal.signal(signal.SIGINT, _leave)


def during_command() -> None:
    signal.signal(signal.SIGINT, _raise)


def after_command() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
