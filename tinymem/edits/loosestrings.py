"""Multi-line strings under a SEARCH/REPLACE block matched with leading whitespace set aside.

Re-indenting such a block's REPLACE text (`patches.py`) moves code; a line inside a multi-line
string literal is no code, its leading whitespace is the string's value. The rows that are
inside literals are the splicer's (`tinymem.symbols.strings`, shared with `splice/texts.py`
and the reply normaliser), read on the file as the edit leaves it. A literal is re-indented
with the code only when the SEARCH text shows how the model indents it: the REPLACE keeps a
line that the SEARCH gave inside a literal of the file. Otherwise its lines are written as
the REPLACE has them (as a definition given whole keeps them). Where tm has no grammar for the
file it cannot tell which lines are inside a string: a REPLACE line the re-indent would move
that may be (after an unclosed triple quote or here-document) blocks the edit.
"""

from __future__ import annotations

import re

from tinymem.symbols import GRAMMAR_LANGUAGES, language_for_path
from tinymem.symbols.strings import string_literals, string_rows

__all__ = ["keep_literals"]

_TRIPLE = re.compile(rb"\"\"\"|'''")
# A here-document's opener (shell, PHP, Perl): `<<EOF`, `<<-'EOF'`, `<<<EOT`; upper-case
# names only, so that a shift (`x << y`) is not one.
_HEREDOC = re.compile(rb"<<<?[-~]?[ \t]*([\"']?)([A-Z_][A-Z0-9_]*)\1")


def keep_literals(
    path: str,
    lines: list[bytes],
    at: int,
    search: list[bytes],
    replace: list[bytes],
    indented: list[bytes],
) -> tuple[list[bytes], int | None]:
    """The REPLACE lines to write in place of the SEARCH's match `lines[at : at +
    len(search)]`: `indented` (the re-indented REPLACE), with the lines of multi-line
    literals the SEARCH does not show written as in `replace`; and the 1-based REPLACE line
    that may be inside a string tm cannot see (no grammar), else None."""
    size = len(search)
    after = [*lines[:at], *(line + b"\n" for line in indented), *lines[at + size :]]
    language = language_for_path(path)
    # A lone CR ends a line for bytes.splitlines, not for the parser: rows would not agree.
    lone_cr = any(line.endswith(b"\r") for line in after)
    if language is None or language not in GRAMMAR_LANGUAGES or lone_cr:
        inside = _open_rows(after)
        for i, (mine, moved) in enumerate(zip(replace, indented, strict=True)):
            if at + i in inside and mine != moved:
                return indented, i + 1
        return indented, None
    in_file = string_rows(language, b"".join(lines))
    # Lines of the file's literals as the model wrote them in its SEARCH (a line of quotes
    # alone, a closing triple quote, says nothing of which literal it is).
    shown = {
        search[j].rstrip()
        for j in range(size)
        if at + j in in_file and any(c.isalnum() for c in search[j].decode(errors="replace"))
    }
    out = list(indented)
    for rows in string_literals(language, b"".join(after)):
        inner = [row - at for row in sorted(rows) if at <= row < at + len(indented)]
        if not inner or any(replace[i].rstrip() in shown for i in inner):
            continue
        for i in inner:
            out[i] = replace[i]
    return out, None


def _open_rows(lines: list[bytes]) -> set[int]:
    """Rows that start inside a triple-quoted string or a here-document, read without a
    grammar (comments and one-line strings not told apart: a false alarm only blocks)."""
    rows: set[int] = set()
    waiting: bytes | None = None  # the triple quote that closes, or the here-document's name
    heredoc = False
    for row, line in enumerate(lines):
        if waiting is not None:
            rows.add(row)
        if heredoc:
            if line.strip() == waiting:
                waiting, heredoc = None, False
            continue
        for found in _TRIPLE.finditer(line):
            if waiting is None:
                waiting = found.group()
            elif found.group() == waiting:
                waiting = None
        if waiting is None:
            opener = _HEREDOC.search(line)
            if opener is not None:
                waiting, heredoc = opener.group(2), True
    return rows
