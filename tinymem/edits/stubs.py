"""Placeholder bodies: a definition written with `...` (or Rust's `todo!()`) where the file has
code.

Small models write the members they are not changing as stubs, the way type stubs and API
listings show them: `def mount(self, prefix, adapter) -> None: ...`, a docstring and `...`,
`fn next(&mut self) -> Option<Self::Item> { todo!() }`. Each is valid code, so neither the
syntax gate nor the elision markers (comments, `…`) catch it, and taken literally it replaces a
real body with nothing. A body is a placeholder here only when the file's own version of the
same definition is not one: protocols, abstract methods and overload stubs keep their `...`.
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings

from tinymem.edits.normalise import parse_block
from tinymem.symbols import Symbol

__all__ = ["placeholder_members"]

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
