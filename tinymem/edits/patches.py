"""Unified diffs and SEARCH/REPLACE blocks, applied to the State Map's text of a file.

Never to the disk: the model wrote against what tm showed it, so that is what an edit must
match, and ETV later decides whether the disk still agrees. Every hunk's context and removed
lines (every SEARCH text) must match exactly one place, comparing lines with their line
endings and trailing whitespace set aside; anything else blocks the edit and names the hunk. A
SEARCH text that matches nowhere so may match exactly once with leading whitespace set aside
too (a model's spaces for gofmt's tabs, or the common indentation stripped): it is applied
there, its REPLACE re-indented as the file indents those lines (not the lines inside a
multi-line string the SEARCH does not show: `loosestrings.py`).
Lines the edit keeps are the file's own bytes; new lines take the file's line endings.
A file's last line with no line break that the edit puts lines after gets one (as `git apply`
writes it); whether the file still ends with a line break is what the diff's `\\ No newline
at end of file` markers say, as git reads them, and where they say nothing (models never
write them, and no SEARCH/REPLACE block can) what the file did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tinymem.edits.loosestrings import keep_literals
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
    # Each hunk or SEARCH/REPLACE pair as applied, in order: the index of its first line in
    # the text as the steps before it left it, the lines it matched, the lines it wrote.
    places: list[tuple[int, int, int]] = field(default_factory=list)


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


def _find_loose(lines: list[bytes], old: list[bytes]) -> list[int]:
    """Every index where `old` matches `lines` with all leading and trailing whitespace set
    aside (blank lines must still be blank)."""
    keys = [line.strip() for line in lines]
    want = [line.strip() for line in old]
    size = len(want)
    return [i for i in range(len(keys) - size + 1) if keys[i : i + size] == want]


def _lead(line: bytes) -> bytes:
    return line[: len(line) - len(line.lstrip(b" \t"))]


def _reindent(
    file_lines: list[bytes], search: list[bytes], replace: list[bytes]
) -> list[bytes] | None:
    """`replace` indented as the file indents what `search` indented: each indentation the
    SEARCH used maps to the one the file has on the same line; an indentation only the REPLACE
    uses extends the nearest shallower one, its extra width converted in units (four columns
    a tab, or the SEARCH's own unit) when the file indents with the other character. None when
    one SEARCH indentation stands for several of the file's (the SEARCH was flattened)."""
    mapping: dict[bytes, bytes] = {}
    for mine, theirs in zip(search, file_lines, strict=True):
        if not mine.strip():
            continue
        key, value = _lead(mine), _lead(theirs.rstrip(b"\r\n"))
        if mapping.setdefault(key, value) != value:
            return None
    if not mapping:
        return None
    widths = sorted({len(k) for k in mapping if k and b"\t" not in k})
    steps = [b - a for a, b in zip([0, *widths], widths, strict=False) if b > a]
    unit = min(steps) if steps else 4
    tabs = any(b"\t" in v for v in mapping.values())
    out: list[bytes] = []
    for line in replace:
        if not line.strip():
            out.append(line.strip(b" \t"))
            continue
        lead = _lead(line)
        base = max((k for k in mapping if lead.startswith(k)), key=len, default=None)
        if base is None:
            base = min(mapping, key=len)
            extra = b""
        else:
            extra = lead[len(base) :]
        if tabs and extra and not extra.strip(b" "):
            extra = b"\t" * (len(extra) // unit) + b" " * (len(extra) % unit)
        elif not tabs and extra and not extra.strip(b"\t"):
            spaces = [v for v in mapping.values() if v]
            width = min((len(v) for v in spaces), default=4)
            extra = b" " * (width * len(extra))
        out.append(mapping[base] + extra + line[len(lead) :])
    return out


def _replace(
    lines: list[bytes],
    at: int,
    ops: list[tuple[str, bytes]],
    eol: bytes,
    final: bool | None = None,
) -> list[bytes]:
    """`lines` with the matched region rewritten by `ops` (context keeps the file's bytes).
    When the region reaches the end of the file, `final` says whether the file then ends with
    a line break (None: as it did)."""
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
    if index < len(lines):
        # Every line of the region had its line break: the file's last line is after it.
        return [*lines[:at], *out, *lines[index:]]
    # The file's old last line, kept as context, may have no line break: one that is not
    # last any more needs one, or the next line is glued onto it.
    out = [line if _bare(line) != line else line + eol for line in out[:-1]] + out[-1:]
    result = [*lines[:at], *out]
    if final is None:
        final = not lines or _bare(lines[-1]) != lines[-1]
    if result:
        last = result[-1]
        bare = _bare(last)
        result[-1] = bare + (last[len(bare) :] or eol) if final else bare
    return result


def _bare(line: bytes) -> bytes:
    """A line without its line break (bytes.splitlines ends lines at \\r\\n, \\n or \\r)."""
    if line.endswith(b"\r\n"):
        return line[:-2]
    return line[:-1] if line.endswith((b"\n", b"\r")) else line


def _label(kind: str, number: int, header: str) -> str:
    return f"{kind} {number}" + (f" ({header})" if header else "")


def apply_edit(
    fmt: str, code: str, original: bytes | None, path: str, *, exact: bool = False
) -> Patched:
    """Apply a block of format "udiff" or "search-replace" to `original` (None: no file).
    `exact`: a SEARCH text must match as written (no leading-whitespace-blind fallback)."""
    if fmt == "udiff":
        return _apply_diff(code, original, path)
    return _apply_pairs(code, original, path, exact)


def _apply_diff(code: str, original: bytes | None, path: str) -> Patched:
    diff = parse_diff(code)
    added = "\n".join(text for h in diff.hunks for op, text in h.lines if op == "+")
    if not diff.hunks and diff.new_path is not None:
        return Patched(None, f"the diff for {path} has no hunks", added)
    if diff.old_path is None:
        if original is not None:
            return Patched(None, f"the diff creates {path}, which tm already has", added)
        new = [text for h in diff.hunks for op, text in h.lines if op != "-"]
        end = "" if diff.hunks and diff.hunks[-1].says_final_newline is False else "\n"
        return Patched(("\n".join(new) + end).encode(), None, added, creates=True)
    if original is None:
        return Patched(None, f"tm has no text of {path} to apply the diff to", added)
    if diff.new_path is None:
        return Patched(None, None, added)  # the diff deletes the whole file
    lines = original.splitlines(keepends=True)
    eol = _eol(original)
    steps: list[tuple[int, int, int]] = []
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
        before = len(lines)
        lines = _replace(lines, found[0], ops, eol, hunk.says_final_newline)
        steps.append((found[0], len(old), len(old) + len(lines) - before))
    return Patched(b"".join(lines), None, added, places=steps)


def _apply_pairs(code: str, original: bytes | None, path: str, exact: bool = False) -> Patched:
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
    steps: list[tuple[int, int, int]] = []
    for number, pair in enumerate(pairs, 1):
        label = _label("SEARCH/REPLACE", number, f"line {pair.line}")
        old = [text.encode() for text in pair.search]
        if not [line for line in old if line.strip()]:
            return Patched(None, f"{label}: its SEARCH section is empty", added)
        found = _find(lines, old)
        new = [t.encode() for t in pair.replace]
        if not found and not exact:
            # Models strip the common indentation, or write spaces where gofmt has tabs: a
            # SEARCH that matches once with leading whitespace set aside is that place, and
            # its REPLACE takes the file's indentation.
            loose = _find_loose(lines, old)
            if len(loose) > 1:
                return Patched(
                    None,
                    f"{label}: its SEARCH text matches nowhere in {path} as written, and"
                    f" {len(loose)} places with leading whitespace set aside: not unique; give"
                    " more lines around the change",
                    added,
                )
            if loose:
                indented = _reindent(lines[loose[0] : loose[0] + len(old)], old, new)
                if indented is None:
                    return Patched(
                        None,
                        f"{label}: its SEARCH text matches {path} only with leading whitespace"
                        " set aside, and its indentation does not say how to indent the"
                        " REPLACE text; copy the lines as the file has them",
                        added,
                    )
                indented, unseen = keep_literals(path, lines, loose[0], old, new, indented)
                if unseen is not None:
                    return Patched(
                        None,
                        f"{label}: its SEARCH text matches {path} only with leading whitespace"
                        f" set aside, and line {unseen} of its REPLACE text may lie inside a"
                        " multi-line string, where indentation is the string's value: tm has"
                        f" no grammar for {path} to tell, so it does not re-indent it; copy the"
                        " lines as the file has them",
                        added,
                    )
                found, old, new = loose, lines[loose[0] : loose[0] + len(old)], indented
        if len(found) != 1:
            where = "nowhere" if not found else f"{len(found)} places"
            return Patched(None, f"{label}: its SEARCH text matches {where} in {path}", added)
        ops = [("-", line) for line in old] + [("+", t) for t in new]
        before = len(lines)
        lines = _replace(lines, found[0], ops, eol)
        steps.append((found[0], len(old), len(old) + len(lines) - before))
    return Patched(b"".join(lines), None, added, places=steps)
