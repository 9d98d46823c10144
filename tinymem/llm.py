"""The one place that talks to a model: a single streamed chat call through litellm.

litellm costs ~2.5 s and ~170 MB to import, so it is imported inside `call` only, never on the
start-up path of `tm` (shell completion re-runs `tm` on every TAB).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tinymem.errors import (
    ModelError,
    ModelNotFoundError,
    ModelReplyError,
    ModelSetupError,
    ModelTimeoutError,
    ModelUnreachableError,
    TinymemError,
)
from tinymem.modelsetup import check_endpoint, check_setup
from tinymem.redact import redact, redact_url

OnText = Callable[[str], None]


@dataclass
class CallResult:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float
    first_token_seconds: float | None
    aborted: bool = False


def _litellm_environment() -> None:
    # Before the import: no remote cost-map fetch, no .env loading, no banner on stdout.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")


def import_litellm() -> Any:
    _litellm_environment()
    import litellm

    litellm.suppress_debug_info = True
    litellm.disable_hf_tokenizer_download = True
    litellm.telemetry = False
    return litellm


def _import_quietly() -> None:
    # Whatever goes wrong here, the call's own import meets it again and reports it.
    with contextlib.suppress(BaseException):
        import_litellm()


@contextlib.contextmanager
def preloading() -> Iterator[None]:
    """litellm imported in a thread while the body runs (hydration), so that the call starts
    after the longer of the two, not their sum (`call`'s own import would also wait for it, on
    Python's import lock). Never a daemon thread: a daemon thread still importing when the
    interpreter finalizes can crash it or hang it. When the body ends normally the thread is
    joined here; when it raises (an error, Ctrl-C) it is not, so that the one sentence (or
    `tm: interrupted`) comes at once, and the interpreter's shutdown waits for the thread
    before it finalizes anything (threading's own join of non-daemon threads)."""
    if "litellm" in sys.modules:
        yield
        return
    _litellm_environment()  # here: os.environ is not changed under a running git child
    thread = threading.Thread(target=_import_quietly, name="tm-litellm-import", daemon=False)
    thread.start()
    yield
    thread.join()


def endpoint_name(model: str, api_base: str | None) -> str:
    if api_base:
        return redact_url(api_base) or api_base
    if model.startswith(("ollama/", "ollama_chat/")):
        return "http://localhost:11434 (Ollama's default)"
    return f"the default endpoint of {model.split('/', 1)[0]}"


_UNDECODABLE = re.compile(r"can't decode bytes? (?:0x[0-9a-f]{2}|in position)[^:]*")


def _not_text(exc: BaseException) -> str | None:
    """What was not UTF-8 when the call failed on such bytes (a UnicodeError in the chain of
    causes, or litellm's rewording of one: it keeps the message, not always the cause)."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if isinstance(at, UnicodeError):
            return str(at)
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    found = _UNDECODABLE.search(str(exc))
    return None if found is None else found.group(0)


def _text_piece(piece: str, model: str, where: str) -> str:
    """`piece` when it is text tm can print and store. JSON can spell a lone UTF-16
    surrogate (`"\\ud83d"`, half a character; an escaped pair arrives joined), which no UTF-8
    encoder takes: the reply is unusable, not the endpoint unreachable."""
    try:
        piece.encode()
    except UnicodeEncodeError as exc:
        code = ord(piece[exc.start])
        raise ModelReplyError(
            f"the reply from {model} at {where} holds a lone UTF-16 surrogate (U+{code:04X},"
            " half of a character), which is not text; the model server sent a broken reply"
        ) from None
    return piece


def _translate(exc: Exception, model: str, api_base: str | None, timeout: float) -> TinymemError:
    where = endpoint_name(model, api_base)
    name = type(exc).__name__
    text = redact(" ".join(str(exc).split()), api_base)
    undecodable = _not_text(exc)
    if undecodable is not None:
        return ModelReplyError(
            f"the reply from {model} at {where} is not UTF-8 text ({undecodable}); the model"
            " server sent a broken reply"
        )
    if "LLM Provider NOT provided" in text:
        return ModelSetupError(
            f"litellm knows no provider for the model {model}: write it as provider/name,"
            f" e.g. --model ollama_chat/{model} for Ollama or openai/{model} for an"
            " OpenAI-compatible server"
        )
    text = _cut(text, 200)
    if name in ("Timeout", "APITimeoutError") or "timed out" in text.lower():
        return ModelTimeoutError(
            f"the model {model} at {where} did not answer within {timeout:g} s;"
            " raise --timeout or use a smaller model"
        )
    if name == "NotFoundError" or "not found" in text.lower():
        return ModelNotFoundError(
            f"the endpoint {where} does not know the model {model}; pull or load it"
            " (e.g. `ollama pull`), or choose another with --model"
        )
    if name in ("APIConnectionError", "ServiceUnavailableError", "InternalServerError") and (
        "connect" in text.lower() or "connection" in text.lower()
    ):
        return ModelUnreachableError(
            f"cannot reach the model endpoint {where} for {model}; is the server running?"
            " Set it with --api-base or TM_API_BASE"
        )
    if name == "AuthenticationError":
        return ModelError(
            f"{where} refused the credentials for {model}; set the provider's API key"
            " environment variable"
        )
    return ModelUnreachableError(f"the model call to {where} for {model} failed: {name}: {text}")


def _cut(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word's end and marked, never mid-word."""
    if len(text) <= limit:
        return text
    head = text[:limit].rsplit(" ", 1)[0]
    return head + " …"


def call(
    model: str,
    messages: list[dict[str, str]],
    *,
    api_base: str | None,
    timeout: float,
    context: int,
    max_reply_chars: int,
    on_text: OnText | None = None,
) -> CallResult:
    """One streamed call. Ctrl-C returns what arrived so far with `aborted=True`.

    A setting whose shape cannot work, or an endpoint where nothing listens, is reported
    before litellm is imported: in milliseconds, not seconds."""
    litellm = _reachable_litellm(model, api_base, timeout)
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "timeout": timeout,
        "temperature": 0,
        # One call means one request: a silent retry would double a slow local model's time
        # and hide the endpoint's real error.
        "num_retries": 0,
        "max_retries": 0,
        # A price of tm's own: without one, litellm's logging thread asked an Ollama endpoint
        # for the model's details (`/api/show`) after every call, under litellm's 6,000 s
        # timeout, and the interpreter waits for that thread before it exits.
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
    }
    if api_base:
        kwargs["api_base"] = api_base
    # Without it litellm drops the usage of a streamed reply, Ollama's too (its
    # prompt_eval_count is how a truncated prompt shows: `ask.truncation_notice`).
    kwargs["stream_options"] = {"include_usage": True}
    if model.startswith(("ollama/", "ollama_chat/")):
        # Ollama silently truncates prompts at its small default context window.
        kwargs["num_ctx"] = context
    start = time.monotonic()
    first: float | None = None
    parts: list[str] = []
    size = 0
    usage: Any = None
    stream: Any = None
    try:
        stream = litellm.completion(**kwargs)
        for chunk in stream:
            u = getattr(chunk, "usage", None)
            if u is not None:
                usage = u
            choices = getattr(chunk, "choices", None) or []
            if not choices:
                continue
            delta = getattr(choices[0], "delta", None)
            piece = getattr(delta, "content", None) if delta is not None else None
            if not piece:
                continue
            piece = _text_piece(piece, model, endpoint_name(model, api_base))
            if first is None:
                first = time.monotonic() - start
            parts.append(piece)
            size += len(piece)
            if on_text is not None:
                on_text(piece)
            if size > max_reply_chars:
                raise ModelReplyError(
                    f"the reply from {model} passed {max_reply_chars} characters and was"
                    " stopped; ask for less or raise tinymem.maxReply"
                )
    except KeyboardInterrupt:
        return CallResult("".join(parts), None, None, time.monotonic() - start, first, True)
    except ModelError:
        raise
    except Exception as exc:  # litellm/openai/httpx exceptions have no common base
        raise _translate(exc, model, api_base, timeout) from exc
    finally:
        _close(stream)
    text = "".join(parts)
    if not text.strip():
        raise ModelReplyError(
            f"the model {model} at {endpoint_name(model, api_base)} sent an empty reply"
        )
    return CallResult(
        text=text,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        seconds=time.monotonic() - start,
        first_token_seconds=first,
    )


def _close(stream: Any) -> None:
    """Close a stream now, read to its end or not. One left open was closed by the garbage
    collector whenever a collection ran: once inside the next call's request, while that
    thread held httpcore's pool lock, which the close then waited for, for good (the test
    suite hung so; `tm serve` makes every call in one process)."""
    close = getattr(stream, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()


def _reachable_litellm(model: str, api_base: str | None, timeout: float) -> Any:
    """litellm, once the setting's shape can work and something listens at the endpoint."""
    check_setup(model, api_base)
    check_endpoint(model, api_base, endpoint_name(model, api_base), timeout)
    return import_litellm()


def embed(
    model: str, texts: list[str], *, api_base: str | None, timeout: float
) -> list[list[float]]:
    """One embedding call for `texts` (litellm's `embedding`), a vector for each, in order.
    Checked and reported as `call` is: a setting that cannot work or a silent endpoint
    before litellm is imported."""
    litellm = _reachable_litellm(model, api_base, timeout)
    kwargs: dict[str, Any] = {
        "model": model,
        "input": texts,
        "timeout": timeout,
        "num_retries": 0,
        "max_retries": 0,
    }
    if api_base:
        kwargs["api_base"] = api_base
    try:
        reply = litellm.embedding(**kwargs)
        rows = sorted(reply.data, key=lambda d: _field(d, "index", 0))
        vectors = [[float(x) for x in _field(d, "embedding", [])] for d in rows]
    except ModelError:
        raise
    except Exception as exc:  # litellm/openai/httpx exceptions have no common base
        raise _translate(exc, model, api_base, timeout) from exc
    if len(vectors) != len(texts) or any(not v for v in vectors):
        raise ModelReplyError(
            f"the embedding model {model} at {endpoint_name(model, api_base)} sent"
            f" {len(vectors)} vectors for {len(texts)} texts"
        )
    return vectors


def _field(item: Any, name: str, default: Any) -> Any:
    # litellm gives dicts for some providers, objects for others.
    if isinstance(item, dict):
        return item.get(name, default)
    return getattr(item, name, default)
