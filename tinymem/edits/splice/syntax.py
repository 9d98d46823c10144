"""Parsing for the splicer: the grammar of a path, syntax problems, symbols (parse trees and
multi-line string rows come from tinymem.symbols, shared with the reply normaliser)."""

from __future__ import annotations

__all__ = [
    "compile_problem",
    "file_symbols",
    "grammar",
    "parse_root",
    "string_rows",
    "syntax_problem",
]

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
from tinymem.symbols.pycheck import python_compile_problem
from tinymem.symbols.strings import string_rows
from tinymem.symbols.treesitter import parse_root


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


def syntax_problem(language: str, data: bytes) -> str | None:
    """Why `data` does not parse, or None (`analyze` includes Python's own parser)."""
    syntax = analyze(language, data)
    return None if syntax.clean else (syntax.reason or "syntax error")


def compile_problem(language: str | None, before: bytes | None, after: bytes) -> str | None:
    """Why a whole Python text `after`, which parses, would not compile where `before` (the
    file's text it was made from, None for a new file) did, or None.

    Asked of merged texts only, never of a block: a method given alone with `async` left out
    is read as the member it is, and the text it is spliced into decides (the file's `async`
    kept, or refused here). A file that already failed to compile is not held to it.
    """
    if language != "python":
        return None
    if before is not None and python_compile_problem(before) is not None:
        return None
    return python_compile_problem(after)
