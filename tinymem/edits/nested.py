"""Functions defined inside other functions (closures, local helpers), which are no entities.

Extraction stops at function bodies, so a block holding `def wrapper(...)` that the file
defines only inside `_safecall` would otherwise find no anchor and be added at the top level
(or, when a top-level function has the same name, replace that one). A nested function is
part of its enclosing definition's text: tm changes it only through that definition, so a
block that gives it alone is refused with the enclosing definition named (`align.py`). A
block is that function when it takes the same parameter names (`parameters.py`: a model
rewrites annotations and defaults) or keeps its body with a parameter changed.
Python, JavaScript/TypeScript (`function f`, `const f = () => …`) and Rust; Go closures are
`x := func…` statements that no block gives as a definition, and C# local functions do not
parse alone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Query, QueryCursor

from tinymem.edits.alignment import signature
from tinymem.edits.parameters import (
    body_of,
    definition_body,
    definition_parameters,
    parameter_names,
)
from tinymem.symbols import Symbol
from tinymem.symbols.grammars import load_language
from tinymem.symbols.treesitter import parse_root

__all__ = [
    "Nested",
    "ambiguous_reason",
    "may_define",
    "nested_functions",
    "nested_reason",
    "same_body",
    "same_parameters",
    "same_signature",
    "same_signatures",
]

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
_JS_DEFS = """
(function_declaration name: (identifier)) @def
(generator_function_declaration name: (identifier)) @def
(variable_declarator name: (identifier) value: [(arrow_function) (function_expression)]) @def
"""
# Named function definitions (matched in C; a Python walk of every node cost 30-70 ms on a
# 60 KB file).
_DEFINITIONS = {
    "python": "(function_definition name: (identifier)) @def",
    "javascript": _JS_DEFS,
    "typescript": _JS_DEFS,
    "tsx": _JS_DEFS,
    "rust": "(function_item name: (identifier)) @def",
}
_QUERIES: dict[str, Query] = {}
# A cheap look before any parse: can `data` define a function of this name at all?
_DEF_WORDS = {
    "python": rb"\bdef\s+%s\b",
    "rust": rb"\bfn\s+%s\b",
}
_JS_WORDS = rb"(?:\bfunction\s*\*?\s*%s\b|\b%s\s*=)"
_WORDY = re.compile(r"\w")
_COMMENTS = ("#", "//", "/*", "*")
# A line of a body that says nothing of its own: words every function may write, whatever
# its language (control keywords, literal constants, a catch-all exception type). A line
# that names nothing else (`try:`, `except Exception:`, `pass`, `return None`, `} catch {`,
# `end`, `Ok(())`) is no evidence that a block keeps a particular body.
_BOILERPLATE = frozenset(
    {"try", "except", "catch", "rescue", "finally", "ensure", "else", "elif", "if", "then"}
    | {"do", "begin", "end", "pass", "return", "break", "continue", "raise", "throw", "yield"}
    | {"await", "async", "default", "self", "this"}
    | {"None", "True", "False", "null", "nil", "undefined", "true", "false", "Ok", "Some"}
    | {"Exception", "BaseException", "Error", "Throwable", "StandardError"}
)
_IDENTIFIER = re.compile(r"(?<!\w)[A-Za-z_]\w*")
_STRING = re.compile(r'"(?:\\.|[^"\\])*"' r"|'(?:\\.|[^'\\])*'" r"|`(?:\\.|[^`\\])*`")


@dataclass(frozen=True)
class Nested:
    name: str
    enclosing: str | None  # the innermost entity of the file around it (None: none is)
    line: int  # 1-based
    text: bytes
    parameters: tuple[str, ...] | None = None  # its parameter names (`parameters.py`)
    body: bytes = b""


def may_define(language: str | None, data: bytes, name: str) -> bool:
    """False when `data` has no text that could define a function `name` (no parse needed)."""
    if language not in _SCOPES or not name.isidentifier():
        return False
    word = re.escape(name.encode())
    pattern = _DEF_WORDS.get(language, _JS_WORDS)
    return re.search(pattern.replace(b"%s", word), data) is not None


def nested_functions(language: str | None, data: bytes, symbols: Sequence[Symbol]) -> list[Nested]:
    """Every named function defined inside a function's body in `data`, with the entity
    around it. Empty for a language this does not read."""
    if language not in _SCOPES:
        return []
    scopes = _SCOPES[language]
    query = _QUERIES.get(language)
    if query is None:
        query = _QUERIES[language] = Query(load_language(language), _DEFINITIONS[language])
    found: list[Nested] = []
    nodes = QueryCursor(query).captures(parse_root(language, data)).get("def", [])
    for node in sorted(nodes, key=lambda n: n.start_byte):
        up = node.parent
        while up is not None and up.type not in scopes:
            up = up.parent
        name = node.child_by_field_name("name")
        if up is None or name is None:
            continue  # not inside a function
        around = [s for s in symbols if s.start <= node.start_byte and node.end_byte <= s.end]
        inner = min(around, key=lambda s: s.end - s.start, default=None)
        found.append(
            Nested(
                data[name.start_byte : name.end_byte].decode("utf-8", "replace"),
                inner.name if inner is not None else None,
                node.start_point[0] + 1,
                data[node.start_byte : node.end_byte],
                definition_parameters(node, data),
                definition_body(node, data),
            )
        )
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


def ambiguous_reason(short: str, path: str, tops: dict[str, bytes], local: list[Nested]) -> str:
    """Why a block is placed nowhere when its name is both an entity's (`tops`: name ->
    text) and a nested function's, and neither its signature nor the prompt says which."""
    where = " and ".join(dict.fromkeys(_where(n) for n in local))
    whole = " or ".join(dict.fromkeys(f"the whole of {_where(n)}" for n in local))
    named = " or ".join(f"`{name}` (`{signature(text)}`)" for name, text in tops.items())
    return (
        f"`{short}` could be {named} or the function of that name nested in {where} in"
        f" {path}: ask again for {whole} to change the nested one, for the definition with"
        " its signature as the file has it to change the other, or for the change as a"
        " SEARCH/REPLACE block or unified diff"
    )


