"""`POST /v1/chat/completions`: one chat request as one ask episode, answered as JSON or as
SSE chunks written as the model sends them.

The core call runs in a worker thread (`asyncio.to_thread`); the event loop only moves bytes.
A streamed answer starts once the model's first piece has arrived (or the call has failed,
which then comes back as an error object with its HTTP status). The handler always waits for
the worker, even when the client has hung up, so that a stop of the server (which waits for
handlers) never leaves an episode half-recorded.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable
from typing import Any

from aiohttp import web

from tinymem.errors import TinymemError
from tinymem.serve import console
from tinymem.serve.chat import ChatOutcome, ServeSettings, chat, conversation_of, trailer
from tinymem.serve.errors import error_body, internal_error, status_for
from tinymem.serve.memory import give_back
from tinymem.serve.request import env_seconds, json_body

__all__ = [
    "SETTINGS",
    "WRITE_DEADLINE",
    "WRITE_TIMEOUT",
    "WRITE_TIMEOUT_ENV",
    "completions",
    "write_timeout",
]

SETTINGS: web.AppKey[ServeSettings] = web.AppKey("settings", ServeSettings)

# Seconds one write of a streamed reply may wait for the client to take what came before it.
# A client that stops reading but keeps its connection open (a frozen editor, a process
# stopped in a debugger) lets the socket's buffers fill, after which a write waits for it for
# good: its request stays in flight, and with it a stop of the server, which waits for every
# request in flight. Past this its connection is cut, as if it had hung up: the episode goes
# on to be recorded. TM_SERVE_WRITE_TIMEOUT changes it (the tests use seconds, not 30).
WRITE_TIMEOUT = 30.0
WRITE_TIMEOUT_ENV = "TM_SERVE_WRITE_TIMEOUT"


def write_timeout() -> float:
    """WRITE_TIMEOUT, or TM_SERVE_WRITE_TIMEOUT's seconds; read once, when the server starts
    (a value that cannot work refuses the start, not the first streamed request)."""
    return env_seconds(WRITE_TIMEOUT_ENV, WRITE_TIMEOUT)


WRITE_DEADLINE: web.AppKey[float] = web.AppKey("write_deadline", float)


def _error(message: str, status: int) -> web.Response:
    return web.json_response(error_body(message, status), status=status)


def _event(doc: Any) -> bytes:
    return f"data: {json.dumps(doc, ensure_ascii=False)}\n\n".encode()


def _chunk(ident: str, model: str, delta: dict[str, str], finish: str | None) -> bytes:
    return _event(
        {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def _model_name(body: Any) -> str:
    """The model a chunk names: the client's own word for it (chunks go out before tm's
    settings are resolved in the worker)."""
    requested = body.get("model") if isinstance(body, dict) else None
    return requested if isinstance(requested, str) else "tinymem"


def _usage(outcome: ChatOutcome) -> dict[str, int | None]:
    c = outcome.result.call
    prompt = c.prompt_tokens if c else None
    completion = c.completion_tokens if c else None
    total = None if prompt is None or completion is None else prompt + completion
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}


def _noted(request: web.Request, outcome: ChatOutcome) -> None:
    """What this chat did, for the console's line."""
    result = outcome.result
    ep = result.committed.episode.id if result.committed else None
    fields: dict[str, Any] = {"model": result.prepared.model}
    if ep:
        fields["episode"] = ep
    live = result.live
    blocked = sum(1 for p in live if p.blocked)
    fields["proposals"] = f"{len(live)}" + (f" ({blocked} blocked)" if blocked else "")
    if outcome.accepted:
        fields["proposals"] += f", {len(outcome.accepted)} applied"
    if result.error is not None:
        fields["error"] = str(result.error)
    if result.truncated is not None:
        fields["notice"] = result.truncated
    console.note(request, **fields)


def _wants_usage(body: Any) -> bool:
    """`stream_options.include_usage`: OpenAI then sends a last chunk with empty `choices`
    and the usage, which clients that count tokens wait for."""
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


async def completions(request: web.Request) -> web.StreamResponse:
    try:
        return await _answer(request)
    finally:
        # Whatever the request ended in, what it left is given back.
        _settle_after()


async def _answer(request: web.Request) -> web.StreamResponse:
    settings = request.app[SETTINGS]
    body = await json_body(request)
    conversation_of(body)  # a malformed request is refused before any work
    ident = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    if body.get("stream"):
        return await _stream(request, settings, body, ident, request.app[WRITE_DEADLINE])
    outcome = await asyncio.to_thread(chat, settings, body, None)
    _noted(request, outcome)
    failed = outcome.result.error
    if failed is not None:
        return _error(str(failed), status_for(failed))
    assert outcome.result.call is not None
    text = outcome.result.call.text + (trailer(outcome) if settings.trailer else "")
    return web.json_response(
        {
            "id": ident,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": outcome.result.prepared.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": _usage(outcome),
        }
    )


