"""Containers: the classes, impl blocks, namespaces… whose members are entities.

Both sides of a model's turn need them: hydration shows a member under its container's
header line(s), and the reply reader uses a block's own header (`impl Display for S`) as
evidence of which same-named member it means.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from tinymem.symbols.languages import GRAMMAR_LANGUAGES

__all__ = ["Container", "containers", "line_starts"]

_SPACES = re.compile(r"\s+")
_CLOSERS = frozenset({"}", "};", "end", "})", "});"})
_TRAILING_COMMENT = re.compile(r"\s(?://|#).*$|/\*.*?\*/")  # `}  // namespace CLI`
_CONTAINER_NODES = frozenset(
    {
        "class_definition",
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "struct_declaration",
        "class",
        "module",
        "impl_item",
        "trait_item",
        "mod_item",
        "class_specifier",
        "struct_specifier",
        "union_specifier",
        "namespace_definition",
        "namespace_declaration",
        "internal_module",
    }
)


@dataclass(frozen=True)
class Container:
    start: int  # byte span of the whole container
    end: int
    header: str  # its head up to the body, whitespace collapsed: "impl<E> Iterator for Chain<E>"
    head_first: int  # 0-based rows of its header lines (up to where the body starts)
    head_last: int
    closer: int | None  # the row of its closing line, when that line is only a closer


@lru_cache(maxsize=64)
def line_starts(data: bytes) -> tuple[int, ...]:
    """The offset of every line of `data` (one `find` per line, not a Python step per byte:
    that was a quarter of a prompt's hydration time on a large file); cached, since
    rendering a file asks again right after `containers` did."""
    starts = [0]
    at = data.find(b"\n")
    while at != -1:
        starts.append(at + 1)
        at = data.find(b"\n", at + 1)
    return tuple(starts)


@lru_cache(maxsize=32)
def containers(language: str | None, data: bytes) -> tuple[Container, ...]:
    """Every container of `data`, outermost first (none without a grammar)."""
    if language is None or language not in GRAMMAR_LANGUAGES:
        return ()
    from tree_sitter import Parser

    from tinymem.symbols.grammars import load_language

    root = Parser(load_language(language)).parse(data).root_node
    starts = line_starts(data)

    def row(offset: int) -> int:
        return bisect_right(starts, offset) - 1

    lines = data.split(b"\n")
    found: list[Container] = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.children))
        body = node.child_by_field_name("body")
        if node.type not in _CONTAINER_NODES or body is None:
            continue
        head = data[node.start_byte : body.start_byte].decode("utf-8", "replace")
        first = row(node.start_byte)
        opens_body = data[body.start_byte : body.start_byte + 1] == b"{"
        last = row(body.start_byte) if opens_body else max(row(body.start_byte) - 1, first)
        end_row = row(max(node.end_byte - 1, node.start_byte))
        last_line = lines[end_row].decode("utf-8", "replace")
        only_closer = _TRAILING_COMMENT.sub("", last_line).strip() in _CLOSERS
        found.append(
            Container(
                node.start_byte,
                node.end_byte,
                _SPACES.sub(" ", head).strip().rstrip(":{").strip(),
                first,
                last,
                end_row if only_closer and end_row > last else None,
            )
        )
    return tuple(sorted(found, key=lambda c: (c.start, -c.end)))
