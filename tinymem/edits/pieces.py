"""A Python block whose definitions sit at different indentations, cut into pieces.

Models write a method at its class's indentation and then a new helper at column 0 in one
block, or the helper first and the method indented after it. As one text that is an
"unexpected indent", or the method read as a function nested in the helper; yet each
definition is right where it stands. So, when the block read whole cannot be aligned, it is
cut where a definition starts at another indentation than the piece before it, and each
piece is aligned on its own (`align.py`).

A cut is made only where the piece before it parses on its own, and a piece holds nothing at
its own indentation but definitions and comments: a nested function followed by the
statement that uses it (`return inner`) is never cut away from its function.
"""

from __future__ import annotations

import re
from itertools import pairwise

from tinymem.edits.normalise import EXCERPT_MARK
from tinymem.symbols import analyze

__all__ = ["definition_pieces"]

_HEAD = re.compile(rb"(?:@|def\s|async\s+def\s|class\s)")
_COMMENT = b"#"


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" \t"))


def _blank(line: bytes) -> bool:
    return not line.strip() or line.strip().decode("utf-8", "replace") == EXCERPT_MARK


def _dedent(lines: list[bytes]) -> bytes:
    """The lines without the indentation their code shares; a comment less indented than
    the code (`# src/app.py` over a method) goes to column 0, where it is still a comment."""
    code = [line for line in lines if not _blank(line) and not line.lstrip().startswith(_COMMENT)]
    width = min((_indent(line) for line in code), default=0)
    out = []
    for line in lines:
        if _blank(line):
            out.append(b"")
        elif _indent(line) >= width:
            out.append(line[width:])
        else:
            out.append(line.lstrip())
    return b"\n".join(out) + b"\n"


def _starts(lines: list[bytes]) -> list[int]:
    """Rows where a definition starts: its first decorator, or the def / class line not
    under a decorator; comment lines right above it at its indentation go with it."""
    out: list[int] = []
    for row, line in enumerate(lines):
        stripped = line.lstrip()
        if not _HEAD.match(stripped):
            continue
        above = row - 1
        if above >= 0 and lines[above].lstrip().startswith(b"@"):
            continue  # under a decorator: the definition started above
        start = row
        while start > 0 and lines[start - 1].lstrip().startswith(_COMMENT):
            if _indent(lines[start - 1]) != _indent(line):
                break
            start -= 1
        out.append(start)
    return out


def _only_definitions(lines: list[bytes]) -> bool:
    """Nothing but definitions (and comments) at the piece's own indentation."""
    code = [line for line in lines if not _blank(line) and not line.lstrip().startswith(_COMMENT)]
    if not code:
        return False
    base = _indent(code[0])
    for line in code:
        if _indent(line) < base:
            return False
        if _indent(line) == base and not _HEAD.match(line.lstrip()):
            return False
    return True


def definition_pieces(language: str | None, code: bytes) -> list[bytes] | None:
    """The pieces of a Python block of definitions at several indentations, as written;
    None when it is not such a block (one indentation, or a cut that would not parse)."""
    if language != "python":
        return None
    lines = code.replace(b"\r\n", b"\n").split(b"\n")
    cuts = [0]
    base: int | None = None
    for row in _starts(lines):
        head = next(line for line in lines[row:] if not line.lstrip().startswith(_COMMENT))
        width = _indent(head)
        if base is None or row == cuts[-1]:
            base = width
            continue
        if width == base:
            continue
        before = lines[cuts[-1] : row]
        if _only_definitions(before) and analyze(language, _dedent(before)).clean:
            cuts.append(row)
            base = width
    if len(cuts) < 2:
        return None
    bounds = [*cuts, len(lines)]
    pieces = [lines[a:b] for a, b in pairwise(bounds)]
    if not all(_only_definitions(p) for p in pieces):
        return None
    if not all(analyze(language, _dedent(p)).clean for p in pieces):
        return None
    # As written: `parse_block` removes their indentation, keeping multi-line strings' own.
    return [b"\n".join(p) + b"\n" for p in pieces]
