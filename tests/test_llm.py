"""`llm.call` closes the stream it stops reading, whatever stopped it.

A stream left open was closed later by the garbage collector, at whatever moment a
collection ran: once inside the next call's request, while that thread held httpcore's pool
lock, which the stream's close then waited for. The suite hung there for good (the second
`tm ask` of `test_a_lone_surrogate_is_an_unusable_reply`, in one process, as `tm serve` makes
every call). Here the collector is off, so a stream left open stays open."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator

import pytest

from tests.modelserver import ModelServer, ScriptedReply
from tinymem import llm
from tinymem.errors import TinymemError

_REPLY = "```python path=a.py\n" + "".join(f"x{i} = {i}\n" for i in range(40)) + "```\n"


@pytest.fixture
def no_collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _call(server: ModelServer, **extra: object) -> llm.CallResult:
    options: dict[str, object] = {"max_reply_chars": 100_000, **extra}
    return llm.call(
        "openai/test",
        [{"role": "user", "content": "x"}],
        api_base=server.openai_base,
        timeout=10,
        context=4096,
        **options,  # type: ignore[arg-type]
    )


def _closed(server: ModelServer) -> bool:
    deadline = time.monotonic() + 5
    while server.open_connections and time.monotonic() < deadline:
        time.sleep(0.01)
    return server.open_connections == 0


def _stop(_piece: str) -> None:
    raise BrokenPipeError("the reader went away")


def _ctrl_c(_piece: str) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("reply", "extra"),
    [
        (_REPLY + "y = '\ud83d'\n" + _REPLY, {}),  # a lone surrogate: not text
        (_REPLY * 4, {"max_reply_chars": len(_REPLY)}),  # longer than allowed
        (_REPLY, {"on_text": _stop}),  # where it was shown has gone (a closed pipe, serve's client)
    ],
    ids=["not-text", "too-long", "reader-gone"],
)
def test_a_stream_stopped_half_way_by_an_error_is_closed(
    server: ModelServer, no_collector: None, reply: str, extra: dict[str, object]
) -> None:
    server.add(ScriptedReply(text=reply, chunk_size=8))
    with pytest.raises(TinymemError):
        _call(server, **extra)
    # The traceback pytest keeps holds the call's frame, and with it the stream.
    assert _closed(server), "the stream was left open"


def test_a_stream_stopped_by_ctrl_c_is_closed(server: ModelServer, no_collector: None) -> None:
    server.add(ScriptedReply(text=_REPLY * 4, chunk_size=8))
    on_text: Callable[[str], None] = _ctrl_c
    result = _call(server, on_text=on_text)
    assert result.aborted
    assert _closed(server), "the stream was left open"


def test_an_ollama_call_asks_the_endpoint_nothing_more(server: ModelServer) -> None:
    """litellm priced each call from the model's details, which it asked Ollama for
    (`/api/show`) from a logging thread after the call returned, under its own 6,000 s
    timeout; `tm ask` waited for that thread before it could exit."""
    server.add(ScriptedReply(text=_REPLY))
    reply = llm.call(
        "ollama_chat/test",
        [{"role": "user", "content": "x"}],
        api_base=server.url,
        timeout=10,
        context=4096,
        max_reply_chars=100_000,
    )
    assert reply.text == _REPLY
    deadline = time.monotonic() + 2  # it came within milliseconds of the call's end
    while time.monotonic() < deadline:
        assert [r.path for r in server.requests] == ["/api/chat"]
        time.sleep(0.05)


def test_tm_s_price_is_not_sent_to_the_model(server: ModelServer, no_collector: None) -> None:
    server.add(ScriptedReply(text=_REPLY))
    assert _call(server).text == _REPLY
    (request,) = server.chat_requests
    assert not [k for k in request.body if "cost" in k]
