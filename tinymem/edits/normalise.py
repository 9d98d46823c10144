"""A code block read the way it was meant, whatever its indentation.

Small models write a method alone at its class's indentation, dedented, with only its first
line dedented (copied from a span), under a comment naming the file, or around the `⋮` lines
of the excerpts tm shows them. None of that is evidence of where the code belongs, so before a
block is parsed:

- lines that are only `⋮` (tm's own excerpt marker) are dropped, and so is a first comment
  line naming a file (`# src/app.py`);
- the indentation all lines share is removed;
- a first line at column 0 over deeper lines (a span cut from its file) is re-based;
- a member that only parses inside a class (a JavaScript, Java or C# method alone, a C++
  member function, a Rust method written with `self`) is parsed inside a stand-in container.

The first reading that parses cleanly is kept; when none does, the reading that got furthest
is reported, with line numbers of the block as the model wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tinymem.edits.comments import comment_path
from tinymem.symbols import GRAMMAR_LANGUAGES, Symbol, analyze, extract, language_for_path
from tinymem.symbols.containers import containers
from tinymem.symbols.strings import string_rows

__all__ = ["EXCERPT_MARK", "STAND_IN", "STAND_INS", "Parsed", "container_headers", "parse_block"]

EXCERPT_MARK = "⋮"
_LINE = re.compile(r"\bline (\d+)")
STAND_IN = "TmWrap"
# Stand-in containers a member written alone is parsed in (here and by the splicer). Go
# needs none (methods carry their receiver), C has no members; a Python method parses alone
# as a function, so only the splicer uses Python's.
STAND_INS: dict[str, tuple[tuple[bytes, bytes], ...]] = {
    "python": ((b"class TmWrap:\n", b"\n"),),
    "javascript": ((b"class TmWrap {\n", b"\n}\n"),),
    "typescript": ((b"class TmWrap {\n", b"\n}\n"), (b"interface TmWrap {\n", b"\n}\n")),
    "tsx": ((b"class TmWrap {\n", b"\n}\n"),),
    "java": ((b"class TmWrap {\n", b"\n}\n"), (b"interface TmWrap {\n", b"\n}\n")),
    "csharp": ((b"class TmWrap {\n", b"\n}\n"), (b"interface TmWrap {\n", b"\n}\n")),
    "cpp": ((b"struct TmWrap {\n", b"\n};\n"),),
    # A method body goes in an impl block, a signature alone in a trait.
    "rust": ((b"impl TmWrap {\n", b"\n}\n"), (b"trait TmWrap {\n", b"\n}\n")),
    "ruby": ((b"class TmWrap\n", b"\nend\n"),),
}


@dataclass
class Parsed:
    """A block as read: its normalised text and the definitions found in it."""

    text: bytes  # normalised: spans of `symbols` index this
    symbols: tuple[Symbol, ...]
    language: str | None
    method: str  # "tree-sitter" | "regex" | "none"
    problem: str | None  # why no reading parses cleanly (None: clean)
    problem_row: int | None = None  # 0-based row of `text` where that problem is
    wrapped: bool = False  # it parses only inside a stand-in container
    notes: list[str] = field(default_factory=list)

    def header_of(self, sym: Symbol) -> str | None:
        """The block's own container header around `sym` (`class Session`, `impl X for Y`)."""
        best: tuple[int, str] | None = None
        for start, (end, head) in container_headers_for(self.language, self.text).items():
            if start <= sym.start and sym.end <= end and (best is None or start > best[0]):
                best = (start, head)
        return None if best is None else best[1]


def _indent(line: bytes) -> bytes:
    return line[: len(line) - len(line.lstrip(b" \t"))]


def _common_prefix(lines: list[bytes]) -> bytes:
    indents = [_indent(line) for line in lines if line.strip()]
    if not indents:
        return b""
    first = indents[0]
    size = len(first)
    for other in indents[1:]:
        size = min(size, len(other))
        for i in range(size):
            if other[i] != first[i]:
                size = i
                break
    return first[:size]


@dataclass
class _Reading:
    label: str
    lines: list[bytes]
    origin: list[int]  # 1-based line of the block each line comes from
    head: bytes = b""
    tail: bytes = b""

    @property
    def text(self) -> bytes:
        return b"\n".join(self.lines) + b"\n"


def _problem(language: str, data: bytes) -> str | None:
    syntax = analyze(language, data)
    return None if syntax.clean else (syntax.reason or "syntax error")


def _first_error_line(problem: str | None) -> int:
    match = _LINE.search(problem or "")
    return int(match.group(1)) if match else 0


def _keep_strings(language: str, before: list[bytes], after: list[bytes]) -> list[bytes]:
    """`after` (re-indented `before`) with the rows inside multi-line strings as they were:
    their indentation is the string's value, and the splicer leaves them alone too."""
    literal = string_rows(language, b"\n".join(after))
    return [before[i] if i in literal else line for i, line in enumerate(after)]


