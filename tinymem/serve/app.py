"""The aiohttp application: routes, and the middlewares every request passes through.

Outermost, `_tracked` counts the requests in flight (a stop waits for them) and answers 503
once a stop has begun; then `_answered` applies `guard.py`'s refusals (foreign Host or
Origin, no JSON, no or a wrong bearer token) and turns every error, tm's own and aiohttp's
(404 no such path, 405, 413 body too large, 408 a body not sent in time) alike, into an
OpenAI error object.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from tinymem.errors import TinymemError
from tinymem.serve import console, views
from tinymem.serve.chat import ServeSettings
from tinymem.serve.completions import SETTINGS, WRITE_DEADLINE, completions, write_timeout
from tinymem.serve.errors import error_body, internal_error, status_for
from tinymem.serve.guard import Access, refusal
from tinymem.serve.lifecycle import FLIGHTS, Flights
from tinymem.serve.request import (
    BODY_DEADLINE,
    BodyTimeout,
    ClientGone,
    body_timeout,
    json_body,
)

__all__ = ["MAX_BODY", "SETTINGS", "make_app"]

ACCESS: web.AppKey[Access] = web.AppKey("access", Access)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
MAX_BODY = 8 * 1024 * 1024
ENDPOINTS = (
    "/v1/chat/completions, /v1/models, /v1/user/code, /health, /doctor, /state, /notes, /recent,"
    " /episodes/ID"
)


def _error(message: str, status: int, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.json_response(error_body(message, status), status=status, headers=headers)


def _http_message(request: web.Request, exc: web.HTTPException) -> str:
    if isinstance(exc, web.HTTPNotFound):
        return f"tm serve has no endpoint {request.path}; it answers {ENDPOINTS}"
    if isinstance(exc, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(exc.allowed_methods))
        return f"{request.method} is not allowed on {request.path}; use {allowed}"
    if isinstance(exc, web.HTTPRequestEntityTooLarge):
        return f"the request body is over tm serve's limit of {MAX_BODY // (1024 * 1024)} MiB"
    return exc.reason


@web.middleware
async def _tracked(request: web.Request, handler: Handler) -> web.StreamResponse:
    flights = request.app[FLIGHTS]
    if flights.stopping:
        refused = _error("tm serve is stopping; send the request again once it runs", 503)
        refused.force_close()
        return refused
    flights.begin()
    try:
        return await handler(request)
    finally:
        flights.end()


@web.middleware
async def _answered(request: web.Request, handler: Handler) -> web.StreamResponse:
    response: web.StreamResponse | None = None
    message: str | None = None
    try:
        response = await _answer(request, handler)
        return response
    except web.HTTPException as exc:
        response, message = exc, exc.reason
        raise
    finally:
        if response is not None:
            if message is None and isinstance(response, web.Response) and response.status >= 400:
                message = _error_message(response)
            console.emit(console.line(request, response.status, message))


def _error_message(response: web.Response) -> str | None:
    """The sentence of an error object this server answered, for its console."""
    if not isinstance(response.body, bytes):
        return None
    try:
        return str(json.loads(response.body)["error"]["message"])
    except (ValueError, TypeError, KeyError):
        return None


async def _answer(request: web.Request, handler: Handler) -> web.StreamResponse:
    refused = refusal(request.app[ACCESS], request.method, request.headers, request.content_type)
    if refused is not None:
        return _error(refused.message, refused.status, refused.headers)
    try:
        return await handler(request)
    except TinymemError as exc:
        return _error(str(exc), status_for(exc))
    except ClientGone as exc:
        # To no one (the connection is closed); the request's console line says it.
        return _error(str(exc), 400)
    except BodyTimeout as exc:
        return await _late(request, str(exc))
    except web.HTTPException as exc:
        if exc.status < 400:
            raise  # not an error (aiohttp's redirects)
        allow = exc.headers.get("Allow")
        return _error(_http_message(request, exc), exc.status, {"Allow": allow} if allow else None)
    except Exception as exc:  # a bug in tm: one sentence, never a bare 500 page
        return _error(internal_error(exc), 500)


async def _late(request: web.Request, message: str) -> web.StreamResponse:
    """A 408, sent, and the connection closed at once. Returned the usual way, aiohttp would
    go on reading the rest of the body to throw it away (its lingering close: up to 10 s, a
    stop waiting on it), from a client that has already had its time."""
    late = _error(message, 408)
    late.force_close()
    try:
        await late.prepare(request)
        await late.write_eof()
    except ConnectionError:
        pass  # gone meanwhile: no one to tell
    request.protocol.force_close()  # closes once what was written has gone out
    return late


def _sync(fn: Callable[..., Any], *args: str) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        settings = request.app[SETTINGS]
        extra = [request.match_info.get(a) for a in args]
        return web.json_response(await _in_thread(fn, settings, *extra))

    return handler


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.to_thread(fn, *args)


async def _recent(request: web.Request) -> web.StreamResponse:
    limit = request.query.get("limit")
    return web.json_response(await _in_thread(views.recent, request.app[SETTINGS], limit))


async def _user_code(request: web.Request) -> web.StreamResponse:
    body = await json_body(request)
    return web.json_response(await _in_thread(views.user_code, request.app[SETTINGS], body))


def make_app(settings: ServeSettings, access: Access) -> web.Application:
    app = web.Application(middlewares=[_tracked, _answered], client_max_size=MAX_BODY)
    app[SETTINGS] = settings
    app[ACCESS] = access
    app[FLIGHTS] = Flights()
    app[BODY_DEADLINE] = body_timeout()
    app[WRITE_DEADLINE] = write_timeout()
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_post("/chat/completions", completions)
    app.router.add_get("/v1/models", _sync(views.models))
    app.router.add_get("/models", _sync(views.models))
    app.router.add_post("/v1/user/code", _user_code)
    app.router.add_get("/health", _sync(views.health))
    app.router.add_get("/doctor", _sync(views.doctor))
    app.router.add_get("/state", _sync(views.state))
    app.router.add_get("/notes", _sync(views.notes))
    app.router.add_get("/recent", _recent)
    app.router.add_get("/episodes/{ref}", _sync(views.episode, "ref"))
    return app
