"""Rendering shared by the commands: JSON to stdout, human text through rich.

rich is imported on first use, not at start-up: every `tm` run pays for its imports, and
`tm status` and the pre-commit hook are run often enough for those milliseconds to count.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console

_out: Console | None = None
_err: Console | None = None
_paging = False  # stdout goes to a pager that shows a terminal: styled as for one
no_pager = False  # `tm --no-pager`
EXIT_CLOSED_PIPE = 141  # what a shell reports for git killed by SIGPIPE (128 + 13)


def closed_pipe() -> NoReturn:
    """The reader of stdout went away (`tm log | head -1`, a pager quit early): end quietly
    with git's status, not 1 ("a check found something"). Later writes and the interpreter's
    final flush go to /dev/null, so no "Exception ignored" follows on stderr."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    raise SystemExit(EXIT_CLOSED_PIPE)


def _console(**options: Any) -> Console:
    """A rich Console whose closed pipe ends tm as `closed_pipe` says (rich's own exits 1)."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            closed_pipe()

    return _Console(highlight=False, soft_wrap=True, **options)


def out() -> Console:
    global _out
    if _out is None:
        _out = _console()
    return _out


def err() -> Console:
    global _err
    if _err is None:
        _err = _console(stderr=True)
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


def write_table(columns: list[str], rows: Sequence[Sequence[Cell]], *, key: int = 0) -> None:
    """Records to stdout, every cell whole (names are copied from here into commands).

    On a terminal, aligned columns under a header when they fit its width; when they do not,
    each record's column `key` (an entity key) on a line of its own, its other cells aligned on
    the next, indented. Piped or redirected, like git: one record per line, tab-separated, no
    header, no colour, so `cut -f1` and `grep` see every name whole."""

    def text(cell: Cell) -> str:
        return cell if isinstance(cell, str) else cell[0]

    if not stdout_styled():
        write_rows(["\t".join(text(c) for c in row) for row in rows], False)
        return
    from rich.cells import cell_len

    def shown(cell: Cell, width: int) -> str:
        plain = text(cell)
        pad = " " * max(0, width - cell_len(plain))
        if isinstance(cell, str) or not cell[1] or not plain:
            return escape(plain) + pad
        return f"[{cell[1]}]{escape(plain)}[/]" + pad

    def line(cells: Sequence[Cell], widths: list[int]) -> str:
        return "  ".join(shown(c, w) for c, w in zip(cells, widths, strict=True)).rstrip()

    widths = [
        max([cell_len(name)] + [cell_len(text(r[i])) for r in rows])
        for i, name in enumerate(columns)
    ]
    header: list[Cell] = [(name, "bold") for name in columns]
    if sum(widths) + 2 * (len(widths) - 1) <= out().width:
        write_rows([line(header, widths)] + [line(r, widths) for r in rows], True)
        return
    rest = [i for i in range(len(columns)) if i != key]
    sub = [widths[i] for i in rest]
    lines = [shown(header[key], 0), "    " + line([header[i] for i in rest], sub)]
    for r in rows:
        lines += [shown(r[key], 0), "    " + line([r[i] for i in rest], sub)]
    write_rows(lines, True)


def diff_markup(diff: str) -> list[str]:
    """A unified diff's lines as rich markup in the terminal's own colours (readable on a dark
    and a light background alike: no fixed foreground for the unchanged lines)."""
    rows = []
    for line in diff.splitlines():
        style = (
            "bold"
            if line.startswith(("---", "+++"))
            else "green"
            if line.startswith("+")
            else "red"
            if line.startswith("-")
            else "cyan"
            if line.startswith("@@")
            else ""
        )
        rows.append(f"[{style}]{escape(line)}[/]" if style else escape(line))
    return rows


def _pager_command() -> str | None:
    """git's choice: GIT_PAGER, core.pager, PAGER, else less. None: do not page."""
    command = os.environ.get("GIT_PAGER")
    if command is None:
        from tinymem.gitcmd import git_output

        # None (unset, no git, or a git that did not answer in time): the fallbacks below.
        found = git_output(".", "config", "--get", "core.pager")
        command = found.decode("utf-8", "replace").strip() if found is not None else None
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
    _out = _console(force_terminal=True, width=width)
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
