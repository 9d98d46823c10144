"""The values the symbol extractor returns; plain frozen records, cheap to cache and compare."""

from __future__ import annotations

from dataclasses import dataclass

# Part of every cache key of extracted symbols: bump it whenever the output for the same input
# bytes could change (a query, a span rule, a pattern in data/patterns.json, the grammar pack).
# The grammar pack version is spelled out because a new grammar changes parse trees; a test
# checks it against the installed distribution so a dependency bump cannot go unnoticed.
GRAMMAR_PACK_VERSION = "0.13.0"
EXTRACTOR_VERSION = f"symbols-6+tslp-{GRAMMAR_PACK_VERSION}"

KINDS: frozenset[str] = frozenset(
    {
        "function",
        "method",
        "class",
        "struct",
        "enum",
        "interface",
        "trait",
        "impl",
        "type",
        "module",
        "namespace",
        "constant",
        "variable",
        "macro",
        "union",
    }
)

METHOD_TREE_SITTER = "tree-sitter"
METHOD_REGEX = "regex"
METHOD_NONE = "none"


@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition in a file.

    `name` is qualified within the file with "." (never "::"); duplicates get "#2", "#3" in
    source order. `start`/`end` are byte offsets (end exclusive) covering the leading doc
    comment block and decorators/attributes, and ending at the definition's last byte.
    `parent` is the qualified name of the enclosing symbol (or of the type a method belongs
    to, which need not be defined in the same file), None at top level.
    """

    name: str
    kind: str
    start: int
    end: int
    parent: str | None


@dataclass(frozen=True, slots=True)
class Extraction:
    language: str | None
    method: str  # "tree-sitter" | "regex" | "none"
    symbols: tuple[Symbol, ...]  # sorted by start (outer before inner on equal start)
    clean: bool
    reason: str | None  # why the symbols are not CONFIRMED; None only for clean tree-sitter


@dataclass(frozen=True, slots=True)
class Syntax:
    clean: bool
    reason: str | None
    node_count: int  # named nodes in the tree
