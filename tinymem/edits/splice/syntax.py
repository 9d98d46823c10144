"""Parsing for the splicer: parse trees, syntax problems, multi-line string rows, symbols."""

from __future__ import annotations

from typing import Any, cast

from tree_sitter import Node, Parser

from tinymem.edits.splice.lines import BOM
from tinymem.edits.splice.model import SpliceError
from tinymem.symbols import (
    GRAMMAR_LANGUAGES,
    Extraction,
    Symbol,
    analyze,
    extract,
    language_for_path,
)

# Multi-line literals whose inner lines are content, not indentation: never re-indented.
STRING_TYPES = frozenset(
    {
        "string",
        "template_string",
        "raw_string_literal",
        "string_literal",
        "interpreted_string_literal",
        "text_block",
        "heredoc_body",
    }
)


def grammar(path: str) -> str:
    language = language_for_path(path)
    if language is None or language not in GRAMMAR_LANGUAGES:
        raise SpliceError(
            f"cannot splice symbols into {path}: tm has no grammar for it, so only whole-file "
            "proposals can be written there"
        )
    return language


def file_symbols(path: str, data: bytes) -> Extraction:
    """`extract`, but blind to a leading BOM.

    Works around tinymem.symbols not skipping a BOM when it decides whether a doc comment on
    the first line is on a line of its own (with a BOM it is not attached to the definition
    below it, without one it is): deleting the first definition of a BOM file would otherwise
    "change" the next one. Offsets are shifted back, so they index `data` itself.
    """
    if not data.startswith(BOM):
        return extract(path, data)
    found = extract(path, data[len(BOM) :])
    shift = len(BOM)
    return Extraction(
        language=found.language,
        method=found.method,
        symbols=tuple(
            Symbol(s.name, s.kind, s.start + shift, s.end + shift, s.parent) for s in found.symbols
        ),
        clean=found.clean,
        reason=found.reason,
    )


_PARSERS: dict[str, Parser] = {}


def parse_root(language: str, data: bytes) -> Node:
    parser = _PARSERS.get(language)
    if parser is None:
        # Imported lazily, as in tinymem.symbols: the pack loads grammar modules on import.
        from tree_sitter_language_pack import get_language

        parser = Parser(get_language(cast("Any", language)))
        _PARSERS[language] = parser
    return parser.parse(data).root_node


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


def string_rows(language: str, text: bytes) -> set[int]:
    """Rows (0-based) of `text` that start inside a multi-line string literal.

    Their leading whitespace is part of the string's value, so re-indenting them would change
    what the program does. Python docstrings are the exception: they are re-indented with the
    code (inspect.cleandoc strips their indentation anyway, and leaving them would be ugly).
    """
    rows: set[int] = set()
    stack = [parse_root(language, text)]
    while stack:
        node = stack.pop()
        first, last = node.start_point.row, node.end_point.row
        if first == last:
            continue  # a one-line node holds no multi-line literal
        if node.type in STRING_TYPES and not (language == "python" and _is_docstring(node)):
            rows.update(range(first + 1, last + 1))
            continue
        stack.extend(node.children)
    return rows


def syntax_problem(language: str, data: bytes) -> str | None:
    """Why `data` does not parse, or None (`analyze` includes Python's own parser)."""
    syntax = analyze(language, data)
    return None if syntax.clean else (syntax.reason or "syntax error")
