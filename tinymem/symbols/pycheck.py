"""Python's own parser as a second opinion on tree-sitter-python.

tree-sitter-python reports as clean what Python rejects: an empty block (`def f():\nreturn 1`),
an unexpected indent, a dedent to no enclosing level. Promotion gates must not pass those.
Only an AST is built: nothing runs. It knows this interpreter's grammar, so newer syntax than
the running Python reads as a problem (the conservative side for a gate).
"""

from __future__ import annotations

import ast
from functools import lru_cache


@lru_cache(maxsize=64)
def python_problem(data: bytes) -> str | None:
    try:
        compile(data, "<tinymem>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as err:
        return f"syntax error at line {err.lineno}: {err.msg}"
    except (ValueError, RecursionError, MemoryError) as err:  # NUL bytes, deep nesting
        return str(err) or type(err).__name__
    return None
