"""Byte-level helpers on file text: lines, indentation, line endings, symbol names."""

from __future__ import annotations

import re

from tinymem.symbols import Symbol

WS = b" \t\r\n\f\v"
INDENT = b" \t"
BOM = b"\xef\xbb\xbf"
_SUFFIX = re.compile(r"#\d+\Z")


def leading_ws(line: bytes) -> bytes:
    return line[: len(line) - len(line.lstrip(INDENT))]


def is_blank(line: bytes) -> bool:
    return not line.strip(WS)


def eol_of(data: bytes) -> bytes:
    """The file's line-ending convention: CRLF when most line breaks are CRLF."""
    crlf = data.count(b"\r\n")
    return b"\r\n" if crlf > data.count(b"\n") - crlf else b"\n"


def start_of_line(data: bytes, pos: int, floor: int) -> int:
    return max(data.rfind(b"\n", 0, pos) + 1, floor)


def end_of_line(data: bytes, pos: int) -> int:
    """Where the line containing `pos` ends: at its line break (before the CR of a CRLF)."""
    index = data.find(b"\n", pos)
    if index < 0:
        return len(data)
    if index > pos and data[index - 1 : index] == b"\r":
        return index - 1
    return index


def content_end(data: bytes, end: int, floor: int) -> int:
    while end > floor and data[end - 1] in WS:
        end -= 1
    return end


def plain_name(name: str) -> str:
    """A qualified name without the "#2" duplicate suffixes: texts are parsed alone, so a
    proposal for `f#2` defines plain `f`."""
    return ".".join(_SUFFIX.sub("", part) for part in name.split("."))


def leaf_of(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def container_of(name: str) -> str | None:
    return name.rsplit(".", 1)[0] if "." in name else None


def contains(outer: Symbol, inner: Symbol) -> bool:
    """Physical nesting (a Go method is not inside its struct, a Python method is)."""
    return (
        outer.start <= inner.start
        and inner.end <= outer.end
        and (outer.start, outer.end) != (inner.start, inner.end)
    )
