"""The `tm` command line: parse, call the core, render. No logic of its own lives here."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import typer

from tinymem import __version__
from tinymem.errors import EXIT_CODES, TinymemError
from tinymem.failures import exit_for

_EPILOG = "Exit codes: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES) + "."

app = typer.Typer(
    name="tm",
    help=(
        "tinymem keeps a small coding model's memory in your repository's git objects: a vault"
        " of every artifact, a State Map of what is authoritative, and a ledger of every"
        " episode. It verifies the work tree before trusting it, and promotes model output only"
        " by proof."
    ),
    epilog=_EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tm {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    no_pager: bool = typer.Option(
        False,
        "--no-pager",
        "-P",
        help="Do not page long output (log, show, blame, state, diff) on a terminal.",
    ),
) -> None:
    from tinymem.commands import output

    output.no_pager = no_pager


def _register() -> None:
    from tinymem.commands import (
        ask,
        audit,
        branches,
        completion,
        core,
        hooks,
        mcp,
        notes,
        review,
        serve,
        undo,
    )

    core.register(app)
    audit.register(app)
    branches.register(app)
    ask.register(app)
    review.register(app)
    undo.register(app)
    hooks.register(app)
    notes.register(app)
    serve.register(app)
    mcp.register(app)
    completion.register(app)
    for info in app.registered_commands:
        if info.callback is not None:
            info.callback = _pipe_safe(info.callback)


def _pipe_safe(command: Callable[..., Any]) -> Callable[..., Any]:
    """A command whose stdout reader went away ends like git (see `output.closed_pipe`);
    caught here because click would turn the BrokenPipeError into exit 1."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:
            from tinymem.commands.output import closed_pipe

            closed_pipe()

    return run


_register()


def main() -> None:
    from tinymem.commands.completion import enable_if_completing

    enable_if_completing()
    sys.argv[1:] = _count_shorthand(sys.argv[1:])
    try:
        app(prog_name="tm")
    except SystemExit as exc:
        if exc.code == 130 and _typer_interrupted(exc):
            print("tm: interrupted", file=sys.stderr)
        raise
    except (TinymemError, KeyboardInterrupt, Exception) as exc:
        exit_for(exc)


_LOG_VALUED = frozenset({"-n", "--max-count", "--kind", "-b", "--branch"})


def _count_shorthand(args: list[str]) -> list[str]:
    """`tm log -3` as `tm log -n 3`, git's short form (click has no option named by digits)."""
    command = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if command is None or args[command] != "log":
        return args
    rest = args[command + 1 :]
    end = rest.index("--") if "--" in rest else len(rest)
    spelled: list[str] = []
    for i, a in enumerate(rest[:end]):
        a_value = i > 0 and rest[i - 1] in _LOG_VALUED  # `-n -3` stays as click reads it
        count = len(a) > 1 and a[0] == "-" and a[1:].isdigit() and not a_value
        spelled += ["-n", a[1:]] if count else [a]
    return args[: command + 1] + spelled + rest[end:]


def _typer_interrupted(exc: SystemExit) -> bool:
    """Whether typer turned a KeyboardInterrupt into this exit (`Exit(130) from e`): it says
    nothing then. A command that said why itself raises its Exit(130) from None."""
    raised = exc.__context__
    return raised is not None and isinstance(raised.__cause__, KeyboardInterrupt)
