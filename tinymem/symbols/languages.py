"""Which grammar a path is parsed with: by file extension, or by file name for a few files."""

from __future__ import annotations

import posixpath
from functools import lru_cache

# The languages with a tree-sitter grammar and our own definition queries.
GRAMMAR_LANGUAGES: frozenset[str] = frozenset(
    {
        "python",
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "java",
        "csharp",
        "c",
        "cpp",
        "ruby",
    }
)

_BY_EXTENSION: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".cs": "csharp",
    # A .h file may well be C++, but the C grammar parses C-style headers cleanly and most
    # C++ headers well enough; guessing per file would make the result depend on content.
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".rb": "ruby",
}

_BY_FILENAME: dict[str, str] = {"Rakefile": "ruby", "Gemfile": "ruby"}


def extension_of(path: str) -> str:
    """The lower-cased extension with its dot ("" when none): `src/A.Cpp` -> ".cpp"."""
    base = posixpath.basename(path.replace("\\", "/"))
    dot = base.rfind(".")
    if dot <= 0:  # no dot, or a dot file such as ".bashrc"
        return ""
    return base[dot:].lower()


# Asked several times per file on the way through an import (the cache key, the extractor):
# remembering the last paths makes the repeats a dict lookup.
@lru_cache(maxsize=1024)
def language_for_path(path: str) -> str | None:
    """The tree-sitter language of `path`, or None when we have no grammar for it."""
    base = posixpath.basename(path.replace("\\", "/"))
    by_name = _BY_FILENAME.get(base)
    if by_name is not None:
        return by_name
    return _BY_EXTENSION.get(extension_of(path))
