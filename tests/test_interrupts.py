"""Ctrl-C at any moment of `tm`'s start-up (its imports are most of it) ends with
`tm: interrupted` and exit 130, never a traceback; during the command it is the command's
KeyboardInterrupt (tests/writing/test_transaction.py), and after it the command's result
stands."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, git, tm, write

# The console script is `from tinymem.entry import main; main()`; the line on stderr says
# the interpreter's own start-up (before any tm code runs, beyond tm's reach) is over.
CHILD = (
    f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tinymem import entry;"
    " sys.argv = ['tm', *sys.argv[1:]]; sys.stderr.write('started\\n'); sys.stderr.flush();"
    " entry.main()"
)
DELAYS = (0.01, 0.03, 0.06, 0.1, 0.15, 0.2, 0.3, 0.45)


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("interrupts") / "work"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "a.py", "def a():\n    return 1\n")
    git(repo, "add", ".")
    assert tm(repo, "init").returncode == 0
    return repo


@pytest.mark.parametrize("command", ["status", "log"])
def test_ctrl_c_during_start_up_is_one_line_and_exit_130(initialised: Path, command: str) -> None:
    finished = interrupted = 0
    for delay in DELAYS:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, command],
            cwd=initialised,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stderr is not None and child.stderr.readline() == "started\n"
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
        assert "Traceback" not in err and "internal error" not in err, (delay, err)
        if child.returncode == 0:  # done before the signal: its result stands
            finished += 1
            continue
        assert child.returncode == 130, (delay, child.returncode, err)
        assert err.splitlines() == ["tm: interrupted"], (delay, err)
        interrupted += 1
    assert interrupted >= 3, (interrupted, finished)  # the early delays land in start-up
