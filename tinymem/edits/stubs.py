"""Placeholder bodies: a definition written with `...` (or Rust's `todo!()`) where the file has
code.

Small models write the members they are not changing as stubs, the way type stubs and API
listings show them: `def mount(self, prefix, adapter) -> None: ...`, a docstring and `...`,
`fn next(&mut self) -> Option<Self::Item> { todo!() }`. Each is valid code, so neither the
syntax gate nor the elision markers (comments, `…`) catch it, and taken literally it replaces a
real body with nothing. A body is a placeholder here only when the file's own version of the
same definition is not one: protocols, abstract methods and overload stubs keep their `...`.

A bare `...` statement among a Python body's other statements (`if x:\n    ...\nelse: ...`) is
the same shorthand for the code it stands in for (`elided_members`): it is an elision where the
file's definition has no `...` statement at that place, never where it has one (`except
ImportError: ...`, `if TYPE_CHECKING: ...`). A definition the file does not have is not judged:
its `...` stands for nothing the file holds, so writing it deletes nothing, and a stub the model
adds on purpose (a protocol member, a body to fill later) is its to write.
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from collections import Counter
from collections.abc import Iterator

from tinymem.edits.normalise import parse_block
from tinymem.symbols import Symbol

__all__ = ["elided_members", "placeholder_members"]

# A place in a body: the kinds of the statements around it and the field it sits in
# (("If", "body"), ("Try", "handlers"), ...), outermost first.
_Place = tuple[tuple[str, str], ...]
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

_RUST_PLACEHOLDER = re.compile(
    rb"\{\s*(?:todo|unimplemented)!\s*\((?:[^()]|\([^()]*\))*\)\s*;?\s*\}\s*$"
)


def placeholder_members(path: str, old: bytes, new: bytes) -> list[str]:
    """The definitions in `new` (an entity's text as given, or a class holding them) whose
    body is a placeholder where `old` (the file's text of the same entity) has code; by the
    names they have within the entity ("" for the entity itself)."""
    before, after = parse_block(path, old), parse_block(path, new)
    language = after.language
    if language not in ("python", "rust") or after.problem is not None:
        return []
    olds = {_relative(before.symbols, s): s for s in before.symbols}
    found = []
    for sym in after.symbols:
        name = _relative(after.symbols, sym)
        was = olds.get(name)
        if was is None:
            continue
        if _placeholder(language, after.text, sym) and not _placeholder(language, before.text, was):
            found.append(name)
    return found


def elided_members(path: str, old: bytes, new: bytes) -> list[str]:
    """The Python definitions in `new` (as `placeholder_members` reads it) with a bare `...`
    statement among other statements at a place where `old`'s definition of the same name has
    none: the code it stands in for would be deleted. Bodies that are only a placeholder are
    `placeholder_members`' to judge."""
    before, after = parse_block(path, old), parse_block(path, new)
    if after.language != "python" or after.problem is not None:
        return []
    olds = {_relative(before.symbols, s): s for s in before.symbols}
    found = []
    for sym in after.symbols:
        name = _relative(after.symbols, sym)
        was = olds.get(name)
        if was is None:
            continue
        given = _definition(_alone(after.text, sym.start, sym.end))
        if given is None or _only_placeholder(given):
            continue
        places = list(_dots(given))
        if not places:
            continue
        known = _definition(_alone(before.text, was.start, was.end))
        spare = Counter(_dots(known) if known is not None else ())
        for place in places:
            if spare[place] <= 0:
                found.append(name)
                break
            spare[place] -= 1
    return found


def _definition(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    tree = _parse(source)
    if tree is None or len(tree.body) != 1:
        return None
    node = tree.body[0]
    return node if isinstance(node, _DEFINITIONS) else None


def _parse(source: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _only_placeholder(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    body = list(node.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    return all(_is_dots(s) for s in body)


def _dots(node: ast.AST, place: _Place = ()) -> Iterator[_Place]:
    """Where `node`'s bodies hold a bare `...` statement, nested blocks included. The methods
    and classes of the class judged are symbols of their own, judged apart; what a function
    nests is not a symbol, so it is part of the function's text."""
    kind = type(node).__name__
    apart = not place and isinstance(node, ast.ClassDef)
    for field in _BODIES:
        for child in getattr(node, field, None) or ():
            here = (*place, (kind, field))
            if isinstance(child, ast.stmt) and _is_dots(child):
                yield here
            elif not (apart and isinstance(child, _DEFINITIONS)):
                yield from _dots(child, here)


def _is_dots(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and stmt.value.value is ...
    )


def _relative(symbols: tuple[Symbol, ...], sym: Symbol) -> str:
    """The name within the outermost definition of the text: "" for it, `m` for its member."""
    outer = symbols[0].name if symbols else ""
    if sym.name == outer:
        return ""
    return sym.name.removeprefix(outer + ".")


def _placeholder(language: str | None, text: bytes, sym: Symbol) -> bool:
    span = text[sym.start : sym.end]
    if language == "rust":
        return sym.kind in ("function", "method") and _RUST_PLACEHOLDER.search(span) is not None
    if sym.kind not in ("function", "method"):
        return False
    return _python_placeholder(_alone(text, sym.start, sym.end))


def _alone(text: bytes, start: int, end: int) -> str:
    """A definition's lines, its first line included from its own indentation, dedented."""
    line_start = text.rfind(b"\n", 0, start) + 1
    lead = text[line_start:start]
    first = lead if not lead.strip() else b""
    return textwrap.dedent((first + text[start:end]).decode("utf-8", "replace"))


def _python_placeholder(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = list(tree.body[0].body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    return all(
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is ...
        for s in body
    )


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
