"""Rows of a text that lie inside multi-line string literals.

Their leading whitespace is part of the string's value: whoever moves code left or right
(normalising a reply's indentation, splicing it at another depth) must leave them alone, and
both must agree on which rows they are.
"""

from __future__ import annotations

from tree_sitter import Node

from tinymem.symbols.treesitter import parse_root

__all__ = ["STRING_TYPES", "string_literals", "string_rows"]

# Multi-line literals whose inner lines are content, not indentation.
STRING_TYPES = frozenset(
    {
        "string",
        "template_string",
        "raw_string_literal",
        "string_literal",
        "interpreted_string_literal",
        "text_block",
        "heredoc_body",
        "verbatim_string_literal",  # C#'s @"...", which spans lines as it is written
        "interpolated_string_expression",  # C#'s $@"...{x}...": the braces are code
    }
)
# Code inside a literal (`${...}` in a template, `{...}` in an f-string): indentation.
_CODE_INSIDE = frozenset({"template_substitution", "interpolation", "string_interpolation"})


def _is_docstring(node: Node) -> bool:
    """A Python string that is the first statement of a block or module (the grammar puts
    it straight in the block, older ones inside an expression_statement)."""
    statement = node
    parent = node.parent
    if parent is not None and parent.type == "expression_statement":
        if parent.named_child_count != 1:
            return False
        statement, parent = parent, parent.parent
    return (
        parent is not None
        and parent.type in ("block", "module")
        and parent.named_child_count > 0
        and parent.named_children[0] == statement
    )


def _code_rows(node: Node) -> set[int]:
    """Rows that start inside an interpolation of literal `node`."""
    rows: set[int] = set()
    stack = list(node.children)
    while stack:
        child = stack.pop()
        if child.type in _CODE_INSIDE:
            rows.update(range(child.start_point.row + 1, child.end_point.row + 1))
        else:
            stack.extend(child.children)
    return rows


def string_rows(language: str, text: bytes) -> set[int]:
    """Rows (0-based) of `text` that start inside a multi-line string literal (not inside
    an interpolation in it).

    Python docstrings are the exception: they are re-indented with the code (inspect.cleandoc
    strips their indentation anyway, and leaving them would be ugly).
    """
    return set().union(*string_literals(language, text))


def string_literals(language: str, text: bytes) -> list[set[int]]:
    """`string_rows`, literal by literal: the rows of each multi-line literal that start inside
    it (literals with none left out)."""
    literals: list[set[int]] = []
    stack = [parse_root(language, text)]
    while stack:
        node = stack.pop()
        first, last = node.start_point.row, node.end_point.row
        if first == last:
            continue  # a one-line node holds no multi-line literal
        if node.type in STRING_TYPES and not (language == "python" and _is_docstring(node)):
            rows = set(range(first + 1, last + 1)) - _code_rows(node)
            if rows:
                literals.append(rows)
            continue
        stack.extend(node.children)
    return literals
