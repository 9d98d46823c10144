"""Rendering shared by the commands: JSON to stdout, human text through rich.

rich is imported on first use, not at start-up: every `tm` run pays for its imports, and
`tm status` and the pre-commit hook are run often enough for those milliseconds to count.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

_out: Console | None = None
_err: Console | None = None
_paging = False  # stdout goes to a pager that shows a terminal: styled as for one
no_pager = False  # `tm --no-pager`


def out() -> Console:
    global _out
    if _out is None:
        from rich.console import Console

        _out = Console(highlight=False, soft_wrap=True)
    return _out


def err() -> Console:
    global _err
    if _err is None:
        from rich.console import Console

        _err = Console(stderr=True, highlight=False, soft_wrap=True)
    return _err


def escape(text: str) -> str:
    """Text shown literally by rich: `[` in a path or symbol is not markup."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def stdout_styled() -> bool:
    """Whether text for stdout gets rich's styling (rich's own test), answered without
    importing rich when stdout is plainly not a terminal and nothing forces colour: the
    common case of scripts, hooks and pipes, where rich would cost more than the command."""
    if _paging:
        return True
    if sys.stdout is None:
        return False
    if "TTY_COMPATIBLE" not in os.environ and "FORCE_COLOR" not in os.environ:
        try:
            if not sys.stdout.isatty():
                return False
        except ValueError:
            return False
    return out().is_terminal


def write_rows(rows: list[str], styled: bool) -> None:
    """Lines to stdout: through rich when `styled` (they hold markup), else as they are."""
    if styled:
        out().print("\n".join(rows))
    elif sys.stdout is not None:  # None: stdout was closed before tm started
        sys.stdout.write("".join(row + "\n" for row in rows))
        sys.stdout.flush()


Cell = str | tuple[str, str]  # text, or (text, rich style)


def write_table(
    columns: list[str], rows: list[list[Cell]], *, title: str | None = None, key: int = 0
) -> None:
    """Records to stdout. On a terminal, a rich table that may shorten cells to fit, but folds
    column `key` (an entity key: its end, the symbol, matters most) rather than cut it.
    Piped or redirected, like git: one record per line, tab-separated, complete, no header,
    no colour, so `cut -f1` and `grep` see every name whole."""

    def text(cell: Cell) -> str:
        return cell if isinstance(cell, str) else cell[0]

    if not stdout_styled():
        write_rows(["\t".join(text(c) for c in row) for row in rows], False)
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False, title=title)
    for i, name in enumerate(columns):
        if i == key:
            table.add_column(name, overflow="fold", ratio=3)
        else:
            table.add_column(name, overflow="ellipsis")
    for row in rows:
        table.add_row(
            *(
                escape(c) if isinstance(c, str) else f"[{c[1]}]{escape(c[0])}[/]" if c[1] else ""
                for c in row
            )
        )
    out().print(table)


def _pager_command() -> str | None:
    """git's choice: GIT_PAGER, core.pager, PAGER, else less. None: do not page."""
    command = os.environ.get("GIT_PAGER")
    if command is None:
        import subprocess

        found = subprocess.run(
            ["git", "config", "--get", "core.pager"], capture_output=True, text=True, check=False
        )
        command = found.stdout.strip() if found.returncode == 0 else None
    if command is None:
        command = os.environ.get("PAGER", "less")
    return None if command.strip() in ("", "cat") else command


def page() -> None:
    """Send the rest of stdout through the pager, as git does for long output: only when
    stdout is a terminal (never for pipes, scripts or --json) and not `tm --no-pager`. The
    pager gets LESS=FRX unless LESS is set: it exits at once when the text fits a screen."""
    global _out, _paging
    if no_pager or sys.stdout is None or not sys.stdout.isatty():
        return
    command = _pager_command()
    if command is None:
        return
    import atexit
    import shutil
    import subprocess

    from rich.console import Console

    width = shutil.get_terminal_size().columns
    env = {**os.environ, "LESS": os.environ.get("LESS", "FRX"), "LV": os.environ.get("LV", "-c")}
    try:
        pager = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        return  # no pager to be had: print as usual
    assert pager.stdin is not None
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(pager.stdin.fileno(), 1)
    pager.stdin.close()
    _out = Console(highlight=False, soft_wrap=True, force_terminal=True, width=width)
    _paging = True

    def finish() -> None:
        with contextlib.suppress(BrokenPipeError, ValueError):  # the user quit early
            sys.stdout.flush()
        os.dup2(saved, 1)  # the pager sees end of input
        pager.wait()

    atexit.register(finish)


def emit_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def short(oid: str | None) -> str:
    return "-" if not oid else oid[:12]
