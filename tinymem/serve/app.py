"""The aiohttp application: routes, the bearer token, OpenAI-style errors, SSE streaming.

Every core call runs in a worker thread (`asyncio.to_thread`); the event loop only moves
bytes. A streamed chat answer starts once the model's first piece has arrived (or the call
has failed, which then comes back as an error object with its HTTP status), and each piece is
written to the client as it arrives.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from tinymem.errors import TinymemError, UsageError
from tinymem.serve import views
from tinymem.serve.chat import ChatOutcome, ServeSettings, chat, conversation_of, trailer
from tinymem.serve.errors import error_body, status_for

__all__ = ["SETTINGS", "make_app"]

SETTINGS: web.AppKey[ServeSettings] = web.AppKey("settings", ServeSettings)
TOKEN: web.AppKey[str] = web.AppKey("token", str)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _error(message: str, status: int, code: str | None = None) -> web.Response:
    return web.json_response(error_body(message, status, code), status=status)


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The bearer token (when one is set), and tm's errors as OpenAI error objects."""
    token = request.app[TOKEN]
    if token:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return _error("a bearer token is required (Authorization: Bearer …)", 401)
    try:
        return await handler(request)
    except TinymemError as exc:
        return _error(str(exc), status_for(exc))


async def _body(request: web.Request) -> Any:
    try:
        return await request.json()
    except ValueError:
        raise UsageError("the request body is not JSON") from None


def _sync(
    fn: Callable[..., Any], *args: Any
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handler(request: web.Request) -> web.StreamResponse:
        settings = request.app[SETTINGS]
        extra = [request.match_info.get(a) for a in args]
        return web.json_response(await asyncio.to_thread(fn, settings, *extra))

    return handler


async def _recent(request: web.Request) -> web.StreamResponse:
    settings = request.app[SETTINGS]
    limit = request.query.get("limit")
    return web.json_response(await asyncio.to_thread(views.recent, settings, limit))


async def _user_code(request: web.Request) -> web.StreamResponse:
    body = await _body(request)
    result = await asyncio.to_thread(views.user_code, request.app[SETTINGS], body)
    return web.json_response(result)


def _chunk(ident: str, model: str, delta: dict[str, str], finish: str | None) -> bytes:
    doc = {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(doc, ensure_ascii=False)}\n\n".encode()


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


async def _chat(request: web.Request) -> web.StreamResponse:
    settings = request.app[SETTINGS]
    body = await _body(request)
    conversation_of(body)  # a malformed request is refused before any work
    ident = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    if not body.get("stream"):
        outcome = await asyncio.to_thread(chat, settings, body, None)
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
        failed = outcome.result.error
        if failed is not None:
            return _error(str(failed), status_for(failed))
        pending: list[str] = []
    else:
        pending = [first.result()]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    model = _model_name(body)
    await response.write(_chunk(ident, model, {"role": "assistant", "content": ""}, None))
    for piece in pending:
        await response.write(_chunk(ident, model, {"content": piece}, None))
    while not work.done() or not pieces.empty():
        getter = asyncio.ensure_future(pieces.get())
        await asyncio.wait({work, getter}, return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            await response.write(_chunk(ident, model, {"content": getter.result()}, None))
        else:
            getter.cancel()
    done: ChatOutcome | None = None
    broke: TinymemError | None = None
    try:
        done = work.result()
        broke = done.result.error
    except TinymemError as exc:  # after the stream began (recording it failed)
        broke = exc
    if done is None or broke is not None:
        # The stream broke after it began: say so in the stream, as OpenAI does.
        assert broke is not None
        err = error_body(str(broke), status_for(broke))
        await response.write(f"data: {json.dumps(err)}\n\n".encode())
    else:
        tail = trailer(done) if settings.trailer else ""
        if tail:
            await response.write(_chunk(ident, model, {"content": tail}, None))
        await response.write(_chunk(ident, model, {}, "stop"))
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


def make_app(settings: ServeSettings, token: str | None) -> web.Application:
    app = web.Application(middlewares=[_guard], client_max_size=8 * 1024 * 1024)
    app[SETTINGS] = settings
    app[TOKEN] = token or ""
    app.router.add_post("/v1/chat/completions", _chat)
    app.router.add_post("/chat/completions", _chat)
    app.router.add_get("/v1/models", _sync(views.models))
    app.router.add_get("/models", _sync(views.models))
    app.router.add_post("/v1/user/code", _user_code)
    app.router.add_get("/health", _sync(views.health))
    app.router.add_get("/doctor", _sync(views.doctor))
    app.router.add_get("/state", _sync(views.state))
    app.router.add_get("/recent", _recent)
    app.router.add_get("/episodes/{ref}", _sync(views.episode, "ref"))
    return app
