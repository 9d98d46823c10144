"""The lines of a file outside every definition that a whole-file reply leaves out.

A whole file replaces every line, and only definitions were accounted for: a reply giving
every function and the imports but not `logging.basicConfig(...)`, the `if __name__ ==
"__main__":` block, a licence header or an `app.post(...)` route deleted them without a word.
Those lines are the file's as much as its definitions, so their removal is a deletion like a
definition's: named in the proposal, and written only with `--allow-delete`.

Lines are matched by their text without indentation, in order (`difflib`): a statement the
reply changes in place (other statements where it was) is a change, not a removal; one it
moves (its text among the lines the reply adds, at any depth) stays; one whose place the
reply gives only to definitions or imports is left out. Import lines are left out of the
count (a whole-file reply re-orders and trims them, and a lost import fails at once), and so
are lines the old file has inside any definition (the definitions' own parity rules see them).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter

from tinymem.symbols import GRAMMAR_LANGUAGES, extract, language_for_path
from tinymem.symbols.treesitter import parse_root
from tinymem.textlist import shortened

__all__ = ["dropped_note", "dropped_statements"]

_IMPORTS = frozenset(
    {
        "import_statement",
        "import_from_statement",
        "future_import_statement",
        "import_declaration",
        "use_declaration",
        "extern_crate_declaration",
        "using_directive",
        "preproc_include",
        "package_clause",
        "package_declaration",
    }
)
# `const x = require('x')`, Ruby's `require 'x'`: imports written as statements.
_REQUIRE = re.compile(rb"^\s*(?:(?:const|let|var)\s+[^=]+=\s*)?require(?:_relative)?\b")


def _import_rows(language: str, data: bytes) -> set[int]:
    rows: set[int] = set()
    for node in parse_root(language, data).named_children:
        text = data[node.start_byte : node.end_byte]
        if node.type in _IMPORTS or _REQUIRE.match(text):
            rows.update(range(node.start_point[0], node.end_point[0] + 1))
    return rows


def _outside_rows(path: str, language: str, data: bytes) -> list[tuple[int, bytes]]:
    """(row, stripped line) of every non-blank line of `data`; row -1 for a line inside a
    definition or an import (not counted as a statement)."""
    spans = [(s.start, s.end) for s in extract(path, data).symbols]
    return _rows(data, spans, _import_rows(language, data))


def _rows(data: bytes, spans: list[tuple[int, int]], imports: set[int]) -> list[tuple[int, bytes]]:
    """`_outside_rows` given the byte spans of the definitions and the import rows. A line
    is inside when some span starts before the line ends and ends after it starts. Lines
    come in order of their ends, so the spans starting before each one are a growing prefix
    of the spans sorted by start, and only the furthest end among them matters: one pass
    over both (testing every line against every span took 190 ms on mypy's nodes.py, 5,600
    lines and 560 definitions; this takes 4)."""
    spans = sorted(spans)
    rows: list[tuple[int, bytes]] = []
    offset = 0
    next_span = 0
    furthest = -1  # the furthest end of the spans that start before the current line ends
    for row, line in enumerate(data.split(b"\n")):
        start, offset = offset, offset + len(line) + 1
        if line.strip():
            end = start + len(line)
            while next_span < len(spans) and spans[next_span][0] < end:
                furthest = max(furthest, spans[next_span][1])
                next_span += 1
            inside = furthest > start
            rows.append((-1 if inside or row in imports else row, line.strip()))
    return rows


def dropped_statements(path: str, before: bytes, after: bytes) -> list[str]:
    """The first line of each run of lines of `before`, outside every definition and not an
    import, that `after` (the whole new text of `path`) no longer has. Empty for a file
    without a grammar (`textparity.py` judges those).

    A line the new text has elsewhere (among the lines it adds) was moved, not left out. A
    line the new text puts other lines in place of was changed when some of those lines are
    statements too (`level=INFO` made `level=DEBUG`), and left out when they are all inside
    definitions or imports (the `__main__` block's place taken by a new function)."""
    language = language_for_path(path)
    if language is None or language not in GRAMMAR_LANGUAGES:
        return []
    old = _outside_rows(path, language, before)
    new = _outside_rows(path, language, after)
    matcher = difflib.SequenceMatcher(None, [t for _, t in old], [t for _, t in new], False)
    opcodes = matcher.get_opcodes()
    # The lines the new text adds or rewrites: where a line taken from its old place went.
    spare = Counter(
        new[j][1] for tag, _, _, j1, j2 in opcodes if tag != "equal" for j in range(j1, j2)
    )
    dropped: list[str] = []
    last = -2
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal" or tag == "insert":
            continue
        if tag == "replace" and any(row >= 0 for row, _ in new[j1:j2]):
            continue  # statements in place of statements: a change
        for i in range(i1, i2):
            row, text = old[i]
            if row < 0:
                continue
            if spare[text]:
                spare[text] -= 1  # moved
                continue
            if i != last + 1:  # a new run (blank lines do not count)
                dropped.append(text.decode("utf-8", "replace"))
            last = i
    return dropped


def dropped_note(dropped: list[str]) -> str:
    """What the proposal says it removes, for the proposal and Gate A."""
    shown = shortened([f"`{d[:60]}`" for d in dropped], 4)
    return (
        f"the reply leaves out lines of the file outside every definition ({shown}):"
        " written whole it removes them"
    )
