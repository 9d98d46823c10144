"""How a failed command ends: one sentence on stderr and its documented exit code, never a
traceback (`TM_DEBUG=1` shows one for a bug). Shared by the command line (`cli.main`) and the
pre-commit hook's entry that runs without it (`commands/hookrun.py`)."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from tinymem.errors import TinymemError

__all__ = ["exit_for", "is_git_error"]


def is_git_error(exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return True
    # pygit2 is not imported here (~70 ms): only a command that loaded it can raise its error.
    pygit2 = sys.modules.get("pygit2")
    return pygit2 is not None and isinstance(exc, pygit2.GitError)


def exit_for(exc: BaseException) -> NoReturn:
    """End the process for `exc`, raised by a command (re-raised: SystemExit, and a bug's
    exception under TM_DEBUG)."""
    if isinstance(exc, TinymemError):
        print(f"tm: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        print("tm: interrupted", file=sys.stderr)
        sys.exit(130)
    if not isinstance(exc, Exception):
        raise exc
    from tinymem import interrupts

    if interrupts.seen():
        # Ctrl-C inside an import of a C extension comes out as an ImportError; any
        # failure after one is the interrupt's doing, not a bug to report.
        print("tm: interrupted", file=sys.stderr)
        sys.exit(interrupts.EXIT_INTERRUPTED)
    if is_git_error(exc):
        # Not a user mistake we could name better: still one sentence, never a traceback.
        print(f"tm: git or file system error: {exc}", file=sys.stderr)
        sys.exit(10)
    # A bug in tm, not a user mistake: still one sentence; TM_DEBUG=1 shows the traceback.
    if os.environ.get("TM_DEBUG"):
        raise exc
    print(
        f"tm: internal error ({type(exc).__name__}: {exc}); please report it,"
        " TM_DEBUG=1 shows the traceback",
        file=sys.stderr,
    )
    sys.exit(10)
