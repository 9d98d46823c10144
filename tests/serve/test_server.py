"""`tm serve` end to end: the real server in a subprocess, driven by the official `openai`
client, in front of the loopback model server, in a real repository."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.conftest import MODEL_ENV, PY_APP, git, tm, write
from tests.modelserver import ModelServer, ScriptedReply

REPLY = '```python path=app.py\ndef fetch_user(uid):\n    return {"id": uid, "v": 3}\n```\n'
FIXED_APP = PY_APP.replace('    return {"id": uid}\n', '    return {"id": uid, "v": 3}\n')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    repo: Path
    model: ModelServer
    url: str
    process: subprocess.Popen[str]

    def client(self, token: str = "none") -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key=token, max_retries=0)

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=30) as r:
            return json.loads(r.read())

    def post(self, path: str, doc: Any, token: str | None = None) -> tuple[int, Any]:
        req = urllib.request.Request(self.url + path, data=json.dumps(doc).encode(), method="POST")
        req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())


def _start(repo: Path, model: ModelServer, *extra: str) -> Served:
    port = _free_port()
    env = {**os.environ, **MODEL_ENV}
    argv = [sys.executable, "-m", "tinymem", "serve", "--port", str(port)]
    argv += ["-m", "openai/test", "--api-base", model.openai_base, *extra]
    process = subprocess.Popen(
        argv, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/health", timeout=1).close()
            break
        except urllib.error.HTTPError:
            break  # it answers (401 with a token)
        except OSError:
            assert process.poll() is None, process.communicate()[1]
            time.sleep(0.1)
    return Served(repo, model, url, process)


def _stop(served: Served) -> str:
    served.process.send_signal(signal.SIGINT)
    _, err = served.process.communicate(timeout=30)
    assert served.process.returncode == 0, err
    assert "Traceback" not in err
    return err


def _init(repo: Path) -> None:
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    assert tm(repo, "init").returncode == 0


@pytest.fixture
def served(repo: Path, server: ModelServer) -> Iterator[Served]:
    _init(repo)
    s = _start(repo, server)
    yield s
    _stop(s)


def _asks(repo: Path) -> list[dict[str, Any]]:
    entries = json.loads(tm(repo, "log", "--json").stdout)
    return [e for e in entries if e["kind"] == "ask"]


def test_streams_as_the_model_sends(served: Served) -> None:
    pieces = 10
    delay = 0.2
    served.model.add(
        ScriptedReply(text=REPLY, chunk_size=len(REPLY) // pieces + 1, chunk_delay=delay)
    )
    stream = served.client().chat.completions.create(
        model="anything", messages=[{"role": "user", "content": "add v to fetch_user"}], stream=True
    )
    times: list[float] = []
    text = ""
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            times.append(time.monotonic())
            text += chunk.choices[0].delta.content
    # The first piece came while the model was still sending the rest.
    assert times[-1] - times[0] >= (pieces - 3) * delay
    assert text.startswith(REPLY)
    (proposal_id,) = json.loads(tm(served.repo, "status", "--json").stdout)["pending_proposals"]
    assert "[tinymem: episode " in text and f"{proposal_id} app.py pending" in text


def test_one_episode_per_request_like_tm_ask(served: Served) -> None:
    served.model.add(REPLY)
    reply = served.client().chat.completions.create(
        model="anything",
        messages=[
            {"role": "system", "content": "You are my editor's assistant."},
            {"role": "user", "content": "add v to fetch_user"},
        ],
    )
    content = reply.choices[0].message.content or ""
    assert content.startswith(REPLY)  # the model's text, unchanged, then the trailer
    sent = served.model.chat_requests[0].body["messages"]
    # tm's context first, then the client's messages as they were.
    assert sent[0]["role"] == "system" and "[CURRENT STATE: AUTHORITATIVE]" in sent[0]["content"]
    assert "app.py::fetch_user" in sent[0]["content"]
    assert sent[1:] == [
        {"role": "system", "content": "You are my editor's assistant."},
        {"role": "user", "content": "add v to fetch_user"},
    ]
    (ask,) = _asks(served.repo)
    shown = json.loads(tm(served.repo, "show", ask["episode"], "--json").stdout)
    assert json.loads(tm(served.repo, "show", ask["episode"], "--messages").stdout) == sent
    assert tm(served.repo, "show", ask["episode"], "--response").stdout == REPLY
    # The same proposal tm ask makes of the same reply.
    served.model.add(REPLY)
    cli = tm(
        served.repo,
        "ask",
        "add v to fetch_user",
        "-m",
        "openai/test",
        "--api-base",
        served.model.openai_base,
        "--json",
        env=MODEL_ENV,
    )
    via_cli = json.loads(cli.stdout)["proposals"][0]
    (via_serve,) = shown["proposals"]
    for key in ("path", "kind", "confidence", "gates"):
        assert via_serve[key] == via_cli[key], key
    assert [(e["symbol"], e["op"]) for e in via_serve["entities"]] == [
        (e["symbol"], e["op"]) for e in via_cli["entities"]
    ]
    assert tm(served.repo, "accept", via_serve["id"]).returncode == 0
    assert (served.repo / "app.py").read_text() == FIXED_APP


def test_stale_entities_are_never_injected(served: Served) -> None:
    mine = PY_APP.replace('{"id": uid}', '{"id": uid, "mine": True}')
    write(served.repo, "app.py", mine)
    served.model.add("no code")
    served.client().chat.completions.create(
        model="x", messages=[{"role": "user", "content": "change fetch_user"}]
    )
    system = served.model.chat_requests[0].body["messages"][0]["content"]
    assert "[STATE NOTICE: DISK DIVERGENCE]" in system and "- app.py::fetch_user" in system
    assert '"mine"' not in system and 'return {"id": uid}' not in system


def test_read_endpoints_answer_like_the_json_commands(served: Served) -> None:
    served.model.add(REPLY)
    served.client().chat.completions.create(
        model="x", messages=[{"role": "user", "content": "add v to fetch_user"}]
    )
    assert served.get("/state") == json.loads(tm(served.repo, "state", "--json").stdout)
    assert served.get("/recent?limit=2") == json.loads(
        tm(served.repo, "log", "-n", "2", "--json").stdout
    )
    (ask,) = _asks(served.repo)
    doc = served.get(f"/episodes/{ask['episode']}")
    messages = doc.pop("messages")
    assert doc == json.loads(tm(served.repo, "show", ask["episode"], "--json").stdout)
    assert messages == served.model.chat_requests[0].body["messages"]
    health = served.get("/health")
    assert health["status"] == "ok" and health["model"] == "openai/test"
    assert [m.id for m in served.client().models.list()] == ["openai/test"]
    doctor = served.get("/doctor")
    assert set(doctor) == set(json.loads(tm(served.repo, "doctor", "--json").stdout))


def test_user_code_adopts_and_refuses_unsafe_paths(served: Served) -> None:
    status, doc = served.post("/v1/user/code", {"path": "app.py", "content": FIXED_APP})
    assert status == 200 and doc["adopted"] == ["app.py"] and doc["episode"]
    assert (served.repo / "app.py").read_text() == FIXED_APP
    state = {e["entity"]: e for e in served.get("/state")["entities"]}
    assert state["app.py::fetch_user"]["source"] == "user"
    assert not state["app.py::fetch_user"]["stale"]
    for bad in ("../outside.py", "/etc/passwd", ".git/hooks/pre-commit"):
        status, doc = served.post("/v1/user/code", {"path": bad, "content": "x"})
        assert status == 400 and doc["error"]["message"], bad
    assert not (served.repo.parent / "outside.py").exists()
    status, doc = served.post("/v1/user/code", {"path": "app.py"})
    assert status == 400


def test_model_errors_come_back_as_openai_errors(served: Served) -> None:
    served.model.add(ScriptedReply(failure="not_found"))
    with pytest.raises(openai.NotFoundError) as caught:
        served.client().chat.completions.create(
            model="x", messages=[{"role": "user", "content": "hello"}]
        )
    assert "does not know the model openai/test" in str(caught.value)
    (ask,) = _asks(served.repo)
    assert ask["outcome"] == "failed"
    status, doc = served.post("/v1/chat/completions", {"messages": "nope"})
    assert status == 400 and "messages" in doc["error"]["message"]


def test_eight_concurrent_requests_lose_no_episode(served: Served) -> None:
    served.model.default = ScriptedReply(text=REPLY, chunk_delay=0.01)
    client = served.client()

    def one(n: int) -> str:
        r = client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": f"add v to fetch_user ({n})"}]
        )
        return r.choices[0].message.content or ""

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(one, range(8)))
    assert all(a.startswith(REPLY) for a in answers)
    asks = _asks(served.repo)
    assert len(asks) == 8
    assert len(json.loads(tm(served.repo, "status", "--json").stdout)["pending_proposals"]) == 8
    assert tm(served.repo, "rebuild").returncode == 0


def test_accept_applies_what_gate_b_allows(repo: Path, server: ModelServer) -> None:
    _init(repo)
    s = _start(repo, server, "--accept", "--no-trailer")
    try:
        server.add(REPLY)
        r = s.client().chat.completions.create(
            model="x", messages=[{"role": "user", "content": "add v to fetch_user"}]
        )
        assert r.choices[0].message.content == REPLY  # no trailer
        assert (repo / "app.py").read_text() == FIXED_APP
    finally:
        _stop(s)


def test_token_is_required_off_loopback_and_checked(repo: Path, server: ModelServer) -> None:
    _init(repo)
    refused = tm(repo, "serve", "--host", "0.0.0.0", "--port", str(_free_port()))
    assert refused.returncode == 2 and "--token" in refused.stderr
    s = _start(repo, server, "--token", "s3cret")
    try:
        with pytest.raises(openai.AuthenticationError):
            s.client("wrong").models.list()
        assert [m.id for m in s.client("s3cret").models.list()] == ["openai/test"]
        status, _ = s.post("/v1/user/code", {"path": "app.py", "content": "x"})
        assert status == 401 and (repo / "app.py").read_text() == PY_APP
    finally:
        _stop(s)


def test_sigterm_mid_request_finishes_and_records_it(repo: Path, server: ModelServer) -> None:
    _init(repo)
    s = _start(repo, server)
    server.add(ScriptedReply(text=REPLY, chunk_size=4, chunk_delay=0.05))
    stream = s.client().chat.completions.create(
        model="x", messages=[{"role": "user", "content": "add v to fetch_user"}], stream=True
    )
    iterator = iter(stream)
    next(iterator)  # the stream has begun
    s.process.send_signal(signal.SIGTERM)
    _, err = s.process.communicate(timeout=60)
    assert s.process.returncode == 0, err
    assert "Traceback" not in err
    (ask,) = _asks(repo)  # recorded whole, not half
    assert tm(repo, "show", ask["episode"], "--response").stdout == REPLY
    assert tm(repo, "rebuild").returncode == 0
    assert not (repo / ".git" / "tinymem" / "unrecorded").exists()
