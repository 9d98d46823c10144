"""A real `tm serve` in a subprocess for the tests: started on a port it picks itself
(`--port 0`, read back from the line it announces once bound), driven by the official `openai`
client, `urllib`, or raw `http.client` when a test needs headers a client would not send."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai

from tests.conftest import MODEL_ENV, PY_APP, git, tm, write
from tests.modelserver import ModelServer

REPLY = '```python path=app.py\ndef fetch_user(uid):\n    return {"id": uid, "v": 3}\n```\n'
FIXED_APP = PY_APP.replace('    return {"id": uid}\n', '    return {"id": uid, "v": 3}\n')
CLIENT_TIMEOUT = 120.0  # seconds: the openai client's wait for any one response
ANNOUNCED = re.compile(r"^tm serve: http://(?:127\.0\.0\.1|0\.0\.0\.0):(\d+)/v1 ")


@dataclass
class Reply:
    status: int
    headers: dict[str, str]  # names lower-cased
    body: bytes
    doc: Any = field(default=None)  # the JSON body, or None when it is not JSON


@dataclass
class Served:
    repo: Path
    model: ModelServer
    port: int
    process: subprocess.Popen[str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, token: str = "none") -> openai.OpenAI:
        # Not the client's default of 600 s: a server that stops answering fails one test.
        return openai.OpenAI(
            base_url=self.url + "/v1", api_key=token, max_retries=0, timeout=CLIENT_TIMEOUT
        )

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=60) as r:
            return json.loads(r.read())

    def post(self, path: str, doc: Any, token: str | None = None) -> tuple[int, Any]:
        req = urllib.request.Request(self.url + path, data=json.dumps(doc).encode(), method="POST")
        req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def raw(self, method: str, path: str, body: bytes | None = None, **headers: str) -> Reply:
        """One request with exactly these headers (`Content_Type=` for Content-Type; a
        `Host` given replaces the one http.client would send)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            named = {k.replace("_", "-"): v for k, v in headers.items()}
            conn.request(method, path, body=body, headers=named)
            r = conn.getresponse()
            data = r.read()
            got = {k.lower(): v for k, v in r.getheaders()}
        finally:
            conn.close()
        try:
            doc = json.loads(data)
        except ValueError:
            doc = None
        return Reply(r.status, got, data, doc)


def is_error_object(reply: Reply) -> bool:
    """An OpenAI error object: what every error of tm serve must be."""
    doc = reply.doc
    return (
        reply.headers.get("content-type", "").startswith("application/json")
        and isinstance(doc, dict)
        and set(doc) == {"error"}
        and set(doc["error"]) == {"message", "type", "param", "code"}
        and isinstance(doc["error"]["message"], str)
        and bool(doc["error"]["message"])
    )


def _first_line(process: subprocess.Popen[str], timeout: float) -> str:
    """The first line on stderr, or "" when the process ends (or stays silent) first."""
    lines: list[str] = []
    stream = process.stderr
    assert stream is not None
    reader = threading.Thread(target=lambda: lines.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return lines[0] if lines else ""


# Every server a test started: the `reap` fixture kills those a failed test left running.
LAUNCHED: list[subprocess.Popen[str]] = []


def launch(repo: Path, model: ModelServer, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, **MODEL_ENV}
    argv = [sys.executable, "-m", "tinymem", "serve"]
    argv += ["-m", "openai/test", "--api-base", model.openai_base, *extra]
    process = subprocess.Popen(
        argv, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    LAUNCHED.append(process)
    return process


def reap() -> None:
    while LAUNCHED:
        process = LAUNCHED.pop()
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def start(repo: Path, model: ModelServer, *extra: str) -> Served:
    process = launch(repo, model, "--port", "0", *extra)
    line = _first_line(process, 60)
    found = ANNOUNCED.match(line)
    if found is None:
        process.kill()
        _, err = process.communicate(timeout=30)
        raise AssertionError(f"tm serve did not announce its port: {line!r} {err}")
    return Served(repo, model, int(found.group(1)), process)


def stop(served: Served) -> str:
    """SIGINT, then the rest of stderr; it must have stopped cleanly."""
    served.process.send_signal(signal.SIGINT)
    _, err = served.process.communicate(timeout=60)
    assert served.process.returncode == 0, err
    assert "Traceback" not in err and "Error handling request" not in err, err
    return err


def init(repo: Path) -> None:
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    assert tm(repo, "init").returncode == 0


def asks(repo: Path) -> list[dict[str, Any]]:
    entries = json.loads(tm(repo, "log", "--json").stdout)
    return [e for e in entries if e["kind"] == "ask"]
