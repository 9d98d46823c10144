"""Reading what tm prints on a real terminal (a pseudo-terminal of 80 or 120 columns), and
the conventions of git's read commands: nothing cropped or repeated, names whole, colours that
a light terminal shows too, the ids `tm log` prints accepted everywhere, a closed pipe ended
like git."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.conftest import MODEL_ENV, Initialise, ask_argv, git, tm, tm_ask
from tests.modelserver import ModelServer

LONG = "src/requests_toolbelt/multipart/adapters/very_long_directory_name/encoder_module.py"
APP = (
    "class Session:\n"
    "    def __init__(self):\n"
    "        self.hooks = {}\n"
    "\n"
    "\n"
    "def dispatch_hook_with_a_rather_long_descriptive_name(key, hooks):\n"
    "    return hooks\n"
)
WORDS = [f"word{i:03d}" for i in range(55)]
PARAGRAPH = " ".join(WORDS)  # 439 characters on one line: wider than any terminal here
BROKEN = (
    f"```python path={LONG}\n"
    "def dispatch_hook_with_a_rather_long_descriptive_name(key, hooks:\n"
    "    return hooks or {}\n"
    "```\n"
)
FIXED = BROKEN.replace("hooks:\n", "hooks):\n")
SGR = re.compile(r"\x1b\[([0-9;]*)m")
ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Z]")


FILES = {LONG: APP}


def _terminal(
    repo: Path, argv: list[str], columns: int, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run tm with a pseudo-terminal of `columns` as its stdin, stdout and stderr: its exit
    status and every byte the terminal received (escape sequences included)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("COLUMNS", "LINES", "GIT_PAGER", "PAGER", "NO_COLOR", "FORCE_COLOR")
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "tinymem", *argv],
        cwd=repo,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**environ, "TERM": "xterm-256color", **(env or {})},
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every holder of the follower has closed it
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=120)
    os.close(leader)
    return proc.returncode, seen.decode("utf-8", "replace")


def _plain(shown: str) -> str:
    return ESCAPES.sub("", shown).replace("\r\n", "\n").replace("\r", "\n")


def _colours(shown: str) -> list[list[str]]:
    return [m.group(1).split(";") for m in SGR.finditer(shown)]


# ------------------------------------------------------------------------------------- ask


@pytest.mark.parametrize("columns", [80, 120])
def test_ask_on_a_terminal_prints_the_whole_answer_once(
    repo: Path, initialised: Initialise, server: ModelServer, columns: int
) -> None:
    initialised(FILES)
    server.add(f"Here is the change.\n\n{PARAGRAPH}\n\n{BROKEN}", FIXED)
    argv = ask_argv(server, f"fix the hook in {LONG}")
    code, shown = _terminal(repo, argv, columns, MODEL_ENV)
    text = _plain(shown)
    assert code == 0, text
    # Streamed as it arrived: every line of both replies whole (the terminal wraps it), once.
    for line in [*f"Here is the change.\n{PARAGRAPH}\n{BROKEN}".splitlines(), *FIXED.splitlines()]:
        if line.strip() and not line.startswith("```"):
            assert line in text, line
    assert text.count(PARAGRAPH) == 1
    assert text.count("Here is the change.") == 1
    assert all(text.count(w + " ") + text.count(w + "\n") == 1 for w in WORDS)
    # The repair notice names the whole path and reason, however wide the terminal.
    notice = next(ln for ln in text.splitlines() if "repair round 1" in ln)
    assert f"sent back to the model: {LONG}: " in notice and len(notice) > columns
    # One proposal per line, with its full path and entity.
    listing = text[text.index("Proposals (episode") :]
    (row,) = [ln for ln in listing.splitlines() if LONG in ln]
    assert "modify dispatch_hook_with_a_rather_long_descriptive_name" in row
    assert "…" not in listing


def test_ask_piped_prints_the_reply_as_received(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    server.add(f"Here is the change.\n\n{PARAGRAPH}\n\n{FIXED}")
    proc = tm_ask(repo, server, "fix the hook")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"Here is the change.\n\n{PARAGRAPH}\n\n{FIXED}")
    row = next(ln for ln in proc.stdout.splitlines() if ln.count("\t") == 6)
    assert row.split("\t")[1] == LONG


def test_code_and_diffs_use_the_terminals_own_colours(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """No fixed foreground (monokai's near-white, or any 256-colour or true colour) and no
    background: what is readable on a dark terminal stays readable on a light one."""
    initialised(FILES)
    server.add(f"Done:\n\n{FIXED}")
    code, asked = _terminal(repo, ask_argv(server, "fix the hook"), 80, MODEL_ENV)
    assert code == 0, _plain(asked)
    code, diffed = _terminal(repo, ["--no-pager", "diff"], 80)
    assert code == 0, _plain(diffed)
    assert "\x1b[" in diffed  # styled: this is a terminal
    for params in _colours(asked) + _colours(diffed):
        assert not {"37", "97", "38", "48", "47", "107"} & set(params), params


# ----------------------------------------------------------------------------- state, diff


@pytest.mark.parametrize("columns", [80, 120])
def test_state_on_a_terminal_keeps_each_entity_key_on_one_line(
    repo: Path, initialised: Initialise, columns: int
) -> None:
    initialised(FILES)
    code, shown = _terminal(repo, ["--no-pager", "state"], columns)
    assert code == 0, shown
    lines = _plain(shown).splitlines()
    keys = [e["entity"] for e in json.loads(tm(repo, "state", "--json").stdout)["entities"]]
    assert f"{LONG}::Session.__init__" in keys
    for key in keys:
        assert any(re.match(rf"\s*{re.escape(key)}(\s|$)", ln) for ln in lines), (key, lines)


def test_diff_keeps_its_colours_when_paged(
    repo: Path, initialised: Initialise, server: ModelServer, tmp_path: Path
) -> None:
    initialised(FILES)
    server.add(FIXED)
    assert tm_ask(repo, server, "fix the hook").returncode == 0
    paged = tmp_path / "paged.txt"
    code, _ = _terminal(repo, ["diff"], 80, {"GIT_PAGER": f"cat > {paged}"})
    assert code == 0
    shown = paged.read_text()
    added = next(ln for ln in shown.splitlines() if "return hooks or {}" in ln)
    assert ["32"] in _colours(added), repr(added)  # the added line is green, as unpaged
    assert "\x1b[" not in tm(repo, "diff").stdout  # piped: no colour


# ------------------------------------------------------------------------------- log, show


def test_log_piped_is_tab_separated_and_speaks_of_the_ids_tm_prints(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    server.add(FIXED)
    asked = json.loads(tm_ask(repo, server, "fix the hook", "--json").stdout)
    lines = tm(repo, "log").stdout.splitlines()
    assert len(lines) == 2 and all(len(ln.split("\t")) == 8 for ln in lines)
    episode, commit, when, kind, author, summary, counts, outcome = lines[0].split("\t")
    assert episode == asked["episode"] and asked["commit"].startswith(commit)
    assert (kind, author, counts) == ("ask", "openai/test", "[1 proposed]")
    assert outcome == "1 proposal(s), 0 blocked"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", when) and summary
    for ref in (episode, commit):
        shown = tm(repo, "show", ref)
        assert shown.returncode == 0 and shown.stdout.startswith(f"episode {episode}")


def test_read_commands_take_gits_short_forms(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    server.add(FIXED, FIXED)
    for _ in range(2):
        assert tm_ask(repo, server, "fix the hook").returncode == 0
    everything = tm(repo, "log").stdout.splitlines()
    assert len(everything) == 3
    assert tm(repo, "log", "-2").stdout.splitlines() == everything[:2]
    assert tm(repo, "log", "-1", "--kind", "init").stdout.splitlines() == everything[2:]
    latest = everything[0].split("\t")[0]
    assert tm(repo, "show").stdout == tm(repo, "show", latest).stdout
    assert tm(repo, "show").stdout.startswith(f"episode {latest}")
    assert tm(repo, "-P", "log").stdout.splitlines() == everything


@pytest.mark.parametrize("argv", [["show", "LATEST"], ["diff"], ["log"], ["state"]])
def test_a_closed_pipe_ends_like_git(
    repo: Path, initialised: Initialise, server: ModelServer, argv: list[str]
) -> None:
    """`tm show | head -1`: the reader is gone before tm writes; git exits 141, silently."""
    initialised(FILES)
    server.add(FIXED)
    assert tm_ask(repo, server, "fix the hook").returncode == 0
    latest = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    reader, writer = os.pipe()
    os.close(reader)
    proc = subprocess.run(
        [sys.executable, "-m", "tinymem", *(latest if a == "LATEST" else a for a in argv)],
        cwd=repo,
        stdout=writer,
        stderr=subprocess.PIPE,
        check=False,
    )
    os.close(writer)
    assert (proc.returncode, proc.stderr) == (141, b"")


def test_ask_into_a_closed_pipe_records_the_whole_reply(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """`tm ask … | head -1`: the reply the model is sending is still read and recorded."""
    initialised(FILES)
    reply = f"{PARAGRAPH}\n" * 40 + FIXED
    server.add(reply)
    reader, writer = os.pipe()
    os.close(reader)
    proc = subprocess.run(
        [sys.executable, "-m", "tinymem", *ask_argv(server, "fix the hook")],
        cwd=repo,
        stdout=writer,
        stderr=subprocess.PIPE,
        env={**os.environ, **MODEL_ENV},
        check=False,
    )
    os.close(writer)
    assert (proc.returncode, proc.stderr) == (141, b"")
    (latest,) = json.loads(tm(repo, "log", "-1", "--json").stdout)
    assert latest["kind"] == "ask" and latest["error"] is None, latest
    assert tm(repo, "show", latest["episode"], "--response").stdout == reply
    assert json.loads(tm(repo, "status", "--json").stdout)["pending_proposals"]
