"""Starting and stopping `tm serve`: the port is bound before it is announced, and a stop
answers and records what is in flight, however long the model takes, before it exits."""

from __future__ import annotations

import json
import signal
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import tm
from tests.modelserver import ModelServer, ScriptedReply
from tests.serve.served import (
    REPLY,
    Reply,
    Served,
    asks,
    init,
    is_error_object,
    launch,
    start,
    stop,
)
from tinymem.errors import UsageError
from tinymem.serve.completions import WRITE_TIMEOUT, WRITE_TIMEOUT_ENV, write_timeout
from tinymem.serve.request import BODY_TIMEOUT, BODY_TIMEOUT_ENV, body_timeout

ASK = [{"role": "user", "content": "add v to fetch_user"}]
# A control character is six bytes in an SSE event's JSON (`\u0001`): ~6 MB of events from
# 2,000 chunks, twice what loopback's socket buffers took here before a write waited (2.9 MB),
# and few enough chunks for litellm (~2 ms each) to pass them all in seconds. Numbered: litellm
# fails a stream that repeats one chunk.
BIG_CHUNKS = tuple(f"{i:06d}" + "\x01" * 474 for i in range(2_000))
BIG_REPLY = "".join(BIG_CHUNKS)  # 960,000 characters


def _until(done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _health(s: Served) -> int:
    try:
        with urllib.request.urlopen(s.url + "/health", timeout=30) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_sigint_answers_and_records_long_requests_first(repo: Path, server: ModelServer) -> None:
    init(repo)
    s = start(repo, server)
    client = s.client()
    # Both replies outlast the old 5-s grace after the signal: one the model sends whole
    # after a long wait, one it streams slowly.
    server.add(ScriptedReply(text=REPLY, delay=10))
    with ThreadPoolExecutor(1) as pool:
        whole = pool.submit(
            lambda: client.chat.completions.create(model="x", messages=ASK).choices[0]
        )
        _until(lambda: len(server.chat_requests) == 1, "the first request never reached the model")
        server.add(ScriptedReply(chunks=tuple(REPLY.splitlines(True)), chunk_delay=2.0))
        stream = client.chat.completions.create(model="x", messages=ASK, stream=True)
        chunks = iter(stream)
        next(chunks)  # the stream has begun
        s.process.send_signal(signal.SIGINT)
        _until(lambda: _health(s) == 503, "new requests were not refused while stopping")
        refused = s.raw("GET", "/state")
        assert refused.status == 503 and is_error_object(refused)
        streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        answered = whole.result(timeout=120).message.content or ""
    _, err = s.process.communicate(timeout=120)
    assert s.process.returncode == 0, err
    assert "Traceback" not in err and "cannot schedule" not in err, err
    assert err.rstrip().endswith("tm serve: stopped")
    for text in (streamed, answered):
        assert text.startswith(REPLY) and "[tinymem: episode " in text, text
    recorded = asks(repo)
    assert len(recorded) == 2 and all(a["error"] is None and a["proposals"] for a in recorded)
    assert tm(repo, "rebuild").returncode == 0


def test_a_second_sigint_stops_at_once(repo: Path, server: ModelServer) -> None:
    init(repo)
    s = start(repo, server)
    server.add(ScriptedReply(text=REPLY, chunk_size=2, chunk_delay=1.0))
    stream = s.client().chat.completions.create(model="x", messages=ASK, stream=True)
    next(iter(stream))
    s.process.send_signal(signal.SIGINT)
    _until(lambda: _health(s) == 503, "the stop never began")
    s.process.send_signal(signal.SIGINT)
    _, err = s.process.communicate(timeout=60)
    assert s.process.returncode == 130, err
    assert "stopped without waiting" in err and "Traceback" not in err
    stream.close()


def test_port_zero_announces_the_port_it_bound(served: Served) -> None:
    # `start` reads the port from the announcement: it is the real one, and it answers.
    assert served.port != 0
    assert served.get("/health")["status"] == "ok"


def test_a_port_in_use_is_one_sentence_and_announces_nothing(
    repo: Path, server: ModelServer
) -> None:
    init(repo)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = launch(repo, server, "--port", str(port))
        try:
            _, err = process.communicate(timeout=60)
        finally:
            process.kill()
    assert process.returncode == 2, err
    assert err.splitlines() == [
        f"tm: port {port} on 127.0.0.1 is already in use (another tm serve?); choose another"
        " with --port, or --port 0 for any free one"
    ]


def test_a_body_that_stops_half_way_is_a_408_and_does_not_hold_a_stop(
    repo: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client that sends its headers and part of its body, then stays silent with the
    # connection open, used to keep its request in flight for good, and a stop waited on it.
    monkeypatch.setenv(BODY_TIMEOUT_ENV, "2")  # instead of 30 s
    init(repo)
    s = start(repo, server)
    with socket.create_connection(("127.0.0.1", s.port), timeout=60) as conn:
        conn.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"messa'
        )
        # Answered on another connection: by then the server has begun the first request.
        assert s.get("/health")["status"] == "ok"
        s.process.send_signal(signal.SIGINT)
        # The old server never exited: a hang is this timeout, not the test run's.
        _, err = s.process.communicate(timeout=60)
        answer = b""
        while chunk := conn.recv(4096):
            answer += chunk
    assert s.process.returncode == 0, err
    assert "stopping once the 1 request(s) in flight" in err, err
    assert "Traceback" not in err and err.rstrip().endswith("tm serve: stopped"), err
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), answer
    reply = Reply(408, {"content-type": "application/json"}, body, json.loads(body))
    assert is_error_object(reply), answer
    assert "did not arrive within 2 s" in reply.doc["error"]["message"], reply.doc
    assert "POST /v1/chat/completions 408" in err, err
    assert not server.chat_requests and asks(repo) == []


