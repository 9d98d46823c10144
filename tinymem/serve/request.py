"""A request's JSON body, refused at the door when tm could not store its text.

JSON may spell a lone UTF-16 surrogate (`"\\ud83d"`, half an emoji cut by a careless client);
Python decodes it into a str that no UTF-8 encoder takes, so it would fail deep in the core
(writing the prompt, the file) as a 500. Naming the field here makes it the client's 400.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from tinymem.errors import UsageError

__all__ = ["json_body", "lone_surrogate"]


async def json_body(request: web.Request) -> Any:
    try:
        doc = await request.json()
    except UnicodeDecodeError:
        raise UsageError("the request body is not UTF-8 text") from None
    except ValueError:
        raise UsageError("the request body is not JSON") from None
    where = lone_surrogate(doc)
    if where is not None:
        raise UsageError(
            f"{where} holds a lone UTF-16 surrogate (half of a character, such as"
            " \\ud83d without its pair), which is not text; send whole characters"
        )
    return doc


def _bad(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def lone_surrogate(doc: Any) -> str | None:
    """The field (`messages[0].content`) whose string holds a lone surrogate, or None.

    Iterative: json.loads accepts nesting as deep as the recursion limit allows, and a walk
    that recursed would hit that limit first."""
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if _bad(value):
                return where or "the body"
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                if _bad(key):
                    return f"a key of {where or 'the body'}"
                stack.append((f"{where}.{key}" if where else key, item))
        elif isinstance(value, list):
            for index in reversed(range(len(value))):
                stack.append((f"{where}[{index}]", value[index]))
    return None