def same_signature(text: bytes, other: bytes) -> bool:
    return signature(text) == signature(other)


def same_signatures(
    language: str | None, text: bytes, tops: Sequence[bytes], local: Sequence[Nested]
) -> tuple[list[int], list[Nested]]:
    """Which of the entities `tops` (their texts; the indexes returned) and the nested
    functions `local` the definition `text` is by its signature: those whose head it writes
    the same when that picks any; else those taking the same parameter names. An exact head
    is the stronger evidence, so a top-level function whose head the block repeats is never
    outweighed by a nested one that only takes the same names."""
    heads = [i for i, top in enumerate(tops) if same_signature(text, top)]
    nests = [n for n in local if same_signature(text, n.text)]
    if heads or nests:
        return heads, nests
    names = parameter_names(language, text)
    if names is None:
        return [], []
    heads = [i for i, top in enumerate(tops) if parameter_names(language, top) == names]
    return heads, [n for n in local if n.parameters == names]


def _parameters(text: bytes) -> str:
    """A definition's parameter list as its head writes it (`(a, b=1)`, whitespace
    collapsed); the whole head when it has no parenthesis (a JS `x => …`)."""
    head = signature(text)
    start = head.find("(")
    if start < 0:
        return head
    depth = 0
    for at in range(start, len(head)):
        depth += {"(": 1, ")": -1}.get(head[at], 0)
        if depth == 0:
            return head[start : at + 1].replace(" ", "")
    return head[start:].replace(" ", "")


def same_parameters(language: str | None, text: bytes, local: Sequence[Nested]) -> list[Nested]:
    """The nested functions of `local` that the definition `text` is by its parameters: those
    whose parameter list it writes the same, else those taking the same parameter names
    (annotations, defaults, spacing and comments aside: a model rewrites those while giving
    the same function back). A block giving a function the file has only nested with other
    parameter names is a new definition, not that one."""
    same = [n for n in local if _parameters(text) == _parameters(n.text)]
    names = parameter_names(language, text) if not same else None
    return same or [n for n in local if names is not None and n.parameters == names]


def _statement_lines(body: bytes) -> Counter[str]:
    """A body's lines that say something (not blank, a brace or a comment), unindented."""
    lines = (line.strip() for line in body.decode("utf-8", "replace").split("\n"))
    return Counter(line for line in lines if _WORDY.search(line) and not line.startswith(_COMMENTS))


def _substantive(line: str) -> bool:
    """The line names something besides keywords and literals (its strings left out)."""
    return any(w not in _BOILERPLATE for w in _IDENTIFIER.findall(_STRING.sub("", line)))


def same_body(language: str | None, text: bytes, local: Sequence[Nested]) -> list[Nested]:
    """The nested functions of `local` whose body the definition `text` keeps: at least two
    of its statement lines, and of its substantive lines (`_substantive`) at least one and
    at least half. A model adding or removing a parameter of a nested function gives back
    its body with a line or two changed; a new function that only shares its name (`def
    wrapper(response)` beside a decorator's `wrapper(*args, **kwargs)`) has a body of its
    own, though it may share the lines any function writes (`try:`, `except Exception:`,
    `pass`, `return None`): those count as no evidence either way. Two lines at least, since
    a one-line closure hoisted to the top level with the variable it closed over as a
    parameter is a new function that repeats its one line."""
    body = body_of(language, text)
    if not body:
        return []
    given = _statement_lines(body)
    alike: list[Nested] = []
    for n in local:
        own = _statement_lines(n.body)
        shared = own & given
        said = sum(count for line, count in shared.items() if _substantive(line))
        owned = sum(count for line, count in own.items() if _substantive(line))
        if sum(shared.values()) >= 2 and said >= 1 and 2 * said >= owned:
            alike.append(n)
    return alike
