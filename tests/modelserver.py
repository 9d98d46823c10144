"""A real model server on loopback for tests: no mocks of litellm, only a scripted endpoint.

It speaks the two protocols tm's users point litellm at:

- OpenAI chat completions: `POST /v1/chat/completions` (and `/chat/completions`), JSON or SSE
  streaming (`data: {chunk}` ... `data: [DONE]`, usage in a last chunk with empty `choices`
  when `stream_options.include_usage`), `GET /v1/models`.
- Ollama: `POST /api/chat` (NDJSON streaming or one JSON object, with `prompt_eval_count` and
  `eval_count`), `POST /api/generate`, `POST /api/show` (a `model_info` with a context length),
  `GET /api/tags`, `GET /api/version`. litellm's `ollama_chat/` provider only calls
  `/api/chat` for a completion; `/api/show` is what `litellm.get_model_info` asks for a model
  that is not in its static cost map.
- OpenAI embeddings: `POST /v1/embeddings` (and `/embeddings`): a deterministic vector for
  each input, from its hashed words (`embed_vector`), so texts sharing words, or words the
  server's `synonyms` map to one, are close. `embed_failure` (a `Failure`) makes it fail.

Each chat request takes the next scripted reply from a queue (or the default reply when the
queue is empty) and every request is recorded (method, path, headers, JSON body) so tests can
assert the exact messages and options received.

    with ModelServer() as server:
        server.add("```python\\nx = 1\\n```")
        server.add(ScriptedReply(failure="not_found"))
        litellm.completion(model="openai/test", api_base=server.openai_base, ...)
        assert server.chat_requests[0].body["messages"][0]["role"] == "system"
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Failure = Literal["not_found", "server_error", "drop", "empty_body", "stream_error", "bad_json"]

OPENAI_CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
OLLAMA_CHAT_PATHS = frozenset({"/api/chat", "/api/generate"})
EMBEDDING_PATHS = frozenset({"/v1/embeddings", "/embeddings"})
EMBED_DIMENSIONS = 64


def embed_vector(text: str, synonyms: Mapping[str, str] | None = None) -> list[float]:
    """The fake embedding of `text`: one dimension per hashed word (after `synonyms`),
    normalized. Texts with no word in common are orthogonal (cosine 0, barring a collision)."""
    vec = [0.0] * EMBED_DIMENSIONS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        word = (synonyms or {}).get(word, word)
        vec[int(hashlib.sha256(word.encode()).hexdigest(), 16) % EMBED_DIMENSIONS] += 1.0
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


@dataclass(frozen=True)
class ScriptedReply:
    """What the server answers to one chat request.

    failure:
      not_found     404 in the protocol's own shape (OpenAI error object / Ollama `{"error"}`)
      server_error  500 in the protocol's own shape
      drop          streaming: `drop_after` chunks, then the socket is cut mid-body;
                    non-streaming: the socket is closed before any response
      empty_body    200 with an empty body
      stream_error  streaming: `drop_after` chunks, then an error event/line (Ollama does this
                    when a runner dies mid-generation); non-streaming: same as server_error
      bad_json      200 with a body that is not JSON
    `delay` is slept before the status line (use it longer than the client timeout to provoke
    a timeout); `chunk_delay` between streamed chunks. Sleeps end early when the server stops.
    `hold`: streamed chunks after the first wait until this event is set (10 s at most), so a
    test can see what the client received while the model was still sending.
    """

    text: str = ""
    chunks: tuple[str, ...] | None = None  # explicit stream chunks; default: `chunk_size` slices
    chunk_size: int = 16
    chunk_delay: float = 0.0
    delay: float = 0.0
    failure: Failure | None = None
    drop_after: int = 1
    status_message: str | None = None  # overrides the error message of a failure
    prompt_tokens: int | None = None  # default: a word count of the request's messages
    completion_tokens: int | None = None  # default: the number of chunks
    finish_reason: str = "stop"
    hold: threading.Event | None = None

    def pieces(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        size = max(1, self.chunk_size)
        return [self.text[i : i + size] for i in range(0, len(self.text), size)]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # header names lower-cased
    body: Any  # parsed JSON, or None when the body is empty or not JSON
    raw: bytes
    time: float = field(default=0.0)

    @property
    def model(self) -> str | None:
        if isinstance(self.body, dict):
            value = self.body.get("model") or self.body.get("name")
            return value if isinstance(value, str) else None
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a handler stuck in a long `delay` must not block interpreter exit
    allow_reuse_address = True

    def __init__(self, owner: ModelServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Default prints a traceback to stderr; keep it for the test to inspect instead.
        import traceback

        self.owner.errors.append(traceback.format_exc())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streaming, as real servers do
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        self.owner._connected(+1)
        try:
            # The client gave up (timeout, cancelled stream): not a server error.
            with contextlib.suppress(
                BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError
            ):
                super().handle()
        finally:
            self.owner._connected(-1)

    # --- plumbing ------------------------------------------------------------------------

    @property
    def owner(self) -> ModelServer:
        return self.server.owner

    def _record(self) -> RecordedRequest:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        record = RecordedRequest(
            method=self.command,
            path=self.path.split("?", 1)[0],
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
            time=time.monotonic(),
        )
        self.owner._append(record)
        return record

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self._send_bytes(status, data, "application/json")

    def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _start_stream(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _cut(self) -> None:
        """Close the socket abruptly: the client sees a truncated body or no response."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless the server stops first; True when the server is stopping."""
        return seconds > 0 and self.owner._stopping.wait(seconds)

    # --- routing -------------------------------------------------------------------------

    def do_GET(self) -> None:
        record = self._record()
        if record.path in ("/v1/models", "/models"):
            created = int(time.time())
            data = [
                {"id": m, "object": "model", "created": created, "owned_by": "tinymem-tests"}
                for m in self.owner.listed_models
            ]
            self._send_json(200, {"object": "list", "data": data})
        elif record.path == "/api/tags":
            self._send_json(200, {"models": [_ollama_tag(m) for m in self.owner.listed_models]})
        elif record.path == "/api/version":
            self._send_json(200, {"version": "0.6.2"})
        elif record.path == "/":
            self._send_bytes(200, b"Ollama is running", "text/plain; charset=utf-8")
        else:
            self._send_bytes(404, b"404 page not found", "text/plain")

    def do_POST(self) -> None:
        record = self._record()
        if record.path in OPENAI_CHAT_PATHS:
            self._chat(record, ollama=False)
        elif record.path in OLLAMA_CHAT_PATHS:
            self._chat(record, ollama=True)
        elif record.path == "/api/show":
            self._show(record)
        elif record.path in EMBEDDING_PATHS:
            self._embeddings(record)
        else:
            self._send_bytes(404, b"404 page not found", "text/plain")

    def _show(self, record: RecordedRequest) -> None:
        model = record.model or ""
        if not self.owner.knows(model):
            self._send_json(404, {"error": f"model '{model}' not found"})
            return
        self._send_json(200, _ollama_show(model, self.owner.context_length))

    def _embeddings(self, record: RecordedRequest) -> None:
        body = record.body if isinstance(record.body, dict) else {}
        model = record.model or "unknown"
        failure = self.owner.embed_failure
        if failure is not None or not self.owner.knows(model):
            status = 404 if failure == "not_found" or failure is None else 500
            message = _not_found_message(model, False) if status == 404 else "embedding failed"
            self._error(False, status, message)
            return
        given = body.get("input", [])
        texts = [given] if isinstance(given, str) else [str(t) for t in given]
        data = [
            {"object": "embedding", "index": i, "embedding": embed_vector(t, self.owner.synonyms)}
            for i, t in enumerate(texts)
        ]
        words = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": words, "total_tokens": words}
        self._send_json(200, {"object": "list", "data": data, "model": model, "usage": usage})

    # --- chat ----------------------------------------------------------------------------

    def _chat(self, record: RecordedRequest, *, ollama: bool) -> None:
        body = record.body if isinstance(record.body, dict) else {}
        model = record.model or "unknown"
        reply = self.owner._next_reply()
        if not self.owner.knows(model):
            reply = ScriptedReply(failure="not_found")
        if self._sleep(reply.delay):
            self._cut()
            return
        # Ollama streams unless told otherwise; OpenAI only when asked.
        stream = bool(body.get("stream", ollama))
        failure = reply.failure
        if failure == "not_found":
            self._error(ollama, 404, reply.status_message or _not_found_message(model, ollama))
        elif failure == "server_error" or (failure == "stream_error" and not stream):
            self._error(ollama, 500, reply.status_message or "internal server error")
        elif failure == "empty_body":
            self._send_bytes(200, b"", "application/json")
        elif failure == "bad_json":
            self._send_bytes(200, b"<html>not json</html>", "application/json")
        elif failure == "drop" and not stream:
            self._cut()
        elif ollama:
            self._ollama_chat(record, reply, model, stream)
        else:
            self._openai_chat(record, reply, model, stream)

    def _error(self, ollama: bool, status: int, message: str) -> None:
        if ollama:
            self._send_json(status, {"error": message})
            return
        kind = "invalid_request_error" if status < 500 else "server_error"
        code = "model_not_found" if status == 404 else None
        self._send_json(
            status, {"error": {"message": message, "type": kind, "param": None, "code": code}}
        )

    def _openai_chat(
        self, record: RecordedRequest, reply: ScriptedReply, model: str, stream: bool
    ) -> None:
        body = record.body if isinstance(record.body, dict) else {}
        ident = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        pieces = reply.pieces()
        usage = _usage(reply, body, pieces)
        if not stream:
            self._send_json(
                200,
                {
                    "id": ident,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "system_fingerprint": "fp_tinymem",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply.text},
                            "logprobs": None,
                            "finish_reason": reply.finish_reason,
                        }
                    ],
                    "usage": usage,
                },
            )
            return

        def event(delta: dict[str, Any], finish: str | None) -> bytes:
            chunk = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": "fp_tinymem",
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }
            return f"data: {json.dumps(chunk)}\n\n".encode()

        self._start_stream("text/event-stream")
        self._chunk(event({"role": "assistant", "content": ""}, None))
        for index, piece in enumerate(pieces):
            if reply.failure in ("drop", "stream_error") and index >= reply.drop_after:
                break
            if self._sleep(reply.chunk_delay):
                self._cut()
                return
            if index == 1 and reply.hold is not None:
                reply.hold.wait(10)
            self._chunk(event({"content": piece}, None))
        if reply.failure == "drop":
            self._cut()
            return
        if reply.failure == "stream_error":
            message = reply.status_message or "the model runner stopped"
            error = {"error": {"message": message, "type": "server_error", "code": None}}
            self._chunk(f"data: {json.dumps(error)}\n\n".encode())
            self._end_stream()
            return
        self._chunk(event({}, reply.finish_reason))
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            last = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": "fp_tinymem",
                "choices": [],
                "usage": usage,
            }
            self._chunk(f"data: {json.dumps(last)}\n\n".encode())
        self._chunk(b"data: [DONE]\n\n")
        self._end_stream()

    def _ollama_chat(
        self, record: RecordedRequest, reply: ScriptedReply, model: str, stream: bool
    ) -> None:
        body = record.body if isinstance(record.body, dict) else {}
        generate = record.path == "/api/generate"
        pieces = reply.pieces()
        usage = _usage(reply, body, pieces)

        def message(content: str, done: bool) -> dict[str, Any]:
            out: dict[str, Any] = {"model": model, "created_at": _now()}
            if generate:
                out["response"] = content
            else:
                out["message"] = {"role": "assistant", "content": content}
            out["done"] = done
            if done:
                out.update(
                    {
                        "done_reason": reply.finish_reason,
                        "total_duration": 1_000_000,
                        "load_duration": 1_000,
                        "prompt_eval_count": usage["prompt_tokens"],
                        "prompt_eval_duration": 1_000,
                        "eval_count": usage["completion_tokens"],
                        "eval_duration": 1_000,
                    }
                )
            return out

        if not stream:
            self._send_json(200, message(reply.text, True))
            return
        self._start_stream("application/x-ndjson")
        for index, piece in enumerate(pieces):
            if reply.failure in ("drop", "stream_error") and index >= reply.drop_after:
                break
            if self._sleep(reply.chunk_delay):
                self._cut()
                return
            self._chunk((json.dumps(message(piece, False)) + "\n").encode())
        if reply.failure == "drop":
            self._cut()
            return
        if reply.failure == "stream_error":
            error = {"error": reply.status_message or "the model runner stopped"}
            self._chunk((json.dumps(error) + "\n").encode())
            self._end_stream()
            return
        self._chunk((json.dumps(message("", True)) + "\n").encode())
        self._end_stream()


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _not_found_message(model: str, ollama: bool) -> str:
    if ollama:
        return f"model '{model}' not found"
    return f"The model `{model}` does not exist or you do not have access to it."


