"""CPython's own words for a Python syntax error that tree-sitter found.

tree-sitter's error recovery often wraps a whole broken definition in one ERROR node, so
its position is the definition's first character ("syntax error at line 1, column 1" for an
unclosed parenthesis twenty columns on). CPython's parser says what is wrong and where
("'(' was never closed at line 1, column 16"), which a person, or a small model told in a
repair round, can act on. Asked only once tree-sitter has found an error, and used only when
CPython agrees there is one: the interpreter running tm may be older or newer than the code.
"""

from __future__ import annotations

import ast
import warnings

__all__ = ["python_error"]


def python_error(data: bytes) -> str | None:
    """CPython's description of the first syntax error in `data`, or None (no error by its
    grammar, or one it cannot place)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: not errors
            ast.parse(data)
    except SyntaxError as exc:
        if not exc.lineno:
            return None
        column = f", column {exc.offset}" if exc.offset else ""
        return f"{exc.msg} at line {exc.lineno}{column}"
    except (ValueError, RecursionError, MemoryError):
        return None  # NUL bytes, nesting too deep for the interpreter: keep tree-sitter's
    return None
