"""`extract`: pick tree-sitter, the regex fallback or nothing, by the path's extension."""

from __future__ import annotations

from tinymem.symbols.languages import language_for_path
from tinymem.symbols.model import METHOD_NONE, Extraction

# Minified or generated code (bundler chunks, *.min.js) is one file-level entity, not parsed:
# its "functions" mean nothing to a model or a reviewer, and on a real tree (litellm's
# site-packages: 150 Next.js chunks and a Swagger bundle, 12 MB) it was half of all parsing.
# Hand-written code averages 30-100 bytes a line; these files average thousands.
MINIFIED_MEAN_LINE = 256
_MINIFIED_MIN_BYTES = 4096


def _lines(data: bytes) -> int:
    return max(data.count(b"\n"), data.count(b"\r")) + 1  # \r alone: classic Mac endings


def minified(data: bytes) -> bool:
    lines = _lines(data)
    return len(data) >= _MINIFIED_MIN_BYTES and len(data) >= MINIFIED_MEAN_LINE * lines


def extract(path: str, data: bytes) -> Extraction:
    """The definitions in `data`, a pure function of (the path's language, data).

    - grammar language: tree-sitter symbols; `clean` tells whether the tree has no ERROR or
      MISSING node (symbols are returned either way, `reason` names the first problem);
      minified code (see `minified`): no symbols, method "none", and a reason saying so;
    - extension listed in data/patterns.json: regex symbols, never clean;
    - anything else (Markdown, TOML, JSON, text): no symbols, method "none", clean.
    Never raises on any input bytes.
    """
    language = language_for_path(path)
    if language is not None:
        if minified(data):
            mean = len(data) // _lines(data)
            why = f"minified or generated code (lines average {mean} bytes): one entity, not parsed"
            return Extraction(language, METHOD_NONE, (), clean=True, reason=why)
        from tinymem.symbols.treesitter import extract_tree_sitter

        return extract_tree_sitter(language, data)
    from tinymem.symbols.regex import extract_regex

    by_regex = extract_regex(path, data)
    if by_regex is not None:
        return by_regex
    return Extraction(language=None, method=METHOD_NONE, symbols=(), clean=True, reason=None)


def top_level_names(extraction: Extraction) -> set[str]:
    return {s.name for s in extraction.symbols if s.parent is None}
