"""Functions defined inside other functions (closures, local helpers), which are no entities.

Extraction stops at function bodies, so a block holding `def wrapper(...)` that the file
defines only inside `_safecall` would otherwise find no anchor and be added at the top level
(or, when a top-level function has the same name, replace that one). A nested function is
part of its enclosing definition's text: tm changes it only through that definition, so a
block that gives it alone is refused with the enclosing definition named (`align.py`).
Python, JavaScript/TypeScript (`function f`, `const f = () => …`) and Rust; Go closures are
`x := func…` statements that no block gives as a definition, and C# local functions do not
parse alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tinymem.edits.alignment import signature
from tinymem.symbols import Symbol
from tinymem.symbols.treesitter import parse_root

__all__ = ["Nested", "ambiguous_reason", "nested_functions", "nested_reason", "same_signature"]

_JS_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "function",
        "generator_function",
        "arrow_function",
        "method_definition",
    }
)
# Nodes whose body makes what is defined in it local, per language.
_SCOPES = {
    "python": frozenset({"function_definition", "lambda"}),
    "javascript": _JS_FUNCTIONS,
    "typescript": _JS_FUNCTIONS,
    "tsx": _JS_FUNCTIONS,
    "rust": frozenset({"function_item", "closure_expression"}),
}
_NAMED = {
    "python": frozenset({"function_definition"}),
    "javascript": frozenset({"function_declaration", "generator_function_declaration"}),
    "rust": frozenset({"function_item"}),
}
_JS_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})


@dataclass(frozen=True)
class Nested:
    name: str
    enclosing: str | None  # the innermost entity of the file around it (None: none is)
    line: int  # 1-based
    text: bytes


def _named_kinds(language: str) -> frozenset[str]:
    return _NAMED.get(language, _NAMED["javascript"] if language in _SCOPES else frozenset())


def nested_functions(language: str | None, data: bytes, symbols: Sequence[Symbol]) -> list[Nested]:
    """Every named function defined inside a function's body in `data`, with the entity
    around it. Empty for a language this does not read."""
    if language not in _SCOPES:
        return []
    scopes = _SCOPES[language]
    named = _named_kinds(language)
    found: list[Nested] = []
    stack = [(parse_root(language, data), False)]
    while stack:
        node, local = stack.pop()
        name_node = None
        if local and node.type in named:
            name_node = node.child_by_field_name("name")
        elif local and node.type == "variable_declarator":
            value = node.child_by_field_name("value")
            if value is not None and value.type in _JS_VALUES:
                name_node = node.child_by_field_name("name")
        if name_node is not None and name_node.type in ("identifier", "field_identifier"):
            around = [s for s in symbols if s.start <= node.start_byte and node.end_byte <= s.end]
            inner = min(around, key=lambda s: s.end - s.start, default=None)
            found.append(
                Nested(
                    data[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace"),
                    inner.name if inner is not None else None,
                    node.start_point[0] + 1,
                    data[node.start_byte : node.end_byte],
                )
            )
        inside = local or node.type in scopes
        stack.extend((child, inside) for child in reversed(node.children))
    return found


def _where(n: Nested) -> str:
    return f"`{n.enclosing}`" if n.enclosing else f"the function at line {n.line}"


def nested_reason(short: str, path: str, local: list[Nested]) -> str:
    """Why a block giving only a nested function is not placed: what to ask for instead."""
    where = " and ".join(dict.fromkeys(_where(n) for n in local))
    whole = " or ".join(dict.fromkeys(f"the whole of {_where(n)}" for n in local))
    return (
        f"`{short}` is a function nested in {where} in {path}, not a definition of its own"
        " (tm changes it only with the function around it): ask again for"
        f" {whole} with the change, or for the change as a SEARCH/REPLACE block or unified"
        " diff"
    )


def ambiguous_reason(short: str, path: str, tops: list[str], local: list[Nested]) -> str:
    where = " and ".join(dict.fromkeys(_where(n) for n in local))
    named = ", ".join(f"`{t}`" for t in tops)
    whole = " or ".join(dict.fromkeys(f"the whole of {_where(n)}" for n in local))
    return (
        f"`{short}` is ambiguous in {path}: it could be {named} or the function of that name"
        f" nested in {where}; ask again for {whole} to change the nested one, keeping the"
        f" signature of {named} as the file has it to change that one, or for the change as"
        " a SEARCH/REPLACE block or unified diff"
    )


def same_signature(text: bytes, other: bytes) -> bool:
    return signature(text) == signature(other)
