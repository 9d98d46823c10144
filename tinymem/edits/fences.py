"""Code fences in a reply (CommonMark-style), and the line before them.

The file a fenced block belongs to is named in the info string (`infostring.py`) or on the
line before the fence (``### a.py``, ``**File:** `a.py` ``, ``Here is the updated `a.py`:``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tinymem.edits.directives import DELETE_RE
from tinymem.edits.filenames import path_from_line
from tinymem.edits.spacedpaths import line_candidates

__all__ = ["OPEN_FENCE_RE", "Fence", "heading_path", "split_fences"]

OPEN_FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_CLOSE_FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*$")


def _width(indent: str) -> int:
    return sum(4 if ch == "\t" else 1 for ch in indent)


def _dedent(line: str, columns: int) -> str:
    """Remove up to `columns` columns of leading whitespace (CommonMark fence content rule)."""
    removed = 0
    index = 0
    while index < len(line) and removed < columns and line[index] in " \t":
        removed += 4 if line[index] == "\t" else 1
        index += 1
    return line[index:]


@dataclass(slots=True)
class Fence:
    open_index: int  # 0-based index of the opening fence line
    close_index: int | None  # None: unterminated, runs to the end of the text
    info: str
    body: list[str]  # dedented body lines


def split_fences(lines: list[str], start: int = 0) -> tuple[list[Fence], list[int]]:
    """CommonMark-style fence scan from line `start` (earlier lines count as outside)."""
    fences: list[Fence] = []
    outside: list[int] = list(range(start))
    index = start
    count = len(lines)
    while index < count:
        match = OPEN_FENCE_RE.match(lines[index])
        if match is None or (match["fence"][0] == "`" and "`" in match["info"]):
            outside.append(index)
            index += 1
            continue
        indent = _width(match["indent"])
        char = match["fence"][0]
        length = len(match["fence"])
        end = index + 1
        close: int | None = None
        while end < count:
            closing = _CLOSE_FENCE_RE.match(lines[end])
            # A closer may be indented a little more than the opener (list items), but a
            # deeper one is content: a fence inside a docstring must not end the block.
            if (
                closing is not None
                and closing["fence"][0] == char
                and len(closing["fence"]) >= length
                and _width(closing["indent"]) <= indent + 3
            ):
                close = end
                break
            end += 1
        stop = close if close is not None else count
        body = [_dedent(line, indent) for line in lines[index + 1 : stop]]
        fences.append(Fence(index, close, match["info"].strip(), body))
        index = stop + 1
    return fences, outside


def _is_heading_like(line: str) -> bool:
    """A line that only titles what follows: `# x`, `**x**`, `` `x` ``, a bare path."""
    s = line.strip()
    if s.startswith("#") or (s.startswith("**") and s.rstrip(":").endswith("**")):
        return True
    if s.startswith("`") and s.rstrip(":").endswith("`"):
        return True
    return len(s.split()) == 1


def heading_path(
    lines: list[str], fence_index: int, floor: int
) -> tuple[str | None, tuple[str, ...]]:
    """(path, spaced candidates) from the nearest non-blank line before a fence (or a title
    line just above it). Spaced candidates (`### my dir/a b.py`) name a file only if it
    exists; the path is never one of their words (`spacedpaths.py`)."""
    seen = 0
    index = fence_index - 1
    while index >= floor and seen < 2:
        line = lines[index]
        index -= 1
        if not line.strip():
            continue
        if OPEN_FENCE_RE.match(line) or DELETE_RE.match(line):
            return None, ()
        seen += 1
        if seen == 2 and not _is_heading_like(line):
            return None, ()
        spaced, words = line_candidates(line)
        found = path_from_line(words)
        if found is not None or spaced:
            return found, spaced
    return None, ()
