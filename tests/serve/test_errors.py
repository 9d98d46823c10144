"""Every error of `tm serve` is an OpenAI error object with a fitting status, whether tm or
aiohttp finds it, and a request tm could not store is the client's 400, never a 500."""

from __future__ import annotations

import json

from tests.conftest import PY_APP
from tests.serve.served import Served, asks, is_error_object


def test_every_error_is_an_openai_error_object(served: Served) -> None:
    r = served.raw("GET", "/v1/embeddings")
    assert r.status == 404 and is_error_object(r)
    assert "/v1/embeddings" in r.doc["error"]["message"]
    r = served.raw("GET", "/v1/chat/completions")
    assert r.status == 405 and is_error_object(r) and "POST" in r.headers["allow"]
    big = b'{"messages": [{"role": "user", "content": "' + b"x" * (8 * 1024 * 1024) + b'"}]}'
    r = served.raw("POST", "/v1/chat/completions", big, Content_Type="application/json")
    assert r.status == 413 and is_error_object(r) and "8 MiB" in r.doc["error"]["message"]
    r = served.raw("POST", "/v1/chat/completions", b"{nope", Content_Type="application/json")
    assert r.status == 400 and is_error_object(r)
    for limit in ("-1", "lots"):
        r = served.raw("GET", f"/recent?limit={limit}")
        assert r.status == 400 and is_error_object(r)
        message = r.doc["error"]["message"]
        assert message.startswith("limit must be") and "-n" not in message, message
    r = served.raw("GET", "/episodes/0123456789ab")
    assert r.status == 404 and is_error_object(r)
    assert not served.model.chat_requests


def test_a_lone_surrogate_is_a_bad_request_naming_the_field(served: Served) -> None:
    # Written by hand: json.dumps would not let a lone surrogate through either.
    for stream in ("false", "true"):
        body = (
            '{"stream": ' + stream + ', "messages": [{"role": "system", "content": "ok"},'
            ' {"role": "user", "content": "fix \\ud83d"}]}'
        )
        r = served.raw(
            "POST", "/v1/chat/completions", body.encode(), Content_Type="application/json"
        )
        assert r.status == 400 and is_error_object(r), r
        assert r.doc["error"]["message"].startswith("messages[1].content "), r.doc
    r = served.raw(
        "POST",
        "/v1/user/code",
        b'{"path": "app.py", "content": "x = 1  # \\ud800\\n"}',
        Content_Type="application/json",
    )
    assert r.status == 400 and is_error_object(r)
    assert r.doc["error"]["message"].startswith("content "), r.doc
    # Refused before any work: no model call, no episode, the file as it was.
    assert not served.model.chat_requests and not asks(served.repo)
    assert (served.repo / "app.py").read_text() == PY_APP
    # A surrogate pair (a whole emoji, escaped) is text like any other.
    served.model.add("ok")
    doc = {"model": "x", "messages": [{"role": "user", "content": "fix \U0001f600"}]}
    r = served.raw(
        "POST", "/v1/chat/completions", json.dumps(doc).encode(), Content_Type="application/json"
    )
    assert r.status == 200 and r.doc["choices"][0]["message"]["content"].startswith("ok")