def _usage(reply: ScriptedReply, body: dict[str, Any], pieces: Sequence[str]) -> dict[str, int]:
    prompt = reply.prompt_tokens
    if prompt is None:
        prompt = 0
        for msg in body.get("messages") or []:
            content = msg.get("content") if isinstance(msg, dict) else None
            if isinstance(content, str):
                prompt += len(content.split())
        if isinstance(body.get("prompt"), str):
            prompt += len(body["prompt"].split())
    completion = reply.completion_tokens if reply.completion_tokens is not None else len(pieces)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _ollama_tag(model: str) -> dict[str, Any]:
    return {
        "name": model,
        "model": model,
        "modified_at": _now(),
        "size": 4_683_087_332,
        "digest": uuid.uuid5(uuid.NAMESPACE_URL, model).hex * 2,
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": "qwen2",
            "families": ["qwen2"],
            "parameter_size": "7.6B",
            "quantization_level": "Q4_K_M",
        },
    }


def _ollama_show(model: str, context_length: int) -> dict[str, Any]:
    return {
        "license": "Apache License 2.0",
        "modelfile": f"# Modelfile generated by tests\nFROM {model}\n",
        "parameters": 'stop "<|im_end|>"',
        "template": "{{ .System }}{{ .Prompt }}",
        "details": _ollama_tag(model)["details"],
        "model_info": {
            "general.architecture": "qwen2",
            "general.parameter_count": 7_615_616_512,
            "qwen2.context_length": context_length,
            "llama.context_length": context_length,
            "qwen2.embedding_length": 3584,
        },
        "capabilities": ["completion", "tools", "insert"],
        "modified_at": _now(),
    }


