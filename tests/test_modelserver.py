"""The loopback model server, driven by real litellm calls (no mocks).

Besides proving the server speaks both protocols, these tests pin down which exception class
litellm raises for each failure, so tm's model layer can map them to its own errors.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

# Before litellm is imported: no cost-map download, no `.env` loading.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["LITELLM_MODE"] = "PRODUCTION"

import litellm
from litellm.exceptions import (
    APIConnectionError,
    BadRequestError,
    InternalServerError,
    MidStreamFallbackError,
    NotFoundError,
    Timeout,
)

from tests.modelserver import ModelServer, ScriptedReply, model_server
from tinymem.errors import ModelTimeoutError
from tinymem.llm import _translate

litellm.suppress_debug_info = True
litellm.disable_hf_tokenizer_download = True

# litellm's own pydantic models warn once about a TypedDict qualifier; not ours to fix.
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_.*:DeprecationWarning"),
]

OLLAMA_MODEL = "ollama_chat/qwen2.5-coder:7b"
OPENAI_MODEL = "openai/test"
MESSAGES = [
    {"role": "system", "content": "You are a careful coding assistant."},
    {"role": "user", "content": "Add a docstring to `add` in calc.py"},
]
REPLY = "Here is the updated `calc.py`:\n\n```python\ndef add(a, b):\n    return a + b\n```\n"
TIMEOUT = 5.0  # generous for success paths; failure paths use their own short timeouts


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with model_server() as s:
        yield s
    assert not s.errors, s.errors


def call(
    server: ModelServer, flavour: str, *, stream: bool, timeout: float = TIMEOUT, **kwargs: Any
) -> str:
    """One real litellm call against the server; returns the whole reply text."""
    if flavour == "openai":
        target: dict[str, Any] = {
            "model": OPENAI_MODEL,
            "api_base": server.openai_base,
            "api_key": "x",
        }
    else:
        target = {"model": OLLAMA_MODEL, "api_base": server.url}
    kwargs.setdefault("max_retries", 0)  # the openai client would retry 500s twice by default
    response = litellm.completion(
        messages=MESSAGES, stream=stream, timeout=timeout, **target, **kwargs
    )
    if stream:
        return "".join(chunk.choices[0].delta.content or "" for chunk in response if chunk.choices)
    content = response.choices[0].message.content
    return content or ""


# --- success paths -------------------------------------------------------------------------


@pytest.mark.parametrize("flavour", ["openai", "ollama"])
@pytest.mark.parametrize("stream", [False, True])
def test_reply_text_round_trips(server: ModelServer, flavour: str, stream: bool) -> None:
    server.add(ScriptedReply(text=REPLY, chunk_size=7))
    assert call(server, flavour, stream=stream) == REPLY
    [request] = server.chat_requests
    assert request.path == ("/v1/chat/completions" if flavour == "openai" else "/api/chat")
    assert request.body.get("stream", False) is stream
    assert [(m["role"], m["content"]) for m in request.body["messages"]] == [
        (m["role"], m["content"]) for m in MESSAGES
    ]


def test_openai_request_carries_model_auth_and_options(server: ModelServer) -> None:
    server.add(REPLY)
    call(server, "openai", stream=False, temperature=0.2, max_tokens=256, seed=7)
    [request] = server.chat_requests
    assert request.body["model"] == "test"
    assert request.headers["authorization"] == "Bearer x"
    assert request.body["temperature"] == 0.2
    assert request.body["max_tokens"] == 256
    assert request.body["seed"] == 7


def test_ollama_request_carries_options(server: ModelServer) -> None:
    server.add(REPLY)
    call(server, "ollama", stream=True, num_ctx=8192, temperature=0.1, max_tokens=100)
    [request] = server.chat_requests
    assert request.body["model"] == "qwen2.5-coder:7b"
    assert request.body["options"] == {"num_ctx": 8192, "temperature": 0.1, "num_predict": 100}
    # litellm's ollama_chat calls nothing but /api/chat for a completion.
    assert [r.path for r in server.requests] == ["/api/chat"]


@pytest.mark.parametrize("flavour", ["openai", "ollama"])
def test_non_streaming_usage(server: ModelServer, flavour: str) -> None:
    server.add(ScriptedReply(text=REPLY, prompt_tokens=120, completion_tokens=30))
    response = litellm.completion(
        messages=MESSAGES,
        timeout=TIMEOUT,
        max_retries=0,
        **(
            {"model": OPENAI_MODEL, "api_base": server.openai_base, "api_key": "x"}
            if flavour == "openai"
            else {"model": OLLAMA_MODEL, "api_base": server.url}
        ),
    )
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (120, 30)


@pytest.mark.parametrize("flavour", ["openai", "ollama"])
def test_streaming_usage_when_asked(server: ModelServer, flavour: str) -> None:
    server.add(ScriptedReply(text=REPLY, prompt_tokens=120, completion_tokens=30))
    target: dict[str, Any] = (
        {"model": OPENAI_MODEL, "api_base": server.openai_base, "api_key": "x"}
        if flavour == "openai"
        else {"model": OLLAMA_MODEL, "api_base": server.url}
    )
    chunks = list(
        litellm.completion(
            messages=MESSAGES,
            stream=True,
            stream_options={"include_usage": True},
            timeout=TIMEOUT,
            max_retries=0,
            **target,
        )
    )
    usages = [c.usage for c in chunks if getattr(c, "usage", None) is not None]
    assert usages, "no chunk carried usage"
    assert (usages[-1].prompt_tokens, usages[-1].completion_tokens) == (120, 30)
    if flavour == "openai":
        assert server.chat_requests[0].body["stream_options"] == {"include_usage": True}


def test_stream_arrives_in_several_chunks(server: ModelServer) -> None:
    server.add(ScriptedReply(chunks=("```py", "thon\nx = ", "1\n``", "`\n")))
    response = litellm.completion(
        model=OPENAI_MODEL,
        api_base=server.openai_base,
        api_key="x",
        messages=MESSAGES,
        stream=True,
        timeout=TIMEOUT,
        max_retries=0,
    )
    pieces = [c.choices[0].delta.content for c in response if c.choices]
    assert [p for p in pieces if p] == ["```py", "thon\nx = ", "1\n``", "`\n"]


def test_scripted_replies_in_order_then_default() -> None:
    with model_server(["first", "second"], default=ScriptedReply(text="fallback")) as s:
        got = [call(s, "openai", stream=False) for _ in range(3)]
        assert got == ["first", "second", "fallback"]
        assert s.pending == 0


def test_ollama_show_gives_the_context_length() -> None:
    with model_server(context_length=16384) as s:
        info = litellm.get_model_info(OLLAMA_MODEL, api_base=s.url)
        assert info["max_input_tokens"] == 16384
        assert {r.path for r in s.requests} == {"/api/show"}
        assert s.requests[0].body == {"name": "qwen2.5-coder:7b"}


# --- the wire format itself (what a non-litellm client would see) ---------------------------


def raw_request(
    server: ModelServer, method: str, path: str, body: Any = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
    try:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_openai_sse_shape(server: ModelServer) -> None:
    server.add(ScriptedReply(text="abcdef", chunk_size=3))
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    body["stream_options"] = {"include_usage": True}
    status, headers, data = raw_request(server, "POST", "/chat/completions", body)
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    events = [e for e in data.decode().split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(e[len("data: ") :]) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    texts = [c["choices"][0]["delta"].get("content") for c in chunks[1:-2]]
    assert texts == ["abc", "def"]
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == 2


def test_ollama_ndjson_shape(server: ModelServer) -> None:
    server.add(ScriptedReply(text="abcdef", chunk_size=3, prompt_tokens=9))
    body = {"model": "qwen2.5-coder:7b", "messages": MESSAGES}  # Ollama streams by default
    status, headers, data = raw_request(server, "POST", "/api/chat", body)
    assert status == 200
    assert headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in data.decode().splitlines()]
    assert [line["message"]["content"] for line in lines] == ["abc", "def", ""]
    assert [line["done"] for line in lines] == [False, False, True]
    assert lines[-1]["prompt_eval_count"] == 9
    assert lines[-1]["eval_count"] == 2


def test_model_listings(server: ModelServer) -> None:
    status, _, data = raw_request(server, "GET", "/v1/models")
    assert status == 200
    assert {m["id"] for m in json.loads(data)["data"]} >= {"test"}
    status, _, data = raw_request(server, "GET", "/api/tags")
    assert status == 200
    assert "qwen2.5-coder:7b" in {m["name"] for m in json.loads(data)["models"]}


# --- failures, and the litellm exception each one surfaces as ------------------------------

# (flavour, stream, failure) -> exception class litellm 1.106 raises. All are subclasses of
# openai.APIError. Notable: a mid-stream failure is a MidStreamFallbackError (a
# ServiceUnavailableError) whose `original_exception` is the APIConnectionError and whose
# `generated_content` holds the text received so far.
FAILURES: list[tuple[str, bool, str, type[Exception]]] = [
    ("openai", False, "not_found", NotFoundError),
    ("openai", True, "not_found", NotFoundError),
    ("openai", False, "server_error", InternalServerError),
    ("openai", True, "server_error", InternalServerError),
    ("openai", False, "drop", InternalServerError),  # "Connection error."
    ("openai", True, "drop", MidStreamFallbackError),
    ("openai", True, "stream_error", MidStreamFallbackError),
    ("openai", False, "empty_body", InternalServerError),
    ("openai", False, "bad_json", InternalServerError),
    ("ollama", False, "not_found", NotFoundError),
    ("ollama", True, "not_found", NotFoundError),
    ("ollama", False, "server_error", InternalServerError),
    ("ollama", True, "server_error", InternalServerError),
    ("ollama", False, "drop", APIConnectionError),
    ("ollama", True, "drop", MidStreamFallbackError),
    ("ollama", True, "stream_error", BadRequestError),  # KeyError 'message' -> 400
    ("ollama", False, "empty_body", APIConnectionError),
    ("ollama", False, "bad_json", APIConnectionError),
]


@pytest.mark.parametrize(("flavour", "stream", "failure", "expected"), FAILURES)
def test_failure_surfaces_as(
    server: ModelServer, flavour: str, stream: bool, failure: Any, expected: type[Exception]
) -> None:
    server.add(ScriptedReply(text=REPLY, failure=failure, chunk_size=8, drop_after=2))
    with pytest.raises(expected) as info:
        call(server, flavour, stream=stream)
    assert type(info.value) is expected  # exactly this class, not a subclass
    assert len(server.chat_requests) == 1  # max_retries=0: one attempt
    if expected is MidStreamFallbackError and failure == "drop":
        partial = getattr(info.value, "generated_content", "")
        assert REPLY.startswith(partial)


def test_not_found_messages_name_the_model(server: ModelServer) -> None:
    server.add(ScriptedReply(failure="not_found"), ScriptedReply(failure="not_found"))
    with pytest.raises(NotFoundError, match=r"model 'qwen2\.5-coder:7b' not found"):
        call(server, "ollama", stream=False)
    with pytest.raises(NotFoundError, match="The model `test` does not exist"):
        call(server, "openai", stream=False)


def test_unknown_model_is_a_404_without_scripting() -> None:
    with model_server(models=["qwen2.5-coder:7b"]) as s:
        assert call(s, "ollama", stream=False) == "ok"
        with pytest.raises(NotFoundError):
            call(s, "openai", stream=False)  # model "test" was never "pulled"
        status, _, data = raw_request(s, "POST", "/api/show", {"name": "llama3:8b"})
        assert (status, json.loads(data)) == (404, {"error": "model 'llama3:8b' not found"})


@pytest.mark.parametrize("flavour", ["openai", "ollama"])
@pytest.mark.parametrize("stream", [False, True])
def test_empty_reply_is_not_an_error(server: ModelServer, flavour: str, stream: bool) -> None:
    # litellm hands back "" without complaint: tm must treat it as an unusable reply itself.
    server.add(ScriptedReply(text=""))
    assert call(server, flavour, stream=stream) == ""


@pytest.mark.parametrize("flavour", ["openai", "ollama"])
@pytest.mark.parametrize("failure", ["empty_body", "bad_json"])
def test_garbage_stream_body_yields_nothing(
    server: ModelServer, flavour: str, failure: Any
) -> None:
    # A streamed 200 whose body holds no events is silently an empty reply, not an exception.
    server.add(ScriptedReply(text=REPLY, failure=failure))
    assert call(server, flavour, stream=True) == ""


@pytest.mark.parametrize("flavour", ["openai", "ollama"])
@pytest.mark.parametrize("stream", [False, True])
def test_slow_server_times_out(server: ModelServer, flavour: str, stream: bool) -> None:
    server.add(ScriptedReply(text=REPLY, delay=10))
    started = time.monotonic()
    with pytest.raises(Timeout):
        call(server, flavour, stream=stream, timeout=0.5)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("flavour", ["openai", "ollama"])
def test_stalled_stream_times_out_mid_stream(server: ModelServer, flavour: str) -> None:
    server.add(ScriptedReply(text=REPLY, chunk_size=8, chunk_delay=10))
    started = time.monotonic()
    # litellm raises MidStreamFallbackError here, or (openai flavour, litellm >= 1.110) Timeout;
    # what tm relies on is the wording, which `llm._translate` maps to its timeout error.
    with pytest.raises((MidStreamFallbackError, Timeout)) as info:
        call(server, flavour, stream=True, timeout=0.5)
    assert "timed out" in str(info.value)
    assert time.monotonic() - started < 5
    translated = _translate(info.value, "openai/test", server.openai_base, 0.5)
    assert isinstance(translated, ModelTimeoutError)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("flavour", "expected"),
    [("openai", InternalServerError), ("ollama", APIConnectionError)],
)
def test_unreachable_endpoint(flavour: str, expected: type[Exception]) -> None:
    port = free_port()
    target: dict[str, Any] = (
        {"model": OPENAI_MODEL, "api_base": f"http://127.0.0.1:{port}/v1", "api_key": "x"}
        if flavour == "openai"
        else {"model": OLLAMA_MODEL, "api_base": f"http://127.0.0.1:{port}"}
    )
    with pytest.raises(expected) as info:
        litellm.completion(messages=MESSAGES, timeout=2, max_retries=0, **target)
    assert type(info.value) is expected
    # The openai flavour says only "Connection error."; tm must name the endpoint itself.
    assert "Connection" in str(info.value)


def test_openai_client_retries_server_errors_unless_told_not_to(server: ModelServer) -> None:
    server.add(*[ScriptedReply(failure="server_error")] * 3)
    with pytest.raises(InternalServerError):
        call(server, "openai", stream=False, max_retries=1)
    assert len(server.chat_requests) == 2


def test_stop_does_not_wait_for_a_sleeping_handler() -> None:
    s = ModelServer([ScriptedReply(text="late", delay=30)]).start()
    with pytest.raises(Timeout):
        call(s, "ollama", stream=False, timeout=0.3)
    started = time.monotonic()
    s.stop()
    assert time.monotonic() - started < 2
