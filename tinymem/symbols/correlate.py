"""Align a block of text (say, a model's code block) with one of a file's existing entities.

Correlation only aligns, it never creates entities: it picks which of the given candidate
keys a block most plausibly rewrites, or answers None. An entity that does not exist yet can
only come from symbol extraction of the resulting file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tinymem.records import FILE_SYMBOL, split_key
from tinymem.symbols.languages import GRAMMAR_LANGUAGES

# score = NAME_WEIGHT * name credit + (1 - NAME_WEIGHT) * Jaccard(block ids, candidate ids).
# Name credit: 1 when the block *defines* the candidate's name, MENTION_CREDIT when it only
# mentions it (a call), else 0. With these numbers a block that defines the name is accepted
# on any overlap, one that only mentions it needs a Jaccard above 0.5, and one without the
# name (a renamed entity, a file-level entity) needs one above 2/3.
NAME_WEIGHT = 0.4
MENTION_CREDIT = 0.25
THRESHOLD = 0.4  # the best score must be strictly above this
_TIE_EPSILON = 1e-9

# Unicode-aware superset of \b[A-Za-z_][A-Za-z0-9_]*\b: identical on ASCII text, and it keeps
# non-ASCII identifiers (which tree-sitter reports whole) in one piece.
_IDENTIFIER = re.compile(r"(?<!\w)[^\W\d]\w*")
_DUPLICATE_SUFFIX = re.compile(r"#\d+\Z")
# Without a grammar: a name after a definition keyword at the start of a line (after modifiers).
_DEFINITION = re.compile(
    r"^[ \t]*(?:[@\w().,]+[ \t]+)*?"
    r"(?:def|defp|defmacro|defmodule|fn|func|function|fun|sub|class|struct|enum|interface|"
    r"trait|type|module|mod|namespace|union|impl|object|record|protocol|macro_rules!)"
    r"[ \t]+(?:\([^)\n]*\)[ \t]*)?(?P<name>[^\W\d][\w.:]*)",
    re.MULTILINE,
)
_JS_FAMILY = frozenset({"javascript", "typescript", "tsx"})
_WRAPPER = "__tinymem_block__"


def regex_identifiers(data: bytes) -> frozenset[str]:
    return frozenset(_IDENTIFIER.findall(data.decode("utf-8", "replace")))


def identifiers(language: str | None, data: bytes) -> frozenset[str]:
    """Identifier tokens of `data`: tree-sitter leaves for a grammar language (so strings and
    comments do not count), else every word-like token."""
    if language in GRAMMAR_LANGUAGES:
        from tinymem.symbols.treesitter import identifiers as ts_identifiers

        assert language is not None
        return ts_identifiers(language, data)
    return regex_identifiers(data)


def defining_name(key: str) -> str | None:
    """`a.py::Client.get#2` -> "get"; None for a file-level entity."""
    _path, symbol = split_key(key)
    if symbol == FILE_SYMBOL:
        return None
    last = _DUPLICATE_SUFFIX.sub("", symbol.rsplit(".", 1)[-1])
    return last.lstrip("#") or None


def _last_part(name: str) -> str:
    return _DUPLICATE_SUFFIX.sub("", re.split(r"[.:]+", name)[-1]).lstrip("#")


def defined_names(block: bytes, language: str | None = None) -> frozenset[str]:
    """The names `block` itself defines at its top level (last name part: `Foo.bar` -> "bar").

    With a grammar: the block's own top-level symbols (a lone JS/TS method is retried inside
    a class, where it is valid syntax). Otherwise, or when that finds nothing: names right
    after a definition keyword (`def`, `fn`, `func (r *T)`, `class`, ...) at a line start.
    """
    if language in GRAMMAR_LANGUAGES:
        from tinymem.symbols.treesitter import extract_tree_sitter

        assert language is not None
        found = {
            _last_part(s.name)
            for s in extract_tree_sitter(language, block).symbols
            if s.parent is None
        }
        if not found and language in _JS_FAMILY:
            wrapped = b"class " + _WRAPPER.encode() + b" {\n" + block + b"\n}\n"
            found = {
                _last_part(s.name)
                for s in extract_tree_sitter(language, wrapped).symbols
                if s.parent == _WRAPPER
            }
        if found:
            return frozenset(found)
    text = block.decode("utf-8", "replace")
    return frozenset(_last_part(m.group("name")) for m in _DEFINITION.finditer(text))


def score(
    block_ids: frozenset[str], defined: frozenset[str], key: str, candidate_ids: frozenset[str]
) -> float:
    """The correlation score of one candidate, in [0, 1] (see NAME_WEIGHT)."""
    union = len(block_ids | candidate_ids)
    jaccard = len(block_ids & candidate_ids) / union if union else 0.0
    name = defining_name(key)
    credit = 0.0
    if name is not None:
        if name in defined:
            credit = 1.0
        elif name in block_ids:
            credit = MENTION_CREDIT
    return NAME_WEIGHT * credit + (1.0 - NAME_WEIGHT) * jaccard


def correlate(
    block: bytes,
    candidates: Mapping[str, frozenset[str]],
    *,
    language: str | None = None,
) -> tuple[str, float] | None:
    """The candidate key `block` most plausibly corresponds to, with its score in [0, 1].

    `candidates` maps entity keys (`path::Symbol.name`) to the identifiers of each entity's
    current text (see `identifiers`); `language` is the language of the file the block is
    meant for, if known (it makes identifiers and defined names exact).

    The score is NAME_WEIGHT times a name credit (1 when the block defines the candidate's
    defining name, i.e. its last name part without "#n"; MENTION_CREDIT when it merely
    mentions it) plus (1 - NAME_WEIGHT) times the Jaccard overlap of the identifier sets.

    Returns None when no score is above THRESHOLD, or when the best two scores tie: an
    ambiguous alignment is no alignment. Correlation only aligns a block with an entity that
    already exists; it never creates entities.
    """
    if not candidates:
        return None
    block_ids = identifiers(language, block)
    defined = defined_names(block, language)
    ranked = sorted(
        ((score(block_ids, defined, key, ids), key) for key, ids in candidates.items()),
        key=lambda item: (-item[0], item[1]),
    )
    if ranked[0][0] <= THRESHOLD:
        return None
    if len(ranked) > 1 and ranked[0][0] - ranked[1][0] <= _TIE_EPSILON:
        return None
    best_score, best_key = ranked[0]
    return best_key, best_score
