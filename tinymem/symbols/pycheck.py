"""Python's own parser as a second opinion on tree-sitter-python.

tree-sitter-python reports as clean what Python rejects: an empty block (`def f():\nreturn 1`),
an unexpected indent, a dedent to no enclosing level. Promotion gates must not pass those.
Only an AST is built: nothing runs. It knows this interpreter's grammar, so newer syntax than
the running Python reads as a problem (the conservative side for a gate).
"""

from __future__ import annotations

import ast
import warnings
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


@lru_cache(maxsize=64)
def python_compile_problem(data: bytes) -> str | None:
    """What CPython's compiler refuses in `data` that its parser accepts, or None.

    `ast.parse` builds a tree for `await` outside an async function, `return` outside a
    function, `yield` in a class body, `nonlocal` at module level, a duplicate argument, a
    `break` outside a loop: valid grammar, but the module no longer imports. Compiling to
    bytecode refuses them (`symtable` catches only the scoping ones); nothing is executed.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `is` with a literal, invalid escapes: not errors
            compile(data, "<tinymem>", "exec", dont_inherit=True)
    except SyntaxError as err:
        return f"{err.msg} at line {err.lineno}"
    except (ValueError, RecursionError, MemoryError, OverflowError) as err:
        return str(err) or type(err).__name__
    return None