class _Sse:
    """The event stream to the client. A client that hung up (an editor's stop button) is
    not an error: writing stops and the episode goes on to be recorded. Nor is one that
    stopped reading: a write it leaves waiting `deadline` seconds cuts its connection, and the
    same goes on."""

    def __init__(self, request: web.Request, response: web.StreamResponse, deadline: float) -> None:
        self.request = request
        self.response = response
        self.deadline = deadline
        self.gone = False
        self.stalled = False

    async def send(self, data: bytes) -> None:
        if not self.gone:
            await self._within(self.response.write(data))

    async def close(self) -> None:
        if not self.gone:
            await self._within(self.response.write_eof())

    async def _within(self, write: Awaitable[None]) -> None:
        # aiohttp's writes wait (drain) once its buffer passes 64 KiB behind the socket's.
        try:
            async with asyncio.timeout(self.deadline):
                await write
        except ConnectionError:  # aiohttp's ClientConnectionResetError is one
            self.gone = True
        except TimeoutError:
            self.gone = self.stalled = True
            transport = self.request.transport
            if transport is not None:
                # Not close(): it would wait to send the buffer this client never takes.
                transport.abort()


async def _stream(
    request: web.Request, settings: ServeSettings, body: Any, ident: str, deadline: float
) -> web.StreamResponse:
    loop = asyncio.get_running_loop()
    pieces: asyncio.Queue[str] = asyncio.Queue()

    def on_text(piece: str) -> None:
        loop.call_soon_threadsafe(pieces.put_nowait, piece)

    work = asyncio.ensure_future(asyncio.to_thread(chat, settings, body, on_text))
    first = asyncio.ensure_future(pieces.get())
    await asyncio.wait({work, first}, return_when=asyncio.FIRST_COMPLETED)
    if not first.done():
        first.cancel()
        outcome = work.result()  # raises a TinymemError from before the call, as JSON
        _noted(request, outcome)
        failed = outcome.result.error
        if failed is not None:
            return _error(str(failed), status_for(failed))
        pending: list[str] = []
    else:
        pending = [first.result()]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    sse = _Sse(request, response, deadline)
    try:
        await response.prepare(request)
    except ConnectionError:
        sse.gone = True
    model = _model_name(body)
    await sse.send(_chunk(ident, model, {"role": "assistant", "content": ""}, None))
    for piece in pending:
        await sse.send(_chunk(ident, model, {"content": piece}, None))
    while not work.done() or not pieces.empty():
        getter = asyncio.ensure_future(pieces.get())
        await asyncio.wait({work, getter}, return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            await sse.send(_chunk(ident, model, {"content": getter.result()}, None))
        else:
            getter.cancel()
    done: ChatOutcome | None = None
    broke: dict[str, Any] | None = None
    try:
        done = work.result()
        _noted(request, done)
        if done.result.error is not None:
            broke = error_body(str(done.result.error), status_for(done.result.error))
    except TinymemError as exc:  # after the stream began (recording it failed)
        broke = error_body(str(exc), status_for(exc))
        console.note(request, error=str(exc))
    except Exception as exc:  # a bug in tm: still an event, as the response has begun
        broke = error_body(internal_error(exc), 500)
        console.note(request, error=broke["error"]["message"])
    if done is None or broke is not None:
        # The stream broke after it began: say so in the stream, as OpenAI does.
        assert broke is not None
        await sse.send(_event(broke))
    else:
        tail = trailer(done) if settings.trailer else ""
        if tail:
            await sse.send(_chunk(ident, model, {"content": tail}, None))
        await sse.send(_chunk(ident, model, {}, "stop"))
        if _wants_usage(body):
            await sse.send(
                _event(
                    {
                        "id": ident,
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [],
                        "usage": _usage(done),
                    }
                )
            )
    await sse.send(b"data: [DONE]\n\n")
    await sse.close()
    if sse.stalled:
        said = done.result.truncated if done is not None else None
        cut = f"the client took none of its stream for {deadline:g} s: the stream was cut off"
        console.note(request, notice=f"{said}; {cut}" if said else cut)
    return response


def _settle_after() -> None:
    """`give_back` what the request left, in a worker thread, without keeping the client
    waiting for it."""
    asyncio.get_running_loop().run_in_executor(None, give_back)
