"""Unified diffs and SEARCH/REPLACE blocks, applied to the State Map's text of a file.

Never to the disk: the model wrote against what tm showed it, so that is what an edit must
match, and ETV later decides whether the disk still agrees. Every hunk's context and removed
lines (every SEARCH text) must match exactly one place, comparing lines with their line
endings and trailing whitespace set aside; anything else blocks the edit and names the hunk.
Lines the edit keeps are the file's own bytes; new lines take the file's line endings.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinymem.edits.searchreplace import parse_pairs
from tinymem.edits.udiff import parse_diff

__all__ = ["Patched", "apply_edit"]

_TRAILING = b" \t\r\n\f\v"


@dataclass
class Patched:
    data: bytes | None  # the file as the edit leaves it; None when it deletes the file
    problem: str | None = None  # why it cannot be applied
    added: str = ""  # the lines it writes (for the elision check)
    aimed: int = 0  # for a hunk that fails: the line it was aimed at (0: unknown)
    creates: bool = False  # a new file (`--- /dev/null`, or an empty SEARCH on no file)


def _eol(data: bytes) -> bytes:
    crlf = data.count(b"\r\n")
    return b"\r\n" if crlf and crlf * 2 >= data.count(b"\n") else b"\n"


def _find(lines: list[bytes], old: list[bytes]) -> list[int]:
    """Every index where `old` matches `lines` (trailing whitespace set aside)."""
    keys = [line.rstrip(_TRAILING) for line in lines]
    want = [line.rstrip(_TRAILING) for line in old]
    first = want[0]
    size = len(want)
    return [
        i for i in range(len(keys) - size + 1) if keys[i] == first and keys[i : i + size] == want
    ]


def _replace(lines: list[bytes], at: int, ops: list[tuple[str, bytes]], eol: bytes) -> list[bytes]:
    """`lines` with the matched region rewritten by `ops` (context keeps the file's bytes)."""
    out: list[bytes] = []
    index = at
    for op, text in ops:
        if op == " ":
            out.append(lines[index])
            index += 1
        elif op == "-":
            index += 1
        else:
            out.append(text + eol)
    at_end = index == len(lines) and bool(lines) and not lines[-1].endswith(b"\n")
    if at_end and out and out[-1].endswith(eol) and ops and ops[-1][0] == "+":
        out[-1] = out[-1][: -len(eol)]  # the file had no final newline: keep it so
    return [*lines[:at], *out, *lines[index:]]


def _label(kind: str, number: int, header: str) -> str:
    return f"{kind} {number}" + (f" ({header})" if header else "")


def apply_edit(fmt: str, code: str, original: bytes | None, path: str) -> Patched:
    """Apply a block of format "udiff" or "search-replace" to `original` (None: no file)."""
    if fmt == "udiff":
        return _apply_diff(code, original, path)
    return _apply_pairs(code, original, path)


def _apply_diff(code: str, original: bytes | None, path: str) -> Patched:
    diff = parse_diff(code)
    added = "\n".join(text for h in diff.hunks for op, text in h.lines if op == "+")
    if not diff.hunks and diff.new_path is not None:
        return Patched(None, f"the diff for {path} has no hunks", added)
    if diff.old_path is None:
        if original is not None:
            return Patched(None, f"the diff creates {path}, which tm already has", added)
        new = [text for h in diff.hunks for op, text in h.lines if op != "-"]
        return Patched(("\n".join(new) + "\n").encode(), None, added, creates=True)
    if original is None:
        return Patched(None, f"tm has no text of {path} to apply the diff to", added)
    if diff.new_path is None:
        return Patched(None, None, added)  # the diff deletes the whole file
    lines = original.splitlines(keepends=True)
    eol = _eol(original)
    for number, hunk in enumerate(diff.hunks, 1):
        label = _label("hunk", number, hunk.header)
        old = [text.encode() for text in hunk.old]
        if not [line for line in old if line.strip()]:
            return Patched(None, f"{label} has no context lines to place it", added, hunk.hint)
        found = _find(lines, old)
        if len(found) != 1:
            where = "nowhere" if not found else f"{len(found)} places"
            return Patched(
                None, f"{label} matches {where} in the State Map's {path}", added, hunk.hint
            )
        ops = [(op, text.encode()) for op, text in hunk.lines]
        lines = _replace(lines, found[0], ops, eol)
    return Patched(b"".join(lines), None, added)


def _apply_pairs(code: str, original: bytes | None, path: str) -> Patched:
    pairs, problem = parse_pairs(code)
    added = "\n".join(line for p in pairs for line in p.replace)
    if problem is not None:
        return Patched(None, problem, added)
    if original is None:
        if len(pairs) == 1 and not any(line.strip() for line in pairs[0].search):
            return Patched(("\n".join(pairs[0].replace) + "\n").encode(), None, added, creates=True)
        return Patched(None, f"tm has no text of {path} to search", added)
    lines = original.splitlines(keepends=True)
    eol = _eol(original)
    for number, pair in enumerate(pairs, 1):
        label = _label("SEARCH/REPLACE", number, f"line {pair.line}")
        old = [text.encode() for text in pair.search]
        if not [line for line in old if line.strip()]:
            return Patched(None, f"{label}: its SEARCH section is empty", added)
        found = _find(lines, old)
        if len(found) != 1:
            where = "nowhere" if not found else f"{len(found)} places"
            return Patched(None, f"{label}: its SEARCH text matches {where} in {path}", added)
        ops = [("-", line) for line in old] + [("+", t.encode()) for t in pair.replace]
        lines = _replace(lines, found[0], ops, eol)
    return Patched(b"".join(lines), None, added)