class ModelServer:
    """The loopback server; use as a context manager or call start()/stop()."""

    def __init__(
        self,
        replies: Iterable[ScriptedReply | str] = (),
        *,
        models: Sequence[str] | None = None,
        context_length: int = 32768,
        default: ScriptedReply | None = None,
    ) -> None:
        # models=None: every model name is known; otherwise unknown ones get a 404 (a real
        # "you never pulled that model" answer, without scripting it).
        self.models = tuple(models) if models is not None else None
        self.context_length = context_length
        self.default = default if default is not None else ScriptedReply(text="ok")
        self.synonyms: dict[str, str] = {}  # word → the word it embeds as (`embed_vector`)
        self.embed_failure: Failure | None = None  # set: every embedding request fails
        self.errors: list[str] = []  # tracebacks of server-side exceptions (should stay empty)
        self._queue: deque[ScriptedReply] = deque()
        self._requests: list[RecordedRequest] = []
        self._open = 0  # connections a client holds open (kept alive or mid-reply)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.add(*replies)

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> ModelServer:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="tinymem-test-model-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()  # wakes handlers sleeping in a delay
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- addresses -----------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the model server is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`: the api_base for `ollama_chat/` models."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base(self) -> str:
        """`http://127.0.0.1:PORT/v1`: the api_base for `openai/` models."""
        return self.url + "/v1"

    # --- script --------------------------------------------------------------------------

    def add(self, *replies: ScriptedReply | str) -> None:
        with self._lock:
            for reply in replies:
                self._queue.append(ScriptedReply(text=reply) if isinstance(reply, str) else reply)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def knows(self, model: str) -> bool:
        return self.models is None or model in self.models

    @property
    def listed_models(self) -> tuple[str, ...]:
        return self.models if self.models is not None else ("test", "qwen2.5-coder:7b")

    def _connected(self, change: int) -> None:
        with self._lock:
            self._open += change

    @property
    def open_connections(self) -> int:
        """Connections the client has not closed: kept alive for its next request, or left
        behind by a reply it stopped reading and never closed."""
        with self._lock:
            return self._open

    def _next_reply(self) -> ScriptedReply:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default

    # --- what was received ---------------------------------------------------------------

    def _append(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        chat = OPENAI_CHAT_PATHS | OLLAMA_CHAT_PATHS
        return [r for r in self.requests if r.path in chat]

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path in EMBEDDING_PATHS]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()
            self._queue.clear()


@contextmanager
def model_server(
    replies: Iterable[ScriptedReply | str] = (), **kwargs: Any
) -> Iterator[ModelServer]:
    """`with model_server(["reply"]) as server:`; also the body of a pytest fixture:

    @pytest.fixture
    def server() -> Iterator[ModelServer]:
        with model_server() as s:
            yield s
    """
    server = ModelServer(replies, **kwargs)
    server.start()
    try:
        yield server
    finally:
        server.stop()
