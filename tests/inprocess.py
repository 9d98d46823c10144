"""`tm` run inside the test process, as a pipe would see it.

A `tm` process costs the interpreter's start and tm's imports (~0.3-1 s, litellm's 2.5 s on
every `tm ask`); the suite ran it ~3,000 times. Here a run gets what a process would: its own
argv, environment, working directory, stdin, stdout and stderr (pipes, not terminals, decoded
as `subprocess.run(text=True)` decodes them), its exit code, and none of the state an earlier
run left in tm's modules. Tests whose subject is the process itself (signals, crashes, the
hook git starts, start-up cost, `tm serve`) run it for real with `tm_process`.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import traceback
from pathlib import Path

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE)


def usable() -> bool:
    """In-process runs change the process's working directory and environment: only the main
    thread may do that, and `TM_TEST_PROCESS=1` turns them off for a whole run."""
    return (
        threading.current_thread() is threading.main_thread()
        and os.environ.get("TM_TEST_PROCESS") != "1"
    )


class _Pipe(io.TextIOWrapper):
    """A text stream over bytes, as Python sets one up for a pipe (no terminal, no fd)."""

    def __init__(self, errors: str) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors=errors, write_through=True)

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        self.flush()
        raw = self.buffer.getvalue()  # type: ignore[attr-defined]
        # What subprocess.run(text=True) does with what it read.
        decoded: str = raw.decode("utf-8")
        return decoded.replace("\r\n", "\n").replace("\r", "\n")


def _reset_tinymem_state() -> None:
    """What a fresh process would start with, for the modules that keep per-run state."""
    modules = sys.modules
    if (output := modules.get("tinymem.commands.output")) is not None:
        output._out = None  # type: ignore[attr-defined]
        output._err = None  # type: ignore[attr-defined]
        output._paging = False  # type: ignore[attr-defined]
        output.no_pager = False  # type: ignore[attr-defined]
    if (notices := modules.get("tinymem.notices")) is not None:
        notices._heard.clear()
        notices._sink = notices._stderr  # type: ignore[attr-defined]
    if (entry := modules.get("tinymem.entry")) is not None:
        entry._early = None  # type: ignore[attr-defined]
    if (treewatch := modules.get("tinymem.treewatch")) is not None:
        treewatch.stop_all()  # `tm serve` and `tm mcp` watch the work tree for the process


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run(
    cwd: Path, args: list[str], input: str | bytes | None, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    raw = input.encode() if isinstance(input, str) else (input or b"")
    stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    stdout, stderr = _Pipe("strict"), _Pipe("backslashreplace")
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_argv = sys.argv
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_handlers = {s: signal.getsignal(s) for s in _SIGNALS}
    saved_umask = os.umask(0o022)
    os.umask(saved_umask)
    status = 0
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.argv = ["tm", *args]
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        _reset_tinymem_state()
        try:
            from tinymem.cli import main

            main()
        except SystemExit as exc:
            status = _exit_status(exc.code)
        except BaseException:
            # What the interpreter does with an exception nothing caught.
            traceback.print_exc(file=sys.stderr)
            status = 1
        return subprocess.CompletedProcess(
            ["tm", *args], status, stdout=stdout.text(), stderr=stderr.text()
        )
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, handler in saved_handlers.items():
            if handler is not None:
                signal.signal(sig, handler)
        os.umask(saved_umask)
        _reset_tinymem_state()
