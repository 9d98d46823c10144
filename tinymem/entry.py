"""The `tm` console script. For a whole-tree `tm status` (the command run most often, by
people and by scripts) it starts git's comparison of the work tree before the command line
and pygit2 are loaded (~110 ms of imports that git's ~80 ms then overlaps at 50,000 files);
everything else goes straight to `tinymem.cli`.

Ctrl-C: see `interrupts.py`.
"""

from __future__ import annotations

import os
import sys

from tinymem import interrupts

# Not `typing.TYPE_CHECKING`: importing typing (~3 ms) would come before the handler that
# makes Ctrl-C quiet (`interrupts`) is installed; mypy takes any constant of this name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from tinymem.gitsuspects import Probe

_STATUS_FLAGS = frozenset({"--json", "--check"})
_EXIT_IO = 10  # what cli.main gives an I/O failure (errors.EXIT_CODES; not imported here)
_early: Probe | None = None


def take_early_probe() -> Probe | None:
    """The comparison started for this run of `tm status`, once."""
    global _early
    probe, _early = _early, None
    return probe


def _run(command: Callable[[], None]) -> None:
    """`command` with Ctrl-C as KeyboardInterrupt (see `interrupts`)."""
    interrupts.during_command()
    try:
        command()
    except KeyboardInterrupt:
        # Only between here and the command's own handling (`cli.main`'s first lines).
        print("tm: interrupted", file=sys.stderr)
        raise SystemExit(interrupts.EXIT_INTERRUPTED) from None
    finally:
        interrupts.after_command()


def main() -> None:
    global _early
    interrupts.before_command()  # first: the imports below are start-up
    args = sys.argv[1:]
    if args == ["hook", "run", "pre-commit"]:
        # What the installed hook runs on every commit: without the command line's imports.
        from tinymem.commands.hookrun import main as run_hook

        try:
            _run(run_hook)
        except SystemExit as exc:
            _exit_now(exc.code)
        _exit_now(0)
    if not (args[:1] == ["status"] and set(args[1:]) <= _STATUS_FLAGS):
        from tinymem.cli import main as cli_main

        _run(cli_main)
        return
    try:
        from tinymem.gitsuspects import start

        _early = start(os.getcwd())
    except Exception:
        _early = None  # a deleted cwd, say: the command itself reports it properly
    from tinymem.cli import main as cli_main

    try:
        _run(cli_main)
    except SystemExit as exc:
        _exit_now(exc.code)
    _exit_now(0)


def _exit_now(code: object) -> None:
    """End a `tm status` run, or the pre-commit hook's check, without the interpreter's
    teardown.

    Clearing pygit2, tree-sitter, typer and rich's modules and objects costs ~30 ms at exit,
    more than all of status's own work on a 50,000-file tree (and ~15 % of a hook run on a
    one-file commit); the OS frees it all anyway. Safe here because status has closed what it
    wrote (stat and symbol caches) before it returns, and so has the hook (what it records of
    a HEAD move: objects, the ledger ref's compare-and-swap, `head-seen`, all renamed into
    place before `check` returns); only the output streams are left to flush.
    """
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        if sys.stderr is not None:
            print(code, file=sys.stderr)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue  # closed before tm started (`>&-`): there was nowhere to write
        try:
            stream.flush()
        except Exception:
            # Output lost (a closed pipe): an I/O error, never the code of a verdict.
            status = _EXIT_IO
    os._exit(status)
