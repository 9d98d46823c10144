"""A reply that is not text is an unusable reply (exit 9), not an unreachable endpoint (6):
bytes that are not UTF-8 in the stream, or a lone UTF-16 surrogate escaped in its JSON."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import MODEL_ENV, Initialise, tm, tm_ask
from tests.modelserver import ModelServer, ScriptedReply

_CHUNK = (
    b'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",'
    b' "choices": [{"index": 0, "delta": {"content": "CONTENT"}, "finish_reason": null}]}\n\n'
)


class _NotUtf8(BaseHTTPRequestHandler):
    """An OpenAI stream whose second chunk holds bytes that are not UTF-8 (latin-1 `é`)."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(_CHUNK.replace(b"CONTENT", b"x = 1"))
        self.wfile.write(_CHUNK.replace(b"CONTENT", b"caf\xe9 \xff"))
        self.wfile.write(b"data: [DONE]\n\n")


@pytest.fixture
def not_utf8() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotUtf8)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


FILES = {"a.py": "def a():\n    return 1\n"}


def test_bytes_that_are_not_utf8_are_an_unusable_reply(
    repo: Path, initialised: Initialise, not_utf8: str
) -> None:
    initialised(FILES, commit=False)
    argv = ["ask", "x", "-m", "openai/test", "--api-base", not_utf8]
    proc = tm(repo, *argv, env=MODEL_ENV)
    assert proc.returncode == 9, proc.stderr
    assert "is not UTF-8 text" in proc.stderr and "0xe9" in proc.stderr, proc.stderr
    assert proc.stderr.startswith("tm: ") and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("json_output", [False, True])
def test_a_lone_surrogate_is_an_unusable_reply(
    repo: Path, initialised: Initialise, server: ModelServer, json_output: bool
) -> None:
    initialised(FILES, commit=False)
    # Printed as it streams (the terminal's encoder failed: exit 6) or not (recording
    # failed: an internal error, exit 10); either way the reply is what is wrong.
    server.add(ScriptedReply(text="```python path=a.py\nx = '\ud83d'\n```\n"))
    proc = tm_ask(repo, server, "x", *(["--json"] if json_output else []))
    assert proc.returncode == 9, proc.stderr
    assert "lone UTF-16 surrogate (U+D83D" in proc.stderr, proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("tm: ")
    assert "internal error" not in proc.stderr
    # A whole character escaped as a pair is text like any other.
    server.add(ScriptedReply(text="```python path=a.py\ndef a():\n    return '\U0001f600'\n```\n"))
    proc = tm_ask(repo, server, "x", "--json")
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["proposals"]) == 1