def _readings(lines: list[bytes], origin: list[int], language: str) -> list[_Reading]:
    prefix = _common_prefix(lines)
    base = [line[len(prefix) :] if line.startswith(prefix) else line for line in lines]
    if prefix:
        base = _keep_strings(language, lines, base)
    out = [_Reading("as written", base, origin)]
    codes = [i for i, line in enumerate(base) if line.strip()]
    if codes and not _indent(base[codes[0]]):
        rest = [base[i] for i in codes[1:]]
        deeper = _common_prefix(rest) if rest else b""
        if deeper and all(line.startswith(deeper) for line in rest):
            cut = list(base)
            for i in codes[1:]:
                cut[i] = cut[i][len(deeper) :]
            out.append(_Reading("re-based", _keep_strings(language, base, cut), origin))
    for head, tail in STAND_INS.get(language, ()) if language != "python" else ():
        out.append(_Reading("inside a stand-in container", base, origin, head, tail))
    return out


def parse_block(path: str, code: bytes) -> Parsed:
    """Normalise and parse a block for `path` (see the module docstring). Never raises."""
    language = language_for_path(path)
    if language is None or language not in GRAMMAR_LANGUAGES:
        found = extract(path, code)
        return Parsed(
            code, found.symbols, found.language, found.method, None if found.clean else found.reason
        )
    raw = code.replace(b"\r\n", b"\n").split(b"\n")
    notes: list[str] = []
    lines: list[bytes] = []
    origin: list[int] = []
    marks = 0
    for number, line in enumerate(raw, 1):
        stripped = line.strip()
        if stripped.decode("utf-8", "replace") == EXCERPT_MARK:
            marks += 1
            continue
        first = stripped and not any(x.strip() for x in lines)
        if first and comment_path(line.decode("utf-8", "replace")) is not None:
            notes.append("its first line, a comment naming the file, was left out")
            continue
        lines.append(line)
        origin.append(number)
    if marks:
        notes.append(f"its {marks} `{EXCERPT_MARK}` excerpt line(s) were left out")
    while lines and not lines[-1].strip():
        lines.pop()
        origin.pop()
    readings = _readings(lines, origin, language)
    best: tuple[int, _Reading, str] | None = None
    empty: Parsed | None = None
    for reading in readings:
        data = reading.head + reading.text + reading.tail
        problem = _problem(language, data)
        if problem is None:
            parsed = _parsed(path, language, reading, notes)
            if parsed.symbols:
                return parsed
            # Clean but defining nothing (a C# method alone reads as a top-level statement,
            # a JavaScript one as a call and a block): a later reading may find the member.
            empty = empty or parsed
            continue
        offset = reading.head.count(b"\n")
        reached = _first_error_line(problem) - offset
        if best is None or reached > best[0]:
            best = (reached, reading, problem)
    if empty is not None:
        return empty
    assert best is not None
    reached, reading, problem = best
    parsed = _parsed(path, language, reading, notes)
    parsed.problem_row = max(reached - 1, 0) if reached > 0 else None
    parsed.problem = _LINE.sub(
        lambda m: f"line {_block_line(reading, int(m.group(1)))}", problem, count=1
    )
    return parsed


def _block_line(reading: _Reading, line: int) -> int:
    index = line - 1 - reading.head.count(b"\n")
    if 0 <= index < len(reading.origin):
        return reading.origin[index]
    return reading.origin[-1] if reading.origin else 1


def _parsed(path: str, language: str, reading: _Reading, notes: list[str]) -> Parsed:
    text = reading.text
    if not reading.head:
        found = extract(path, text)
        if reading.label != "as written":
            notes = [*notes, f"read {reading.label}"]
        return Parsed(text, found.symbols, language, found.method, None, notes=notes)
    data = reading.head + text + reading.tail
    shift = len(reading.head)
    symbols = []
    for sym in extract(path, data).symbols:
        if sym.name == STAND_IN or sym.start < shift or sym.end > shift + len(text):
            continue
        name = sym.name.removeprefix(STAND_IN + ".")
        parent = sym.parent
        parent = None if parent in (STAND_IN, None) else parent.removeprefix(STAND_IN + ".")
        symbols.append(Symbol(name, sym.kind, sym.start - shift, sym.end - shift, parent))
    return Parsed(
        text,
        tuple(symbols),
        language,
        "tree-sitter",
        None,
        wrapped=True,
        notes=[*notes, "read as members written without their class"],
    )


def container_headers_for(language: str | None, data: bytes) -> dict[int, tuple[int, str]]:
    """start -> (end, normalised header) of every container of `data` (a Rust impl too),
    leaving out the stand-in container a member alone was parsed in."""
    return {
        c.start: (c.end, c.header) for c in containers(language, data) if STAND_IN not in c.header
    }


def container_headers(path: str, data: bytes) -> dict[int, tuple[int, str]]:
    return container_headers_for(language_for_path(path), data)
