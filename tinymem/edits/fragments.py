"""Fragments: a definition given with most of its body missing, or a body with no header.

A small model asked to change the start of a long function often answers with its header and
the first lines only, and says the rest "stays as it is" in prose, outside any code block, so
no elision marker is there to find. The fragment parses as a complete, much shorter
definition: taken literally, it deletes the body it leaves out. The seed's parity rule (the
syntax tree may not collapse below half) therefore holds per definition as well as per file:
a definition left with under half of the file's named syntax nodes is a fragment, unless a
diff or SEARCH/REPLACE block removes those lines (an explicit removal, which still needs
`--allow-delete`). Named nodes, not lines: a docstring or a comment block is one node, so
rewriting a long docstring shorter is no collapse while dropping a loop is. Definitions below
`MIN_NODES` are left alone: there a rewrite to a one-liner is an ordinary edit, and losing a
few nodes loses little.

The continuation of such an answer (`    file.write(out)` with no `def` line) defines nothing
the aligner can place, so it is UNRESOLVED already (`align.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tinymem.symbols import GRAMMAR_LANGUAGES, analyze, extract, language_for_path

__all__ = [
    "MIN_NODES",
    "Shrink",
    "fragment_reason",
    "shrunk",
    "shrunk_in_file",
]

MIN_NODES = 40  # about five lines of code


@dataclass(frozen=True)
class Shrink:
    name: str
    nodes: int  # named syntax nodes of the new text
    was: int  # of the file's text


def _nodes(language: str, text: bytes) -> int:
    return analyze(language, text).node_count


def shrunk(path: str, old: dict[str, bytes], new: dict[str, bytes]) -> list[Shrink]:
    """The definitions of `new` (name -> text) that kept under half of the named syntax nodes
    their text in `old` has."""
    language = language_for_path(path)
    if language not in GRAMMAR_LANGUAGES:
        return []
    assert language is not None
    out: list[Shrink] = []
    for name, text in new.items():
        before = old.get(name)
        if before is None or before == text:
            continue
        was = _nodes(language, before)
        if was < MIN_NODES:
            continue
        now = _nodes(language, text)
        if now * 2 < was:
            out.append(Shrink(name, now, was))
    return out


def shrunk_in_file(path: str, before: bytes, after: bytes) -> list[Shrink]:
    """The definitions `after` keeps that lost most of their syntax nodes since `before`.
    A container counts only through its members when it keeps them all (a class whose one
    method collapsed is reported as that method)."""
    old = {s.name: before[s.start : s.end] for s in extract(path, before).symbols}
    new = {s.name: after[s.start : s.end] for s in extract(path, after).symbols}
    found = shrunk(path, old, new)
    names = {s.name for s in found}
    # A class shrinks because a member did: name the member, not both.
    return [s for s in found if not any(n.startswith(s.name + ".") for n in names)]


def fragment_reason(s: Shrink) -> str:
    return (
        f"elided: {s.name} is a fragment ({s.nodes} syntax nodes where the file has {s.was}):"
        " taken as the whole definition it would delete the rest of its body; give the"
        " complete definition, or a diff or SEARCH/REPLACE block that removes those lines"
    )
