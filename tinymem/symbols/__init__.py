"""Entity (symbol) extraction: tree-sitter for known grammars, a regex fallback, correlation.

Importing this package is cheap: no grammar, parser or pattern file is loaded until the first
call that needs it (then cached per language for the life of the process).
"""

from __future__ import annotations

from tinymem.symbols.core import extract, top_level_names
from tinymem.symbols.correlate import correlate, identifiers
from tinymem.symbols.languages import GRAMMAR_LANGUAGES, language_for_path
from tinymem.symbols.model import EXTRACTOR_VERSION, KINDS, Extraction, Symbol, Syntax


def analyze(language: str, data: bytes) -> Syntax:
    """Parse only (for the promotion gates). ValueError when `language` has no grammar."""
    from tinymem.symbols.treesitter import analyze as ts_analyze

    syntax = ts_analyze(language, data)
    if syntax.clean and language == "python":
        from tinymem.symbols.pycheck import python_problem

        problem = python_problem(data)
        if problem is not None:
            return Syntax(clean=False, reason=problem, node_count=syntax.node_count)
    return syntax


__all__ = [
    "EXTRACTOR_VERSION",
    "GRAMMAR_LANGUAGES",
    "KINDS",
    "Extraction",
    "Symbol",
    "Syntax",
    "analyze",
    "correlate",
    "extract",
    "identifiers",
    "language_for_path",
    "top_level_names",
]
