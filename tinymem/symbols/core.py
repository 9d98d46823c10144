"""`extract`: pick tree-sitter, the regex fallback or nothing, by the path's extension."""

from __future__ import annotations

from tinymem.symbols.languages import language_for_path
from tinymem.symbols.model import METHOD_NONE, Extraction


def extract(path: str, data: bytes) -> Extraction:
    """The definitions in `data`, a pure function of (the path's language, data).

    - grammar language: tree-sitter symbols; `clean` tells whether the tree has no ERROR or
      MISSING node (symbols are returned either way, `reason` names the first problem);
    - extension listed in data/patterns.json: regex symbols, never clean;
    - anything else (Markdown, TOML, JSON, text): no symbols, method "none", clean.
    Never raises on any input bytes.
    """
    language = language_for_path(path)
    if language is not None:
        from tinymem.symbols.treesitter import extract_tree_sitter

        return extract_tree_sitter(language, data)
    from tinymem.symbols.regex import extract_regex

    by_regex = extract_regex(path, data)
    if by_regex is not None:
        return by_regex
    return Extraction(language=None, method=METHOD_NONE, symbols=(), clean=True, reason=None)


def top_level_names(extraction: Extraction) -> set[str]:
    return {s.name for s in extraction.symbols if s.parent is None}
