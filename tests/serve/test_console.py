"""`tm serve`'s console: one line per request (time, model, episode, proposals, status),
errors too; an Ollama model behind it gets num_ctx as `tm ask`'s does, and a prompt the
endpoint truncated is said there."""

from __future__ import annotations

import re
from pathlib import Path

from tests.modelserver import ModelServer, ScriptedReply
from tests.serve.served import REPLY, init, start, stop

LONG = "fix fetch_user so that it returns v " + "with all the context below " * 300


def test_one_line_per_request_and_errors(repo: Path, server: ModelServer) -> None:
    init(repo)
    served = start(repo, server)
    server.add(REPLY)
    status, doc = served.post(
        "/v1/chat/completions", {"model": "x", "messages": [{"role": "user", "content": "fix"}]}
    )
    assert status == 200, doc
    status, _ = served.post("/v1/chat/completions", {"messages": "nope"})
    assert status == 400
    served.get("/health")
    err = stop(served)
    lines = [ln for ln in err.splitlines() if not ln.startswith("tm serve: http")]
    chat = [ln for ln in lines if "POST /v1/chat/completions 200" in ln]
    assert len(chat) == 1, err
    assert re.search(r"^tm serve: \d\d:\d\d:\d\d POST ", chat[0])
    assert "model openai/test" in chat[0] and "episode " in chat[0]
    assert "proposals 1" in chat[0]
    (bad,) = [ln for ln in lines if "POST /v1/chat/completions 400" in ln]
    assert "messages" in bad
    assert any("GET /health 200" in ln for ln in lines)


def test_ollama_behind_serve_gets_num_ctx_and_truncation_is_said(
    repo: Path, server: ModelServer
) -> None:
    init(repo)
    served = start(repo, server, "-m", "ollama_chat/qwen2.5-coder:7b", "--api-base", server.url)
    server.add(ScriptedReply(text=REPLY, prompt_tokens=50))
    status, doc = served.post(
        "/v1/chat/completions", {"messages": [{"role": "user", "content": LONG}]}
    )
    assert status == 200, doc
    err = stop(served)
    (request,) = server.chat_requests
    assert request.path == "/api/chat"
    assert request.body["options"]["num_ctx"] == 8192
    (chat,) = [ln for ln in err.splitlines() if "POST /v1/chat/completions 200" in ln]
    assert "the prompt was probably truncated: the endpoint counted 50 prompt tokens" in chat
    assert "num_ctx" in chat
