"""Deleting named symbols, with the blank lines their removal leaves."""

from __future__ import annotations

from collections.abc import Sequence

from tinymem.edits.splice.lines import (
    BOM,
    INDENT,
    WS,
    contains,
    end_of_line,
    is_blank,
    leading_ws,
    plain_name,
    start_of_line,
)
from tinymem.edits.splice.model import SpliceError
from tinymem.edits.splice.splicer import check_names
from tinymem.edits.splice.syntax import (
    compile_problem,
    file_symbols,
    grammar,
    syntax_problem,
)


def _break_length(data: bytes, pos: int) -> int:
    if data.startswith(b"\r\n", pos):
        return 2
    return 1 if data.startswith(b"\n", pos) else 0


def _cut(data: bytes, start: int, end: int, floor: int) -> bytes:
    """`data` without [start, end) and the blank-line separation the removal leaves.

    When the definition has its lines to itself, its whole lines go, plus one run of blank
    lines next to it: the run below, or the run above when it was the last of its block (the
    next code is less indented, or nothing follows), so the separation that remains is the
    one its neighbours already had. The final newline, or its absence, is kept."""
    begin = start_of_line(data, start, floor)
    line_end = end_of_line(data, end)
    if data[begin:start].strip(INDENT) or data[end:line_end].strip(WS):
        return data[:start] + data[end:]  # shares a line with other code: only its bytes go
    stop = line_end + _break_length(data, line_end)
    below = stop
    while below < len(data):
        next_end = end_of_line(data, below)
        if not is_blank(data[below:next_end]):
            break
        below = next_end + _break_length(data, next_end)
    above = begin
    while above > floor:
        previous = start_of_line(data, above - 1, floor)
        if not is_blank(data[previous:above]):
            break
        above = previous
    has_before = bool(data[floor:above].strip(WS))
    if below < len(data):
        next_indent = len(leading_ws(data[below : end_of_line(data, below)]))
        if has_before and next_indent < start - begin:
            return data[:above] + data[stop:]
        return data[:begin] + data[below:]
    if not has_before:
        return data[:above]
    if data.endswith(b"\n"):
        return data[:above]
    return data[: end_of_line(data, above - 1)]  # it had no final newline: neither does the rest


def delete_symbols(path: str, original: bytes, names: Sequence[str]) -> bytes:
    """`original` without the named symbols' spans and the blank lines they leave.

    ValueError for an unknown or duplicate name; SpliceError when the rest would not parse
    (a Python class left with no body) or another symbol would change. A member named with
    its container is removed with it.
    """
    check_names(names)
    language = grammar(path)
    ext = file_symbols(path, original)
    by_name = {s.name: s for s in ext.symbols}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"{path} defines no {', '.join(unknown)}")
    targets = [by_name[n] for n in names]
    outer = {(t.start, t.end): t for t in targets if not any(contains(o, t) for o in targets)}
    floor = len(BOM) if original.startswith(BOM) else 0
    data = original
    # From the end backwards: earlier spans stay valid, and each cut sees its real neighbours.
    for sym in sorted(outer.values(), key=lambda s: s.start, reverse=True):
        data = _cut(data, sym.start, sym.end, floor)
    label = ", ".join(names)
    if syntax_problem(language, original) is None:
        problem = syntax_problem(language, data) or compile_problem(language, original, data)
        if problem is not None:
            raise SpliceError(f"deleting {label} from {path} breaks its syntax: {problem}")
    # Survivors are compared in source order, not by name: deleting `f` renames `f#2` to `f`.
    survivors = [
        s for s in ext.symbols if not any(t == s or contains(t, s) for t in outer.values())
    ]
    remaining = file_symbols(path, data).symbols
    if [plain_name(s.name) for s in survivors] != [plain_name(s.name) for s in remaining]:
        lost = {plain_name(s.name) for s in survivors} - {plain_name(s.name) for s in remaining}
        what = ", ".join(sorted(lost)) or "the other symbols"
        raise SpliceError(f"deleting {label} from {path} would also remove or rename {what}")
    for sym, now in zip(survivors, remaining, strict=True):
        holds = any(contains(sym, t) for t in outer.values())
        if not holds and data[now.start : now.end] != original[sym.start : sym.end]:
            raise SpliceError(f"deleting {label} from {path} would change {sym.name}")
    return data
