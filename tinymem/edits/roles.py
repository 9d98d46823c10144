"""What a definition's own head says it is among the members of one name.

Members of one class can share a name: a property's getter, setter and deleter
(`@property`, `@x.setter`, `@x.deleter`; `get x()` / `set x(v)` in JavaScript and
TypeScript), and `typing.overload` stubs beside their implementation. The file keys the
later ones `x#2`, `x#3`. A block's decorator or accessor keyword is evidence of which one it
rewrites, stronger than its signature (which is what a model changes) and than a name in the
request (`Scaffold.static_folder` names the getter and the setter alike).

A Ruby class keeps its singleton methods (`def self.[](*items)`) apart from its instance
methods (`def [](key)`): one name, two members, and `self.` in the block's head says which.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["GETTER", "OVERLOAD", "SETTER", "SINGLETON", "by_role", "new_accessor", "role"]

GETTER = "getter"
SETTER = "setter"
DELETER = "deleter"
OVERLOAD = "overload"
SINGLETON = "singleton"

_PY_DECORATOR = re.compile(r"@\s*([\w.]+)")
_PY_ROLES = {"property": GETTER}
_PY_ACCESSOR = re.compile(r"\w+\.(getter|setter|deleter)")
_PY_OVERLOAD = re.compile(r"(?:\w+\.)*overload")
_JS_ACCESSOR = re.compile(
    r"^(?:(?:static|public|private|protected|override|readonly|declare|abstract)\s+)*"
    r"(get|set)\s+[#\w$\[]"
)
_RUBY_SINGLETON = re.compile(r"def\s+(?:self|[A-Z]\w*(?:::[A-Z]\w*)*)\s*\.")
_COMMENT = ("#", "//", "/*", "*")
_JS_FAMILY = frozenset({"javascript", "typescript", "tsx"})


def role(language: str | None, text: bytes) -> str | None:
    """GETTER, SETTER, DELETER, OVERLOAD or SINGLETON when the definition's head says so,
    else None."""
    if language == "python":
        return _python_role(text)
    if language in _JS_FAMILY:
        return _js_role(text)
    if language == "ruby":
        return _ruby_role(text)
    return None


def _ruby_role(text: bytes) -> str | None:
    for line in text.decode("utf-8", "replace").split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return SINGLETON if _RUBY_SINGLETON.match(stripped) else None
    return None


def _python_role(text: bytes) -> str | None:
    found: str | None = None
    for line in text.decode("utf-8", "replace").split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        decorator = _PY_DECORATOR.match(stripped)
        if decorator is None:
            break  # the def line: decorators are above it only
        name = decorator.group(1)
        if _PY_OVERLOAD.fullmatch(name):
            return OVERLOAD  # an overload stub is that whatever else it carries
        accessor = _PY_ACCESSOR.fullmatch(name)
        if accessor is not None:
            found = accessor.group(1)
        elif name in _PY_ROLES:
            found = _PY_ROLES[name]
    return found


def _js_role(text: bytes) -> str | None:
    for line in text.decode("utf-8", "replace").split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith(_COMMENT) or stripped.startswith("@"):
            continue
        accessor = _JS_ACCESSOR.match(stripped)
        if accessor is None:
            return None
        return GETTER if accessor.group(1) == "get" else SETTER
    return None


T = TypeVar("T")


def by_role(
    item_role: str | None, candidates: Sequence[T], role_of: Callable[[T], str | None]
) -> list[T]:
    """The candidates the block's role allows: the same accessor or overload stub; a
    definition that is no overload stub is the implementation, never a stub. Empty when
    none fits (the caller then keeps its candidates: the block may have dropped a
    decorator). A definition without `self.` is an instance method, never a singleton one."""
    if item_role is None:
        return [c for c in candidates if role_of(c) not in (OVERLOAD, SINGLETON)]
    return [c for c in candidates if role_of(c) == item_role]


_ACCESSORS = frozenset({GETTER, SETTER, DELETER})


def new_accessor(item_role: str | None, roles: Sequence[str | None]) -> bool:
    """The block writes an accessor the property does not have yet (a setter beside a
    getter alone): a new member of that name, never a rewrite of the getter. So is a Ruby
    singleton method beside instance methods only, and the reverse: `def self.[]` never
    rewrites `def []` (the callers hold both first unless the request names the class
    method, `singletons.py`: which one the model meant is not provable)."""
    if not roles:
        return False
    if item_role == SINGLETON:
        return all(r != SINGLETON for r in roles)
    if item_role is None:
        return all(r == SINGLETON for r in roles)
    return item_role in _ACCESSORS and all(r in _ACCESSORS and r != item_role for r in roles)
