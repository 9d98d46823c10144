"""Where `tm ask` takes its prompt from, as `llm` and git do: `-` reads stdin, piped text is
the input the prompt is about, no prompt on a terminal opens $EDITOR."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Initialise, tm


@pytest.fixture
def project(initialised: Initialise) -> Path:
    return initialised({"app.py": "def handler(x):\n    return x + 1\n"}, message="init")


def _request(stdout: str) -> str:
    return stdout.split("[REQUEST]\n", 1)[1].split("\n-----", 1)[0]


def test_dash_reads_the_prompt_from_stdin(project: Path) -> None:
    proc = tm(project, "ask", "-", "--dry-run", input="make handler add two\n")
    assert proc.returncode == 0, proc.stderr
    assert _request(proc.stdout).strip() == "make handler add two"
    proc = tm(project, "ask", "-", "--dry-run", input="")
    assert proc.returncode == 2 and "no prompt came on stdin" in proc.stderr


def test_piped_text_comes_after_the_prompt(project: Path) -> None:
    log = "Traceback (most recent call last):\n  ValueError: boom\n"
    proc = tm(project, "ask", "fix this", "--dry-run", input=log)
    assert proc.returncode == 0, proc.stderr
    request = _request(proc.stdout)
    assert request.startswith("fix this\n\nInput (from stdin):\nTraceback")
    assert "ValueError: boom" in request


def test_no_prompt_reads_a_pipe_or_says_what_is_needed(project: Path) -> None:
    proc = tm(project, "ask", "--dry-run", input="rename handler\n")
    assert proc.returncode == 0, proc.stderr
    assert _request(proc.stdout).strip() == "rename handler"
    proc = tm(project, "ask", "--dry-run", input="")
    assert proc.returncode == 2 and "tm ask needs a prompt" in proc.stderr


def test_no_prompt_on_a_terminal_opens_the_editor(project: Path, tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "# a comment\\nmake handler return x + 3\\n" > "$1"\n')
    editor.chmod(0o755)
    master, slave = pty.openpty()
    env = {**os.environ, "EDITOR": str(editor), "VISUAL": str(editor), "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tinymem", "ask", "--dry-run"],
        cwd=project,
        stdin=slave,
        stdout=slave,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    _, err = proc.communicate(timeout=120)
    os.close(master)
    text = b"".join(chunks).decode().replace("\r\n", "\n")
    assert proc.returncode == 0, err
    request = _request(text)
    assert request.strip() == "make handler return x + 3"