def test_a_client_that_stops_reading_a_stream_does_not_hold_a_stop(
    repo: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client that sent a streaming request and then stopped reading, its connection open,
    # let the socket's buffers fill: each SSE write then waited for it for good, its request
    # stayed in flight, and a stop waited on it.
    monkeypatch.setenv(WRITE_TIMEOUT_ENV, "2")  # instead of 30 s
    monkeypatch.setenv("TM_MAX_REPLY", str(len(BIG_REPLY)))
    init(repo)
    s = start(repo, server)
    server.add(ScriptedReply(chunks=BIG_CHUNKS))
    body = json.dumps({"model": "x", "stream": True, "messages": ASK}).encode()
    with socket.socket() as conn:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: the window
        conn.settimeout(60)
        conn.connect(("127.0.0.1", s.port))
        conn.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        _until(lambda: len(server.chat_requests) == 1, "the request never reached the model")
        s.process.send_signal(signal.SIGINT)
        # The old server never exited: a hang is this timeout, not the test run's.
        _, err = s.process.communicate(timeout=120)
    assert s.process.returncode == 0, err
    assert "stopping once the 1 request(s) in flight" in err, err
    assert "Traceback" not in err and err.rstrip().endswith("tm serve: stopped"), err
    assert "POST /v1/chat/completions 200" in err, err
    assert "the client took none of its stream for 2 s: the stream was cut off" in err, err
    (ask,) = asks(repo)  # recorded whole, as for a client that hung up
    assert ask["error"] is None
    assert tm(repo, "show", ask["episode"], "--response").stdout == BIG_REPLY


@pytest.mark.parametrize(
    ("name", "default", "read"),
    [
        (BODY_TIMEOUT_ENV, BODY_TIMEOUT, body_timeout),
        (WRITE_TIMEOUT_ENV, WRITE_TIMEOUT, write_timeout),
    ],
    ids=["body", "write"],
)
def test_a_deadline_is_30_s_unless_set_to_seconds_above_0(
    monkeypatch: pytest.MonkeyPatch, name: str, default: float, read: Callable[[], float]
) -> None:
    monkeypatch.delenv(name, raising=False)
    assert read() == default == 30
    monkeypatch.setenv(name, " 2.5 ")
    assert read() == 2.5
    for bad in ("0", "-1", "abc", "nan", "inf"):
        monkeypatch.setenv(name, bad)
        with pytest.raises(UsageError, match=f"{name} must be a number of seconds"):
            read()


def test_sigint_right_after_the_announcement_stops_cleanly(repo: Path, server: ModelServer) -> None:
    # The port used to be announced before the loop's signal handlers were installed: a
    # SIGINT in between met tm's own Ctrl-C handler and exited 130 (1 start in 10).
    init(repo)
    for _ in range(5):
        s = start(repo, server)  # returns as soon as the announcement is read
        err = stop(s)  # exit 0, no traceback
        assert err.rstrip().endswith("tm serve: stopped"), err
        assert "interrupted" not in err, err


@pytest.mark.parametrize("name", [BODY_TIMEOUT_ENV, WRITE_TIMEOUT_ENV])
def test_a_deadline_that_cannot_work_refuses_the_start(repo: Path, name: str) -> None:
    """Not the first request that needs it: the server does not start."""
    init(repo)
    done = tm(repo, "serve", "--port", "0", env={name: "soon"})
    assert done.returncode == 2, done.stderr
    assert f"{name} must be a number of seconds above 0, not 'soon'" in done.stderr
    assert "listening" not in done.stdout + done.stderr
