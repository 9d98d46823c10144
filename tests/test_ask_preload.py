"""`tm ask` loads litellm in a thread while it hydrates, and every way out of the command
waits for that thread: an error or Ctrl-C while the import runs still ends the process with
one sentence and the documented exit code, never a crash or a hang at interpreter shutdown.

These run a real process: how the interpreter ends with the thread alive is the subject."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import MODEL_ENV, PY_APP, ROOT, Initialise, ask_argv, git
from tests.modelserver import ModelServer

# A child `tm` whose `prepare` (hydration) first says which threads run, then does `then`.
CHILD = """
import os, signal, sys, threading
sys.path.insert(0, {root!r})
import tinymem.ask as a
real = a.prepare
def spy(*args, **kwargs):
    names = ",".join(t.name for t in threading.enumerate())
    sys.stderr.write("threads: " + names + "\\n")
    sys.stderr.flush()
    {then}
    return real(*args, **kwargs)
a.prepare = spy
sys.argv = ["tm", *{argv!r}]
from tinymem.entry import main
main()
"""


APP = {"app.py": PY_APP}


def _child(repo: Path, argv: list[str], then: str = "pass") -> subprocess.CompletedProcess[str]:
    script = CHILD.format(root=str(ROOT), argv=argv, then=textwrap.dedent(then))
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, **MODEL_ENV},
        check=False,
        timeout=300,  # a hang at shutdown fails the test instead of the run
    )


def _threads(stderr: str) -> list[str]:
    (line,) = [x for x in stderr.splitlines() if x.startswith("threads: ")]
    return line[len("threads: ") :].split(",")


def _rest(stderr: str) -> list[str]:
    return [x for x in stderr.splitlines() if x.strip() and not x.startswith("threads: ")]


def test_an_error_while_litellm_loads_ends_with_one_sentence(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    # The endpoint answers, so the import starts; then hydration refuses the unknown file.
    proc = _child(repo, ask_argv(server, "fix it", "--file", "missing.py"))
    assert "tm-litellm-import" in _threads(proc.stderr)
    assert proc.returncode == 2, proc.stderr
    (sentence,) = _rest(proc.stderr)
    assert "missing.py" in sentence and sentence.startswith("tm: ")
    assert "Traceback" not in proc.stderr and "Fatal Python error" not in proc.stderr
    assert server.requests == []  # nothing was sent


def test_ctrl_c_while_litellm_loads_is_tm_interrupted(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    proc = _child(repo, ask_argv(server, "fix it"), then="os.kill(os.getpid(), signal.SIGINT)")
    assert "tm-litellm-import" in _threads(proc.stderr)
    assert proc.returncode == 130, proc.stderr
    assert _rest(proc.stderr) == ["tm: interrupted"]


def test_nothing_is_loaded_when_nothing_listens(repo: Path, initialised: Initialise) -> None:
    """The fail-fast check runs before the import starts: an unreachable endpoint is said
    as before (exit 6, one sentence), without litellm's seconds."""
    initialised(APP, commit=False)
    argv = ["ask", "x", "-m", "openai/test", "--api-base", "http://127.0.0.1:9/v1"]
    proc = _child(repo, argv)
    assert "tm-litellm-import" not in _threads(proc.stderr)
    assert proc.returncode == 6, proc.stderr
    (sentence,) = _rest(proc.stderr)
    assert "127.0.0.1:9" in sentence


def test_the_reply_still_arrives_with_the_import_in_a_thread(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    server.add("Nothing to change.\n")
    proc = _child(repo, ask_argv(server, "fix it"))
    assert "tm-litellm-import" in _threads(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert "Nothing to change." in proc.stdout


def test_a_setting_that_cannot_work_is_said_without_loading(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """A bad setting is a user mistake tm names at once: no import started to wait for."""
    initialised(APP, commit=False)
    git(repo, "config", "tinymem.timeout", "soon")
    proc = _child(repo, ask_argv(server, "fix it"))
    assert "tm-litellm-import" not in _threads(proc.stderr)
    assert proc.returncode == 2, proc.stderr
    (sentence,) = _rest(proc.stderr)
    assert "timeout" in sentence and "soon" in sentence
