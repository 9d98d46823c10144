"""Hostile or broken requests to `tm serve`: refused before anything is written, as the
client's 400 with an OpenAI error object, and one line on the console, never a traceback."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from tests.conftest import PY_APP, tm
from tests.modelserver import ModelServer
from tests.serve.served import Served, init, is_error_object, start, stop


def _ledger(repo: Path) -> list[str]:
    return [e["episode"] for e in json.loads(tm(repo, "log", "--json").stdout)]


def test_user_code_refuses_deep_paths_and_directories_before_writing(served: Served) -> None:
    before = _ledger(served.repo)
    deep = "".join(f"d{i}/" for i in range(2099)) + "f.py"
    status, doc = served.post("/v1/user/code", {"path": deep, "content": "x = 1\n"})
    assert status == 400 and "2,100 components deep" in doc["error"]["message"], doc
    assert not (served.repo / "d0").exists()
    # As `tm adopt --path` refuses them: normalised away, each would write a file.
    for directory in ("app.py/", "src/new.py/", "app.py/.", "src\\new.py\\"):
        status, doc = served.post("/v1/user/code", {"path": directory, "content": "x = 1\n"})
        assert status == 400 and "names a directory" in doc["error"]["message"], (directory, doc)
    assert (served.repo / "app.py").read_text() == PY_APP
    assert not (served.repo / "src").exists()
    assert _ledger(served.repo) == before  # nothing recorded


def test_deeply_nested_json_is_a_bad_request(served: Served) -> None:
    deepest = b'{"messages": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    nested = {"content": "x"}
    for _ in range(150):  # json.loads reads this; tm still refuses it
        nested = {"content": [nested]}
    within = json.dumps({"model": "x", "messages": [{"role": "user", **nested}]}).encode()
    code = json.dumps({"path": "app.py", "content": "x = 1\n", "x": [[[[[[[[[[1]]]]]]]]]] * 1})
    for path, body in (
        ("/v1/chat/completions", deepest),
        ("/v1/chat/completions", within),
        ("/v1/user/code", deepest),
        (
            "/v1/user/code",
            b'{"path": "app.py", "content": "x", "x": ' + b"[" * 101 + b"]" * 101 + b"}",
        ),
    ):
        r = served.raw("POST", path, body, Content_Type="application/json")
        assert r.status == 400 and is_error_object(r), (path, r.status, r.body[:300])
        assert "more than 100 deep" in r.doc["error"]["message"]
    # A body nested 10 deep is ordinary.
    status, doc = served.post("/v1/user/code", json.loads(code))
    assert status == 200, doc
    assert not served.model.chat_requests
    assert "internal error" not in stop(served)


def _send(port: int, data: bytes, *, hang_up: bool = False) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(data)
        if hang_up:
            time.sleep(0.3)  # the server has read the headers and waits for the body
            return b""
        return conn.recv(200)


def test_malformed_http_and_hang_ups_are_one_console_line_each(
    repo: Path, server: ModelServer
) -> None:
    init(repo)
    s = start(repo, server)
    host = f"Host: 127.0.0.1:{s.port}\r\n".encode()
    post = b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    for bad in (
        b"GET /health HTTP/1.1\r\n" + host + b"Content-Length: abc\r\n\r\n",
        b"GET /health HTTP/1.1\r\n" + host + b"Bad Header\r\n\r\n",
        b"POST /v1/user/code HTTP/1.1\r\n" + host + b"Transfer-Encoding: chunked\r\n"
        b'Content-Type: application/json\r\n\r\n5\r\n{"pat\r\nzz\r\n',
    ):
        assert _send(s.port, bad).startswith(b"HTTP/1.0 400")
    for path in (b"/v1/chat/completions", b"/v1/user/code"):
        _send(s.port, b"POST " + path + b" HTTP/1.1\r\n" + host + post + b'{"pa', hang_up=True)
    assert s.get("/health")["status"] == "ok"  # still serving
    err = stop(s)  # no traceback, no "Error handling request"
    lines = err.splitlines()
    assert all(line.startswith("tm serve: ") for line in lines), err
    assert "please report it" not in err and "internal error" not in err, err
    assert sum("malformed HTTP request" in line for line in lines) == 3, err
    assert sum("hung up before sending its whole request" in line for line in lines) == 2, err
    assert (repo / "app.py").read_text() == PY_APP
