"""`tm serve` end to end: the real server in a subprocess, driven by the official `openai`
client, in front of the loopback model server, in a real repository."""

from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest

from tests.conftest import MODEL_ENV, PY_APP, git, tm, write
from tests.modelserver import ModelServer, ScriptedReply
from tests.serve.served import FIXED_APP, REPLY, Served, asks, init, start, stop


def test_streams_as_the_model_sends(served: Served) -> None:
    pieces = 10
    rest = threading.Event()  # the model sends its first piece, then waits for this
    served.model.add(ScriptedReply(text=REPLY, chunk_size=len(REPLY) // pieces + 1, hold=rest))
    stream = served.client().chat.completions.create(
        model="anything", messages=[{"role": "user", "content": "add v to fetch_user"}], stream=True
    )
    text = ""
    held_back_when_first_came: bool | None = None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            if held_back_when_first_came is None:
                held_back_when_first_came = not rest.is_set()
                rest.set()
            text += chunk.choices[0].delta.content
    # The first piece came while the model was still holding the rest back.
    assert held_back_when_first_came is True
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
    (ask,) = asks(served.repo)
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


def test_each_request_sees_what_was_written_since_the_last(served: Served) -> None:
    """The server watches the work tree and checks only what changed between requests: a
    hand edit saved as editors do (a new file renamed over the old), then put back."""
    client = served.client()

    def system_prompt() -> str:
        served.model.add("no code")
        client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": "change fetch_user"}]
        )
        return str(served.model.chat_requests[-1].body["messages"][0]["content"])

    assert "DISK DIVERGENCE" not in system_prompt()
    saved = served.repo / ".app.py.swp"
    saved.write_text(PY_APP.replace('{"id": uid}', '{"id": uid, "mine": True}'))
    os.replace(saved, served.repo / "app.py")
    system = system_prompt()
    assert "[STATE NOTICE: DISK DIVERGENCE]" in system and "- app.py::fetch_user" in system
    write(served.repo, "app.py", PY_APP)
    system = system_prompt()
    assert "DISK DIVERGENCE" not in system and 'return {"id": uid}' in system


def test_read_endpoints_answer_like_the_json_commands(served: Served) -> None:
    served.model.add(REPLY)
    served.client().chat.completions.create(
        model="x", messages=[{"role": "user", "content": "add v to fetch_user"}]
    )
    assert (
        tm(served.repo, "note", "add", "gotcha", "v is 1-based", "--on", "app.py").returncode == 0
    )
    state = served.get("/state")
    notes = state.pop("notes")
    assert state == json.loads(tm(served.repo, "state", "--json").stdout)
    listed = json.loads(tm(served.repo, "note", "list", "--json").stdout)
    assert served.get("/notes") == listed
    assert notes == listed["notes"] and notes[0]["text"] == "v is 1-based"
    assert served.get("/recent?limit=2") == json.loads(
        tm(served.repo, "log", "-n", "2", "--json").stdout
    )
    (ask,) = asks(served.repo)
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
    (ask,) = asks(served.repo)
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
    assert len(asks(served.repo)) == 8
    assert len(json.loads(tm(served.repo, "status", "--json").stdout)["pending_proposals"]) == 8
    assert tm(served.repo, "rebuild").returncode == 0


def test_accept_applies_what_gate_b_allows(repo: Path, server: ModelServer) -> None:
    init(repo)
    s = start(repo, server, "--accept", "--no-trailer")
    try:
        server.add(REPLY)
        r = s.client().chat.completions.create(
            model="x", messages=[{"role": "user", "content": "add v to fetch_user"}]
        )
        assert r.choices[0].message.content == REPLY  # no trailer
        assert (repo / "app.py").read_text() == FIXED_APP
    finally:
        stop(s)


def test_sigterm_mid_request_finishes_and_records_it(repo: Path, server: ModelServer) -> None:
    init(repo)
    s = start(repo, server)
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
    (ask,) = asks(repo)  # recorded whole, not half
    assert tm(repo, "show", ask["episode"], "--response").stdout == REPLY
    assert tm(repo, "rebuild").returncode == 0
    assert not (repo / ".git" / "tinymem" / "unrecorded").exists()


def test_a_model_name_litellm_cannot_route_means_tms(served: Served) -> None:
    served.model.add("ok", "ok")
    client = served.client()
    for name in ("Qwen/Qwen2.5-Coder-7B-Instruct", "openai/other"):
        reply = client.chat.completions.create(
            model=name, messages=[{"role": "user", "content": "hello"}]
        )
        assert (reply.choices[0].message.content or "").startswith("ok")
    # A Hugging Face name (its `/` is no provider's) meant tm's model; `openai/other` is one
    # litellm routes, so it is the client's.
    assert [r.model for r in served.model.chat_requests] == ["test", "other"]
    assert [a["error"] for a in asks(served.repo)] == [None, None]


def test_usage_comes_last_when_the_client_asks(served: Served) -> None:
    served.model.add(ScriptedReply(text=REPLY, prompt_tokens=123, completion_tokens=45))
    chunks = list(
        served.client().chat.completions.create(
            model="x",
            messages=[{"role": "user", "content": "add v to fetch_user"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (123, 45)
    assert last.usage.total_tokens == 168
    assert all(c.usage is None for c in chunks[:-1])
    # Not asked: no usage chunk, as OpenAI does.
    served.model.add(REPLY)
    chunks = list(
        served.client().chat.completions.create(
            model="x", messages=[{"role": "user", "content": "add v to fetch_user"}], stream=True
        )
    )
    assert all(c.choices and c.usage is None for c in chunks)


def test_a_client_that_hangs_up_mid_stream_is_no_error(repo: Path, server: ModelServer) -> None:
    init(repo)
    s = start(repo, server)
    server.add(ScriptedReply(text=REPLY, chunk_size=4, chunk_delay=0.1))
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    body = {"model": "x", "stream": True, "messages": [{"role": "user", "content": "add v"}]}
    conn.request(
        "POST",
        "/v1/chat/completions",
        body=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    response = conn.getresponse()
    assert response.status == 200 and response.fp is not None
    assert response.fp.readline()  # the stream has begun
    response.close()  # the editor's stop button
    conn.close()
    deadline = time.monotonic() + 60
    while not [e for e in s.get("/recent") if e["kind"] == "ask"]:
        assert time.monotonic() < deadline, "the episode was never recorded"
        time.sleep(0.1)
    err = stop(s)
    assert "ConnectionResetError" not in err and "closing transport" not in err, err
    assert "internal error" not in err, err
    (ask,) = asks(repo)  # recorded whole, with the reply the client did not wait for
    assert tm(repo, "show", ask["episode"], "--response").stdout == REPLY
    assert ask["proposals"]


def test_a_request_records_what_git_committed_first(served: Served) -> None:
    # #25: a `tm serve` request runs the step every command runs, so a commit made while the
    # server runs is the branch's truth, not a STALE entity, for the next request.
    git(served.repo, "commit", "-qm", "base", "--no-verify")
    text = (served.repo / "app.py").read_text().replace('{"id": uid}', '{"id": uid, "v": 1}')
    write(served.repo, "app.py", text)
    git(served.repo, "commit", "-qam", "by hand", "--no-verify")
    rows = served.get("/state")["entities"]
    assert rows and not [r["entity"] for r in rows if r["stale"]]
    tip = git(served.repo, "log", "-1", "--format=%s", "refs/tinymem/heads/main").strip()
    assert tip.startswith("tm git: took app.py")
