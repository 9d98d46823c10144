"""One chat request through tm: the client's messages with tm's context in front, one
model call through the same path and settings as `tm ask`, the reply recorded as one ask
episode, and (with `tm serve --accept`) what Gate B allows applied.

Runs in a worker thread with its own repository handle: the core is synchronous and a
pygit2 repository is not shared between threads. Parallel requests record their episodes
through the ledger's compare-and-swap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tinymem.ask import AskOptions, AskResult, ask
from tinymem.errors import UsageError
from tinymem.llm import OnText
from tinymem.sync import open_synced

__all__ = [
    "ChatOutcome",
    "ServeSettings",
    "chat",
    "conversation_of",
    "model_flag",
    "routable",
    "trailer",
]

ROLES = frozenset({"system", "user", "assistant", "tool", "developer"})


@dataclass(frozen=True)
class ServeSettings:
    workdir: str
    flags: dict[str, str | None] = field(default_factory=dict)  # as `tm ask`'s
    accept: bool = False  # apply what Gate B allows (`tm serve --accept`)
    trailer: bool = True


@dataclass
class ChatOutcome:
    result: AskResult
    accepted: list[str] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)  # `acceptreply.held_back`


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def conversation_of(body: Any) -> list[dict[str, str]]:
    """The client's messages as role/content pairs (text parts joined), or a UsageError."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise UsageError("the request needs a JSON body with a `messages` list")
    out: list[dict[str, str]] = []
    for m in body["messages"]:
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            raise UsageError("every message needs a `role` (system, user, assistant, tool)")
        out.append({"role": str(m["role"]), "content": _text(m.get("content"))})
    if not any(m["role"] == "user" and m["content"].strip() for m in out):
        raise UsageError("the conversation has no user message")
    return out


def model_flag(requested: Any, configured: str | None) -> str | None:
    """The client's `model` when it is a litellm model string (a provider litellm routes,
    then a name: `ollama_chat/qwen2.5-coder:7b`), else tm's own: a client's "gpt-4o" or
    "tinymem" names no endpoint tm knows, and neither does a Hugging Face name such as
    `Qwen/Qwen2.5-Coder-7B-Instruct`, whose `/` is not a provider's."""
    name = requested.strip() if isinstance(requested, str) else ""
    if "/" in name and routable(name):
        return name
    return configured


def routable(model: str) -> bool:
    """Whether litellm knows which provider serves `model`. Asked in the request's worker
    thread, where the model call imports litellm anyway (never on tm's start-up path)."""
    from tinymem.llm import import_litellm

    litellm = import_litellm()
    try:
        litellm.get_llm_provider(model=model)
    except Exception:  # litellm's BadRequestError: "LLM Provider NOT provided"
        return False
    return True


def chat(settings: ServeSettings, body: Any, on_text: OnText | None = None) -> ChatOutcome:
    conversation = conversation_of(body)
    # Relevance and the episode summary read the user's words, latest first.
    users = [m["content"] for m in conversation if m["role"] == "user"]
    prompt = "\n".join(reversed(users))
    flags = dict(settings.flags)
    flags["model"] = model_flag(body.get("model"), settings.flags.get("model"))
    repo = open_synced(settings.workdir)
    opts = AskOptions(prompt=prompt, flags=flags, conversation=conversation)
    result = ask(repo, opts, on_text)
    outcome = ChatOutcome(result)
    if settings.accept and result.error is None and not result.aborted:
        from tinymem.acceptreply import accept_reply

        done = accept_reply(repo, result.live)
        outcome.accepted, outcome.held = done.promoted, done.held
    return outcome


def trailer(outcome: ChatOutcome) -> str:
    """One line after the model's text: what tm made of it, and how to accept it."""
    live = outcome.result.live
    if not live:
        return ""
    ep = outcome.result.committed.episode.id if outcome.result.committed else "?"
    parts = []
    for p in live:
        state = (
            "applied"
            if p.id in outcome.accepted
            else "held back"
            if p.id in outcome.held
            else "blocked"
            if p.blocked
            else "pending"
        )
        parts.append(f"{p.id} {p.path or '?'} {state}")
    hint = "tm diff; tm accept ID" if any(p.id not in outcome.accepted for p in live) else "done"
    return f"\n\n[tinymem: episode {ep}: " + ", ".join(parts) + f" — {hint}]\n"
