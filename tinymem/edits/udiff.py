"""Unified diffs as models write them: ```diff fences or bare `--- a/x` / `+++ b/x` sections.

Read leniently (a diff from a small model is rarely byte-perfect), applied strictly
(`patches.py`): `a/` and `b/` prefixes are optional, `diff --git` / `index` lines are skipped,
the counts in `@@ -l,n +l,n @@` are ignored (the line number is kept as a hint for messages),
a blank line inside a hunk is a blank context line, and a line with no prefix at all is
context. What decides where a hunk goes is its context and removed lines, never its numbers.
A `\\ No newline at end of file` line says, as in git, that the line before it ends its side
of the file without a line break (after a context line: both sides).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["FileDiff", "Hunk", "looks_like_diff", "parse_diff", "split_files"]

_HUNK_RE = re.compile(r"^@@+\s*-(\d+)(?:,\d+)?\s+\+(\d+)(?:,\d+)?\s*@@+")
_BARE_HUNK_RE = re.compile(r"^@@+(?:\s.*)?$")
_SKIPPED = (
    "diff --git ",
    "index ",
    "new file mode",
    "deleted file mode",
    "similarity ",
    "old mode",
)
DEV_NULL = "/dev/null"


@dataclass
class Hunk:
    """One hunk: its lines in order as (op, text) with op " " (context), "-" or "+"."""

    header: str  # the `@@ … @@` line as written, or "" when the model wrote none
    hint: int  # the old line number the header gives (0: none)
    lines: list[tuple[str, str]] = field(default_factory=list)
    # `\ No newline at end of file` after a line of the old side / of the new side
    old_bare: bool = False
    new_bare: bool = False

    @property
    def says_final_newline(self) -> bool | None:
        """Whether the new side ends with a line break, when the hunk's markers say so (a
        marker on either side: git's reading); None when it has none."""
        if not (self.old_bare or self.new_bare):
            return None
        return not self.new_bare

    @property
    def old(self) -> list[str]:
        return [text for op, text in self.lines if op != "+"]

    @property
    def new(self) -> list[str]:
        return [text for op, text in self.lines if op != "-"]


@dataclass
class FileDiff:
    old_path: str | None  # None: /dev/null (a new file)
    new_path: str | None  # None: /dev/null (the file is deleted)
    hunks: list[Hunk] = field(default_factory=list)


def _header_path(line: str) -> str | None:
    """The path of a `--- a/x` / `+++ b/x` line; None for /dev/null."""
    rest = line[4:].split("\t", 1)[0].strip()
    if rest == DEV_NULL or not rest:
        return None
    if rest.startswith(('"', "'")) and rest.endswith(rest[0]) and len(rest) > 1:
        rest = rest[1:-1]
    if rest.startswith(("a/", "b/")):
        rest = rest[2:]
    return rest


def looks_like_diff(lines: list[str]) -> bool:
    """A body that is a unified diff: a `---`/`+++` header pair, or a hunk header."""
    for i, line in enumerate(lines):
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            return True
        if _HUNK_RE.match(line):
            return True
    return False


def split_files(lines: list[str]) -> list[tuple[str | None, list[str]]]:
    """One (path named by the headers, its lines) per file section; a diff with no headers
    is one section with no path. A new file is named by `+++`, a deleted one by `---`."""
    sections: list[tuple[str | None, list[str]]] = []
    index = 0
    current: list[str] | None = None
    while index < len(lines):
        line = lines[index]
        if (
            line.startswith("--- ")
            and index + 1 < len(lines)
            and lines[index + 1].startswith("+++ ")
        ):
            old = _header_path(line)
            new = _header_path(lines[index + 1])
            current = [line, lines[index + 1]]
            sections.append((new if new is not None else old, current))
            index += 2
            continue
        if current is None:
            if line.startswith(_SKIPPED) or not line.strip():
                index += 1
                continue
            current = []
            sections.append((None, current))
        if not line.startswith(_SKIPPED):
            current.append(line)
        index += 1
    return sections


def parse_diff(text: str) -> FileDiff:
    """The hunks of one file's section (see the module docstring)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    diff = FileDiff(old_path="?", new_path="?")
    hunk: Hunk | None = None
    for line in lines:
        if line.startswith("--- ") and hunk is None:
            diff.old_path = _header_path(line)
            continue
        if line.startswith("+++ ") and hunk is None:
            diff.new_path = _header_path(line)
            continue
        if line.startswith(_SKIPPED):
            continue
        numbered = _HUNK_RE.match(line)
        if numbered is not None or _BARE_HUNK_RE.match(line):
            hint = int(numbered.group(1)) if numbered is not None else 0
            hunk = Hunk(line.strip(), hint)
            diff.hunks.append(hunk)
            continue
        if line.startswith("\\"):
            # "\ No newline at end of file", about the line before it
            if hunk is not None and hunk.lines:
                op = hunk.lines[-1][0]
                hunk.old_bare = hunk.old_bare or op in ("-", " ")
                hunk.new_bare = hunk.new_bare or op in ("+", " ")
            continue
        if hunk is None:
            # Lines before any `@@`: models often leave the header out entirely.
            hunk = Hunk("", 0)
            diff.hunks.append(hunk)
        op = line[:1]
        if op in ("+", "-", " "):
            hunk.lines.append((op, line[1:]))
        else:
            hunk.lines.append((" ", line))  # a blank line, or context without its space
    diff.hunks = [h for h in diff.hunks if h.lines]
    return diff
