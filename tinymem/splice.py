"""Splice proposed symbols into a file: pure functions, bytes in, bytes out, no I/O, no git.

`tm accept` uses this to write a proposal into the user's file without touching anything the
proposal did not name. The one property everything here serves: every byte outside the spans
that are replaced or inserted stays exactly as it was (comments, formatting, other symbols,
trailing whitespace, a BOM, the final newline or its absence, the line-ending convention).

How a proposed symbol is placed (`splice`):
- Existing name (the same qualified name in `extract(path, original)`): its byte span
  [start, end) is replaced by the new text, re-indented to the original's indentation and
  converted to the file's line endings.
- New name `P.leaf` whose container `P` exists: inside `P`, after its last member (with that
  member's indentation and the blank-line gap used between `P`'s members), or at the end of
  `P`'s body when it has no member yet (Python: after the last statement of the class body;
  brace languages: before the closing `}`). Go methods (and C++ out-of-line definitions) are
  top-level items: they go after the last top-level item of `P`. Rust members go into the
  `impl` block whose header the model wrote (`impl Display for S { fn fmt … }`), else into the
  last inherent `impl P`, else into a new `impl P { … }` after `P`.
- New top-level name: after `Replacement.after` when it names a symbol of the file, else after
  the file's last top-level definition (so a trailing `if __name__ == "__main__":` block or
  `module.exports = …` stays last; "end of file" when nothing follows), separated by the
  blank-line gap the file uses between top-level definitions (default: 2 in Python, 1 elsewhere).

A replacement for a container and one for its own member in the same call: the container's
text wins, the member's text is dropped. The member is reported in `replaced` (placement
"contained in the replacement of C") when the container's new text still defines it, else in
`removed`. A new member of a container replaced or added in the same call is spliced into the
container's new text (or, when that text already defines it, reported as contained).

Safety checks after splicing (any failure raises SpliceError and nothing is returned):
the result parses cleanly when the original did (tree-sitter, and for Python also the
interpreter's own parser, since tree-sitter-python accepts empty blocks and bad indentation);
each proposed name is defined inside the region its text went to; no other symbol appears (a
text that also defines a helper, or a renamed definition, is refused rather than spliced);
every symbol outside the edited regions keeps its name and its exact bytes.

Re-indentation: the new text's first line sets its base indentation; every line is shifted
from that base to the target's, except blank lines (kept as they are) and lines that start
inside a multi-line string literal (their leading whitespace is part of the value; Python
docstrings are re-indented with the code). Line breaks become the file's (CRLF when most of
its line breaks are).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, cast

from tree_sitter import Node, Parser

from tinymem.errors import TinymemError
from tinymem.records import FILE_SYMBOL
from tinymem.symbols import (
    GRAMMAR_LANGUAGES,
    Extraction,
    Symbol,
    analyze,
    extract,
    language_for_path,
)


class SpliceError(TinymemError):
    """The proposed symbols cannot be spliced safely; reported as a Gate A failure."""

    exit_code = 5


@dataclass(frozen=True)
class Replacement:
    """One proposed symbol.

    `name` is the qualified name as `tinymem.symbols` produces it ("f", "Client.get").
    `text` is the complete definition: dedented to column 0, or indented as it would sit in
    its container (the first line included or not, as `extract` spans are cut), with any line
    endings. `after` optionally names the symbol the new one should follow (used only when the
    name is new).
    """

    name: str
    text: bytes
    after: str | None = None


@dataclass(frozen=True)
class SpliceResult:
    data: bytes  # the new file content
    replaced: tuple[str, ...]  # names whose existing span was replaced
    added: tuple[str, ...]  # names inserted as new symbols
    placements: dict[str, str]  # name -> where it went, for humans
    # Original symbols the result no longer defines: members a replaced container's new text
    # left out. Empty unless a container was replaced; the caller decides whether to allow it.
    removed: tuple[str, ...] = ()


# --------------------------------------------------------------------------- byte helpers

_WS = b" \t\r\n\f\v"
_INDENT = b" \t"
_BOM = b"\xef\xbb\xbf"
_SUFFIX = re.compile(r"#\d+\Z")
_SPACES = re.compile(rb"\s+")
_LINE = re.compile(r"line (\d+)")

# Multi-line literals whose inner lines are content, not indentation: never re-indented.
_STRING_TYPES = frozenset(
    {
        "string",
        "template_string",
        "raw_string_literal",
        "string_literal",
        "interpreted_string_literal",
        "text_block",
        "heredoc_body",
    }
)

# A member written on its own (`def m(self)`, `get(x) { … }`) is recognised by parsing it
# inside a stand-in container; Go has no such container (methods carry receivers), C none.
_WRAP_NAME = "TmWrap"
_WRAPS: dict[str, tuple[bytes, bytes]] = {
    "python": (b"class TmWrap:\n", b"\n"),
    "javascript": (b"class TmWrap {\n", b"\n}\n"),
    "typescript": (b"class TmWrap {\n", b"\n}\n"),
    "tsx": (b"class TmWrap {\n", b"\n}\n"),
    "java": (b"class TmWrap {\n", b"\n}\n"),
    "cpp": (b"struct TmWrap {\n", b"\n};\n"),
    "rust": (b"impl TmWrap {\n", b"\n}\n"),
    "ruby": (b"class TmWrap\n", b"\nend\n"),
}
_DEFAULT_UNIT: dict[str, bytes] = {
    "python": b"    ",
    "go": b"\t",
    "javascript": b"  ",
    "typescript": b"  ",
    "tsx": b"  ",
    "ruby": b"  ",
}
# Symbols that cannot hold members (a name `f.g` under a function is a local, not an entity).
_LEAF_KINDS = frozenset({"function", "method", "constant", "variable", "macro"})
# Kinds left out when measuring the blank lines between definitions: `A = 1\nB = 2` runs of
# constants say nothing about how functions are separated.
_GAPLESS_KINDS = frozenset({"constant", "variable"})
_CLOSERS = (b"}", b"};", b"end")
_COMMENT_STARTS = (b"#", b"//", b"/*", b"*", b"--")


def _leading_ws(line: bytes) -> bytes:
    return line[: len(line) - len(line.lstrip(_INDENT))]


def _blank(line: bytes) -> bool:
    return not line.strip(_WS)


def _eol_of(data: bytes) -> bytes:
    """The file's line-ending convention: CRLF when most line breaks are CRLF."""
    crlf = data.count(b"\r\n")
    return b"\r\n" if crlf > data.count(b"\n") - crlf else b"\n"


def _line_start(data: bytes, pos: int, floor: int) -> int:
    return max(data.rfind(b"\n", 0, pos) + 1, floor)


def _line_end(data: bytes, pos: int) -> int:
    """Where the line containing `pos` ends: at its line break (before the CR of a CRLF)."""
    index = data.find(b"\n", pos)
    if index < 0:
        return len(data)
    if index > pos and data[index - 1 : index] == b"\r":
        return index - 1
    return index


def _content_end(data: bytes, end: int, floor: int) -> int:
    while end > floor and data[end - 1] in _WS:
        end -= 1
    return end


def _plain(name: str) -> str:
    """A qualified name without the "#2" duplicate suffixes: texts are parsed alone, so a
    proposal for `f#2` defines plain `f`."""
    return ".".join(_SUFFIX.sub("", part) for part in name.split("."))


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _parent_name(name: str) -> str | None:
    return name.rsplit(".", 1)[0] if "." in name else None


def _grammar(path: str) -> str:
    language = language_for_path(path)
    if language is None or language not in GRAMMAR_LANGUAGES:
        raise SpliceError(
            f"cannot splice symbols into {path}: tm has no grammar for it, so only whole-file "
            "proposals can be written there"
        )
    return language


def _extract(path: str, data: bytes) -> Extraction:
    """`extract`, but blind to a leading BOM.

    Works around tinymem.symbols not skipping a BOM when it decides whether a doc comment on
    the first line is on a line of its own (with a BOM it is not attached to the definition
    below it, without one it is): deleting the first definition of a BOM file would otherwise
    "change" the next one. Offsets are shifted back, so they index `data` itself.
    """
    if not data.startswith(_BOM):
        return extract(path, data)
    found = extract(path, data[len(_BOM) :])
    shift = len(_BOM)
    return Extraction(
        language=found.language,
        method=found.method,
        symbols=tuple(
            Symbol(s.name, s.kind, s.start + shift, s.end + shift, s.parent) for s in found.symbols
        ),
        clean=found.clean,
        reason=found.reason,
    )


# --------------------------------------------------------------------------- parsing

_PARSERS: dict[str, Parser] = {}


def _root(language: str, data: bytes) -> Node:
    parser = _PARSERS.get(language)
    if parser is None:
        # Imported lazily, as in tinymem.symbols: the pack loads grammar modules on import.
        from tree_sitter_language_pack import get_language

        parser = Parser(get_language(cast("Any", language)))
        _PARSERS[language] = parser
    return parser.parse(data).root_node


def _is_docstring(node: Node) -> bool:
    """A Python string that is the first statement of a block or module (the grammar puts
    it straight in the block, older ones inside an expression_statement)."""
    statement = node
    parent = node.parent
    if parent is not None and parent.type == "expression_statement":
        if parent.named_child_count != 1:
            return False
        statement, parent = parent, parent.parent
    return (
        parent is not None
        and parent.type in ("block", "module")
        and parent.named_child_count > 0
        and parent.named_children[0] == statement
    )


def _string_rows(language: str, text: bytes) -> set[int]:
    """Rows (0-based) of `text` that start inside a multi-line string literal.

    Their leading whitespace is part of the string's value, so re-indenting them would change
    what the program does. Python docstrings are the exception: they are re-indented with the
    code (inspect.cleandoc strips their indentation anyway, and leaving them would be ugly).
    """
    rows: set[int] = set()
    stack = [_root(language, text)]
    while stack:
        node = stack.pop()
        first, last = node.start_point.row, node.end_point.row
        if first == last:
            continue  # a one-line node holds no multi-line literal
        if node.type in _STRING_TYPES and not (language == "python" and _is_docstring(node)):
            rows.update(range(first + 1, last + 1))
            continue
        stack.extend(node.children)
    return rows


def _problem(language: str, data: bytes) -> str | None:
    """Why `data` does not parse, or None (`analyze` includes Python's own parser)."""
    syntax = analyze(language, data)
    return None if syntax.clean else (syntax.reason or "syntax error")


# --------------------------------------------------------------------------- texts


@dataclass
class _Text:
    """A definition text in canonical form: LF line breaks, first line at column 0, every
    `shift` line indented relative to column 0. Lines with `shift` False (blank lines, lines
    inside multi-line strings, lines less indented than the text's own base) are kept
    byte-for-byte wherever the text goes."""

    lines: list[bytes]
    shift: list[bool]

    def joined(self) -> bytes:
        return b"\n".join(self.lines)

    def placed(self, indent: bytes, eol: bytes) -> bytes:
        """The text for a spot whose first line already sits at `indent`."""
        out = [self.lines[0]]
        out.extend(
            indent + line if shift else line
            for line, shift in zip(self.lines[1:], self.shift[1:], strict=True)
        )
        return eol.join(out)


def _prepare(language: str, raw: bytes, hint: bytes, name: str) -> _Text:
    """Normalise a proposed text to canonical form.

    The text's base indentation is its first line's. One ambiguity: a first line at column 0
    followed by lines that all start with `hint` (the indentation of the spot it goes to) is
    either a dedented text whose body happens to be that deep, or a span cut from its file the
    way `extract` cuts spans (the first line's indentation left before the span). Both read
    the same in brace languages, where the cut reading changes nothing, so it is taken; in
    Python the reading that parses is taken, the cut one when both do.
    """
    text = raw[len(_BOM) :] if raw.startswith(_BOM) else raw
    lines = text.replace(b"\r\n", b"\n").split(b"\n")
    while lines and _blank(lines[0]):
        lines.pop(0)
    while lines and _blank(lines[-1]):
        lines.pop()
    if not lines:
        raise ValueError(f"the new text for {name} is empty; use delete_symbols to delete")
    lines[-1] = lines[-1].rstrip(_WS)
    literal = _string_rows(language, b"\n".join(lines))
    movable = [i > 0 and i not in literal and not _blank(line) for i, line in enumerate(lines)]

    base = _leading_ws(lines[0])
    dedented = [lines[0][len(base) :]]
    dedented_shift = [False]
    for i, line in enumerate(lines[1:], 1):
        if movable[i] and line.startswith(base):
            dedented.append(line[len(base) :])
            dedented_shift.append(True)
        else:
            dedented.append(line)
            dedented_shift.append(False)
    as_written = _Text(dedented, dedented_shift)

    if base or not hint or len(lines) == 1:
        return as_written
    if not all(line.startswith(hint) for i, line in enumerate(lines) if movable[i]):
        return as_written
    cut = _Text(
        [line[len(hint) :] if movable[i] else line for i, line in enumerate(lines)],
        list(movable),
    )
    if cut.lines == as_written.lines or language != "python":
        return cut
    if _problem(language, cut.joined()) is None or _problem(language, as_written.joined()):
        return cut
    return as_written


def _sub_text(language: str, src: bytes, start: int, end: int, name: str) -> _Text:
    """The canonical text of src[start:end] (an unwrapped member), with its line's indent."""
    begin = _line_start(src, start, 0)
    if src[begin:start].strip(_WS):
        begin = start
    return _prepare(language, src[begin:end], b"", name)


@dataclass
class _Form:
    """What a proposed text is, for placing it.

    standalone: a top-level item that defines the name itself (a function, a class, a Go
    method with its receiver, a C++ `void S::m()`); member: a member written without its
    container (possibly unwrapped from the container the model wrote around it)."""

    kind: str  # "standalone" | "member"
    text: _Text
    header: bytes | None = None  # the Rust `impl … ` header the model wrote around a member


def _outside_is_trivial(src: bytes, root: Node, start: int, end: int) -> bool:
    """True when nothing but comments lies outside [start, end) at the top of the tree."""
    for child in root.children:
        child_end = _content_end(src, child.end_byte, child.start_byte)  # nodes keep blanks
        if child_end <= start or child.start_byte >= end:
            if "comment" not in child.type:
                return False
        elif child.start_byte < start or child_end > end:
            return False
    return True


def _wrapper_is_trivial(src: bytes, start: int, end: int) -> bool:
    """True when the text around a member is only container headers, closers and comments:
    `class C:` / `impl<T> S<T> {` … `}`. Anything else (a docstring, an attribute, another
    statement) would be silently dropped by unwrapping, so such a text is refused."""
    for piece in (src[:start], src[end:]):
        for line in piece.split(b"\n"):
            stripped = line.strip(_WS)
            if not stripped or stripped in _CLOSERS or stripped.startswith(_COMMENT_STARTS):
                continue
            if stripped.endswith((b":", b"{")):
                continue
            return False
    return True


def _contains(outer: Symbol, inner: Symbol) -> bool:
    """Physical nesting (a Go method is not inside its struct, a Python method is)."""
    return (
        outer.start <= inner.start
        and inner.end <= outer.end
        and (outer.start, outer.end) != (inner.start, inner.end)
    )


# --------------------------------------------------------------------------- plans


@dataclass
class _Edit:
    start: int  # original coordinates; start == end for an insertion
    end: int
    data: bytes
    key: tuple[int, ...]  # order among insertions at one position
    expect: tuple[str, ...]  # names that must be defined inside the new bytes
    maybe: tuple[str, ...] = ()  # contained names: inside -> replaced, absent -> removed
    owners: tuple[str, ...] = ()  # original symbols whose text the edit changes (containers)
    # Indentation width of an insertion: at one position a deeper insertion goes first, so the
    # new member of an inner class does not land after (in Python: inside) an outer one's.
    depth: int = 0


@dataclass
class _Point:
    """Where a new symbol went, so a later one can follow it (`after` naming a new symbol)."""

    pos: int
    key: tuple[int, ...]
    indent: bytes
    gap: int
    top: bool
    parent: str | None = None  # the container of a member


@dataclass
class _NewImpl:
    pos: int
    key: tuple[int, ...]
    header: bytes
    members: list[tuple[str, _Text]]


@dataclass
class _Plan:
    edits: list[_Edit] = field(default_factory=list)
    placements: dict[str, str] = field(default_factory=dict)
    points: dict[str, _Point] = field(default_factory=dict)
    impls: dict[tuple[str, bytes], _NewImpl] = field(default_factory=dict)


def _norm_header(header: bytes) -> bytes:
    return _SPACES.sub(b" ", header.strip(_WS))


def _describe(header: bytes) -> str:
    return _norm_header(header).decode("utf-8", "replace")


# --------------------------------------------------------------------------- the splicer


class _Splicer:
    def __init__(self, path: str, language: str, data: bytes) -> None:
        self.path = path
        self.language = language
        self.data = data
        self.ext: Extraction = _extract(path, data)
        self.symbols = self.ext.symbols
        self.by_name = {s.name: s for s in self.symbols}
        self.eol = _eol_of(data)
        self.floor = len(_BOM) if data.startswith(_BOM) else 0
        self._root: Node | None = None
        self._unit: bytes | None = None
        self._seq = 0
        self._clean: bool | None = None
        self._items: list[tuple[int, int]] | None = None
        self._item_starts: list[int] = []
        self._empty_last: str | None = None  # last symbol added to an empty file

    # ------------------------------------------------------------------ facts about the file

    @property
    def root(self) -> Node:
        if self._root is None:
            self._root = _root(self.language, self.data)
        return self._root

    @property
    def clean(self) -> bool:
        if self._clean is None:
            self._clean = _problem(self.language, self.data) is None
        return self._clean

    def next_key(self) -> tuple[int, ...]:
        self._seq += 1
        return (self._seq,)

    def indent_of(self, pos: int) -> tuple[bytes, bool]:
        """(indentation of the line holding pos, whether only that indentation precedes pos)."""
        begin = _line_start(self.data, pos, self.floor)
        prefix = self.data[begin:pos]
        if not prefix.strip(_INDENT):
            return prefix, True
        return _leading_ws(prefix), False

    def unit(self) -> bytes:
        """One indentation level as the file writes it (the commonest step between lines)."""
        if self._unit is None:
            steps: Counter[int] = Counter()
            tabs = spaces = previous = 0
            for line in self.data.split(b"\n"):
                if _blank(line):
                    continue
                ws = _leading_ws(line)
                if ws.startswith(b"\t"):
                    tabs += 1
                    continue
                spaces += bool(ws)
                if len(ws) > previous:
                    steps[len(ws) - previous] += 1
                previous = len(ws)
            unit = _DEFAULT_UNIT.get(self.language, b"    ")
            if tabs > spaces:
                unit = b"\t"
            else:
                # Steps of 1 are Javadoc ` * ` continuation lines, not indentation.
                unit = next(
                    (b" " * step for step, _n in steps.most_common() if step in (2, 3, 4, 8)),
                    unit,
                )
            self._unit = unit
        return self._unit

    def gap(self, siblings: Sequence[Symbol], default: int) -> int:
        """The commonest number of blank lines between consecutive `siblings` (ties: more)."""
        counts: Counter[int] = Counter()
        ordered = sorted(siblings, key=lambda s: s.start)
        for a, b in pairwise(ordered):
            between = self.data[a.end : b.start]
            if not between.strip(_WS):
                counts[max(between.count(b"\n") - 1, 0)] += 1
        if not counts:
            return default
        return max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]

    def top_gap(self) -> int:
        tops = [
            s
            for s in self.symbols
            if s.kind not in _GAPLESS_KINDS and self.indent_of(s.start) == (b"", True)
        ]
        return self.gap(tops, 2 if self.language == "python" else 1)

    def top_item_end(self, sym: Symbol) -> int:
        """End of the top-level item holding `sym` (its class, impl block, namespace)."""
        if self._items is None:
            self._items = [(c.start_byte, c.end_byte) for c in self.root.children]
            self._item_starts = [start for start, _end in self._items]
        probe = max(sym.end - 1, sym.start)
        index = bisect_right(self._item_starts, probe) - 1
        if index >= 0:
            start, end = self._items[index]
            if probe < end:
                return max(_content_end(self.data, end, start), sym.end)
        return sym.end

    def top_name_at(self, end: int) -> str | None:
        """What ends at `end`, for describing a placement: the outermost symbol ending
        there, else the first line of the top-level item (`impl Display for S`)."""
        hits = [s for s in self.symbols if s.end == end]
        if hits:
            return hits[0].name
        for child in self.root.children:
            if child.start_byte < end <= child.end_byte:
                head = self.data[child.start_byte : child.end_byte].split(b"\n", 1)[0]
                return head.split(b"{", 1)[0].strip(_WS).decode("utf-8", "replace") or None
        return None

    def node_with_body(self, sym: Symbol) -> Node | None:
        """The outermost syntax node inside `sym`'s span that has a `body` field."""
        node: Node | None = self.root
        probe = max(sym.end - 1, sym.start)
        while node is not None:
            if (
                node.start_byte >= sym.start
                # a comment node keeps its trailing blanks, the span does not
                and _content_end(self.data, node.end_byte, node.start_byte) <= sym.end
                and node.child_by_field_name("body") is not None
            ):
                return node
            node = next((c for c in node.children if c.start_byte <= probe < c.end_byte), None)
        return None

    def ancestors(self, sym: Symbol) -> tuple[str, ...]:
        return tuple(s.name for s in self.symbols if _contains(s, sym))

    def around(self, start: int, end: int) -> tuple[str, ...]:
        """Symbols whose span holds [start, end) strictly inside."""
        return tuple(s.name for s in self.symbols if s.start < start and end < s.end)

    def with_ancestors(self, name: str) -> tuple[str, ...]:
        sym = self.by_name.get(name)
        return () if sym is None else (sym.name, *self.ancestors(sym))

    # ------------------------------------------------------------------ classification

    def classify(self, name: str, text: _Text) -> _Form:
        """Decide whether `text` is a standalone item or a member, unwrapping a member the
        model wrote inside its container. SpliceError when it does not define `name`, or
        defines something besides it."""
        src = text.joined()
        found = _extract(self.path, src).symbols
        target = _plain(name)
        exact = [s for s in found if _plain(s.name) == target]
        suffix = [
            s
            for s in found
            if "." in s.name and target.endswith("." + _plain(s.name)) and s not in exact
        ]
        for sym in exact + suffix:
            others = [s for s in found if s != sym and not _contains(sym, s)]
            if (
                sym in exact
                and not others
                and _outside_is_trivial(src, _root(self.language, src), sym.start, sym.end)
            ):
                return _Form("standalone", text)
            strangers = [o.name for o in others if not _contains(o, sym)]
            if strangers:
                raise SpliceError(
                    f"the new text for {name} in {self.path} also defines "
                    f"{', '.join(strangers)}; each definition must be proposed on its own"
                )
            if "." in target and _wrapper_is_trivial(src, sym.start, sym.end):
                header = self._impl_header(src, sym.start) if self.language == "rust" else None
                member = _sub_text(self.language, src, sym.start, sym.end, name)
                return _Form("member", member, header)
            if sym in exact and not _problem(self.language, src):
                raise SpliceError(
                    f"the new text for {name} in {self.path} has code outside the definition "
                    f"of {name}; propose the definition alone"
                )
        problem = _problem(self.language, src)
        if "." in target and self.language in _WRAPS:
            head, tail = _WRAPS[self.language]
            wrapped = head + b"    " + text.placed(b"    ", b"\n") + tail
            expected = f"{_WRAP_NAME}.{_plain(_leaf(name))}"
            members = [s for s in _extract(self.path, wrapped).symbols if s.name != _WRAP_NAME]
            hits = [s for s in members if _plain(s.name) == expected]
            if hits:
                strangers = [
                    s.name.removeprefix(_WRAP_NAME + ".")
                    for s in members
                    if s != hits[0] and not _contains(hits[0], s)
                ]
                if not strangers:
                    return _Form("member", text)
                raise SpliceError(
                    f"the new text for {name} in {self.path} also defines "
                    f"{', '.join(strangers)}; each definition must be proposed on its own"
                )
            # A member alone need not parse (a JS method outside a class): judge it wrapped,
            # and give line numbers of the text itself (the wrapper adds one line on top).
            wrapped_problem = _problem(self.language, wrapped)
            if self.language != "python" or problem is None:  # a Python method parses alone
                problem = wrapped_problem and _LINE.sub(
                    lambda m: f"line {max(int(m.group(1)) - 1, 1)}", wrapped_problem
                )
        if problem is not None:
            raise SpliceError(f"the new text for {name} does not parse: {problem}")
        defined = ", ".join(s.name for s in found if not any(_contains(o, s) for o in found))
        detail = f" (it defines {defined})" if defined else ""
        raise SpliceError(f"the new text for {name} does not define {name} in {self.path}{detail}")

    def _impl_header(self, src: bytes, pos: int) -> bytes | None:
        """The header (`impl<T> Display for S<T>`) of the innermost impl around `pos`."""
        node: Node | None = _root(self.language, src)
        header = None
        while node is not None:
            body = node.child_by_field_name("body") if node.type == "impl_item" else None
            if body is not None:
                header = src[node.start_byte : body.start_byte].strip(_WS)
            node = next((c for c in node.children if c.start_byte <= pos < c.end_byte), None)
        return header

    def member_hint(self, name: str) -> bytes:
        """The indentation a new member will probably get (only to read its text right)."""
        parent = _parent_name(name)
        if parent is None:
            return b""
        members = [s for s in self.symbols if s.parent == parent]
        if not members:
            return b""
        indent, alone = self.indent_of(members[-1].start)
        return indent if alone else b""

    def nestable(self, form: _Form) -> bool:
        """Whether members of this container text go inside its own span (a Python or Java
        class, a Rust trait) rather than elsewhere (Go methods, Rust impl blocks)."""
        if self.language == "go":
            return False
        if self.language != "rust":
            return True
        found = _extract(self.path, form.text.joined()).symbols
        return bool(found) and found[0].kind in ("trait", "module")

    # ------------------------------------------------------------------ placement

    def chunk(self, indent: bytes, text: _Text, gap: int) -> bytes:
        """A new definition inserted right at the end of a line."""
        return self.eol * (gap + 1) + indent + text.placed(indent, self.eol)

    def chain(
        self, plan: _Plan, name: str, after: str, text: _Text, expect: tuple[str, ...]
    ) -> None:
        """Right after a symbol placed earlier in this call, with its indentation and gap."""
        point = plan.points[after]
        key = (*point.key, *self.next_key())
        data = self.chunk(point.indent, text, point.gap)
        owners: tuple[str, ...] = ()
        for edit in plan.edits:
            if edit.key == point.key:
                owners = edit.owners
        plan.edits.append(
            _Edit(point.pos, point.pos, data, key, expect, owners=owners, depth=len(point.indent))
        )
        plan.points[name] = _Point(point.pos, key, point.indent, point.gap, point.top, point.parent)
        plan.placements[name] = f"after {after}"

    def place_top(
        self,
        plan: _Plan,
        name: str,
        text: _Text,
        anchor: Symbol | None,
        expect: tuple[str, ...],
    ) -> None:
        """A top-level item: after `anchor`'s top-level item, else after the last top-level
        definition of the file, else at the end of its content."""
        if anchor is None and self.symbols:
            anchor = max(self.symbols, key=lambda s: (self.top_item_end(s), -s.start))
        gap = self.top_gap()
        key = self.next_key()
        if anchor is None:
            content = _content_end(self.data, len(self.data), self.floor)
            if content == self.floor:  # an empty file: the new text is all there will be
                if self._empty_last is not None:
                    self.chain(plan, name, self._empty_last, text, expect)
                    plan.placements[name] = "end of file"
                else:
                    data = text.placed(b"", self.eol)
                    plan.edits.append(_Edit(self.floor, self.floor, data, key, expect))
                    # The final newline, after everything else inserted here.
                    plan.edits.append(_Edit(self.floor, self.floor, self.eol, (1 << 62,), ()))
                    plan.points[name] = _Point(self.floor, key, b"", gap, True)
                    plan.placements[name] = "end of file"
                self._empty_last = name
                return
            pos = _line_end(self.data, content)
            where = "end of file"
        else:
            end = self.top_item_end(anchor)
            pos = _line_end(self.data, end)
            where = f"after {self.top_name_at(end) or anchor.name}"
            if not self.data[pos:].strip(_WS):
                where = "end of file"
        plan.edits.append(_Edit(pos, pos, self.chunk(b"", text, gap), key, expect))
        plan.points[name] = _Point(pos, key, b"", gap, True)
        plan.placements[name] = where

    def place_member(
        self, plan: _Plan, rep: Replacement, form: _Form, expect: tuple[str, ...]
    ) -> None:
        parent_name = _parent_name(rep.name)
        assert parent_name is not None
        parent = self.by_name.get(parent_name)
        if self.language == "rust" and (parent is None or parent.kind not in ("trait", "module")):
            self.place_rust_member(plan, rep, form, parent_name, parent, expect)
            return
        if parent is None:
            raise SpliceError(f"cannot add {rep.name} to {self.path}: it has no {parent_name}")
        if parent.kind in _LEAF_KINDS:
            raise SpliceError(
                f"cannot add {rep.name} to {self.path}: {parent_name} is a {parent.kind}, "
                "which holds no member definitions"
            )
        members = [s for s in self.symbols if s.parent == parent.name and _contains(parent, s)]
        label = f"{parent.kind} {parent.name}"
        owners = self.with_ancestors(parent.name)
        if self.place_after_member(plan, rep, form.text, members, label, owners, expect):
            return
        node = self.node_with_body(parent)
        body = node.child_by_field_name("body") if node is not None else None
        if body is None:
            raise SpliceError(
                f"cannot add {rep.name} to {self.path}: {label} has no body to put it in"
            )
        self.place_in_body(plan, rep.name, form.text, body, parent.start, label, owners, expect)

    def place_after_member(
        self,
        plan: _Plan,
        rep: Replacement,
        text: _Text,
        members: list[Symbol],
        label: str,
        owners: tuple[str, ...],
        expect: tuple[str, ...],
    ) -> bool:
        """After `rep.after` when it is one of `members`, else after the last of them, with
        its indentation. False when there is none, or it shares its line with other code."""
        anchor: Symbol | None = None
        if rep.after is not None:
            wanted = {rep.after, f"{_parent_name(rep.name)}.{rep.after}"}
            anchor = next((m for m in members if m.name in wanted), None)
        if anchor is None and members:
            anchor = max(members, key=lambda m: m.end)
        if anchor is None:
            return False
        indent, alone = self.indent_of(anchor.start)
        pos = _line_end(self.data, anchor.end)
        if not alone or self.data[anchor.end : pos].strip(_WS):
            return False
        gap = self.gap(members, 1)
        key = self.next_key()
        data = self.chunk(indent, text, gap)
        plan.edits.append(_Edit(pos, pos, data, key, expect, owners=owners, depth=len(indent)))
        plan.points[rep.name] = _Point(pos, key, indent, gap, False, _parent_name(rep.name))
        plan.placements[rep.name] = f"inside {label}, after {_leaf(anchor.name)}"
        return True

    def place_in_body(
        self,
        plan: _Plan,
        name: str,
        text: _Text,
        body: Node,
        container_start: int,
        label: str,
        owners: tuple[str, ...],
        expect: tuple[str, ...],
    ) -> None:
        """Into a body without members: after the last statement of a Python block, before
        the closing brace (or `end`) elsewhere."""
        data = self.data
        outer_indent = self.indent_of(container_start)[0]
        key = self.next_key()
        closer = body.children[-1] if body.children else None
        if closer is not None and closer.type in ("}", "end"):
            inside = data[body.start_byte + 1 : closer.start_byte]
            content = [line for line in inside.split(b"\n")[1:] if not _blank(line)]
            indent = _leading_ws(content[0]) if content else outer_indent + self.unit()
            blank = self.eol if inside.strip(_WS) else b""
            placed = indent + text.placed(indent, self.eol) + self.eol
            closer_indent, alone = self.indent_of(closer.start_byte)
            if alone:
                pos = _line_start(data, closer.start_byte, self.floor)
                chunk = blank + placed
            else:  # `class C {}`: open the braces onto their own lines
                pos = closer.start_byte
                chunk = self.eol + blank + placed + closer_indent
        else:  # an indented block (Python)
            statements = body.named_children
            indent = outer_indent + self.unit()
            if statements:
                first_indent, alone = self.indent_of(statements[0].start_byte)
                if alone:
                    indent = first_indent
            pos = _line_end(data, _content_end(data, body.end_byte, body.start_byte))
            chunk = self.chunk(indent, text, 1)
        plan.edits.append(_Edit(pos, pos, chunk, key, expect, owners=owners, depth=len(indent)))
        plan.points[name] = _Point(pos, key, indent, 1, False, _parent_name(name))
        plan.placements[name] = f"inside {label}, at the end of its body"

    def rust_impls(self, parent_name: str) -> list[Node]:
        """`impl` blocks for type `parent_name`: by the type's last path segment, generics
        stripped, in the same enclosing module."""
        prefix = _parent_name(parent_name)
        leaf = _plain(_leaf(parent_name))
        found: list[Node] = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.type != "impl_item":
                stack.extend(node.children)
                continue
            type_node = node.child_by_field_name("type")
            if type_node is None or node.child_by_field_name("body") is None:
                continue
            raw = self.data[type_node.start_byte : type_node.end_byte].decode("utf-8", "replace")
            type_name = raw.split("<", 1)[0].split("::")[-1].strip(" &")
            enclosing = [s for s in self.symbols if s.start <= node.start_byte < s.end]
            inside = enclosing[-1].name if enclosing else None
            if type_name == leaf and inside == prefix:
                found.append(node)
        return sorted(found, key=lambda n: n.start_byte)

    def place_rust_member(
        self,
        plan: _Plan,
        rep: Replacement,
        form: _Form,
        parent_name: str,
        parent: Symbol | None,
        expect: tuple[str, ...],
    ) -> None:
        """Into the impl block whose header the model wrote, else the last inherent impl of
        the type, else a new `impl Type { … }` after the type."""
        impls = self.rust_impls(parent_name)

        def header_of(node: Node) -> bytes:
            body = node.child_by_field_name("body")
            assert body is not None
            return self.data[node.start_byte : body.start_byte]

        chosen: Node | None
        if form.header is not None:
            wanted = _norm_header(form.header)
            chosen = next((n for n in impls if _norm_header(header_of(n)) == wanted), None)
        else:
            inherent = [n for n in impls if n.child_by_field_name("trait") is None]
            chosen = inherent[-1] if inherent else None
        if chosen is not None:
            body = chosen.child_by_field_name("body")
            assert body is not None
            members = [
                s
                for s in self.symbols
                if s.parent == parent_name and body.start_byte <= s.start < body.end_byte
            ]
            label = _describe(header_of(chosen))
            owners = self.around(body.start_byte, body.end_byte)
            if not self.place_after_member(plan, rep, form.text, members, label, owners, expect):
                self.place_in_body(
                    plan, rep.name, form.text, body, chosen.start_byte, label, owners, expect
                )
            return
        header = form.header
        if header is None:
            if parent is None and parent_name not in plan.points:
                raise SpliceError(f"cannot add {rep.name} to {self.path}: it has no {parent_name}")
            if parent is not None:
                signature = self.data[parent.start : parent.end].split(b"{", 1)[0]
                if b"<" in signature.split(b"(", 1)[0]:
                    raise SpliceError(
                        f"cannot add {rep.name} to {self.path}: {parent_name} is generic and "
                        "has no inherent impl block; propose the impl block with it"
                    )
            header = b"impl " + _plain(_leaf(parent_name)).encode()
        slot = (parent_name, _norm_header(header))
        impl = plan.impls.get(slot)
        if impl is None:
            where = f"in a new {_describe(header)} block"
            if parent is None and parent_name in plan.points:
                point = plan.points[parent_name]
                impl = _NewImpl(point.pos, (*point.key, *self.next_key()), header, [])
                where += f" after {parent_name}"
            else:
                related = [
                    s for s in self.symbols if s.name == parent_name or s.parent == parent_name
                ]
                anchor = max(related, key=self.top_item_end) if related else None
                if anchor is None and self.symbols:
                    anchor = max(self.symbols, key=self.top_item_end)
                if anchor is None:
                    end = _content_end(self.data, len(self.data), self.floor)
                else:
                    end = self.top_item_end(anchor)
                    where += f" after {self.top_name_at(end) or anchor.name}"
                impl = _NewImpl(_line_end(self.data, end), self.next_key(), header, [])
            plan.impls[slot] = impl
        else:
            where = f"in a new {_describe(header)} block"
        impl.members.append((rep.name, form.text))
        plan.placements[rep.name] = where

    def flush_impls(self, plan: _Plan) -> None:
        unit = self.unit()
        for impl in plan.impls.values():
            body = (self.eol * 2).join(
                unit + text.placed(unit, self.eol) for _name, text in impl.members
            )
            data = (
                self.eol * (self.top_gap() + 1)
                + impl.header
                + b" {"
                + self.eol
                + body
                + self.eol
                + b"}"
            )
            if not self.data[self.floor : impl.pos].strip(_WS):
                data = data.lstrip(b"\r\n") + self.eol  # an empty file
            names = tuple(name for name, _text in impl.members)
            plan.edits.append(_Edit(impl.pos, impl.pos, data, impl.key, names))

    # ------------------------------------------------------------------ the whole splice

    def can_chain(self, plan: _Plan, name: str, after: str, form: _Form) -> bool:
        """Whether `name` can simply follow `after`, a symbol placed earlier in this call: both
        top-level items, or members of one container (not in Rust, where the impl block
        chooses)."""
        point = plan.points.get(after)
        if point is None:
            return False
        if _parent_name(name) is None or form.kind == "standalone":
            return point.top
        return self.language != "rust" and point.parent == _parent_name(name)

    def holder_in_call(self, name: str, calls: dict[str, Replacement]) -> str | None:
        """The outermost proper ancestor (by qualified name) of `name` also in this call."""
        holder = None
        parent = _parent_name(name)
        while parent is not None:
            if parent in calls:
                holder = parent
            parent = _parent_name(parent)
        return holder

    def run(self, reps: Sequence[Replacement]) -> SpliceResult:
        plan = _Plan()
        by_name = self.by_name
        calls = {r.name: r for r in reps}
        existing = [r for r in reps if r.name in by_name]
        new = [r for r in reps if r.name not in by_name]

        # A container and its own member both proposed: the container's text wins.
        contained: dict[str, str] = {}
        for r in existing:
            sym = by_name[r.name]
            holders = [by_name[o.name] for o in existing if _contains(by_name[o.name], sym)]
            if holders:
                contained[r.name] = min(holders, key=lambda h: (h.start, -h.end)).name
        tops = [r for r in existing if r.name not in contained]
        spans: dict[tuple[int, int], str] = {}
        for r in tops:
            sym = by_name[r.name]
            twin = spans.setdefault((sym.start, sym.end), r.name)
            if twin != r.name:
                raise SpliceError(
                    f"{twin} and {r.name} are one definition in {self.path}; propose it once"
                )

        forms: dict[str, _Form] = {}
        for r in tops:
            hint = self.indent_of(by_name[r.name].start)[0]
            forms[r.name] = self.classify(r.name, _prepare(self.language, r.text, hint, r.name))
        holder_of = {
            r.name: h for r in new if (h := self.holder_in_call(r.name, calls)) is not None
        }
        for r in new:
            if r.name not in holder_of:
                text = _prepare(self.language, r.text, self.member_hint(r.name), r.name)
                forms[r.name] = self.classify(r.name, text)

        # New members of a container proposed in this call go into the container's new text.
        nested: dict[str, list[Replacement]] = {}
        for r in new:
            holder = holder_of.get(r.name)
            if holder is None:
                continue
            if holder in forms and self.nestable(forms[holder]):
                nested.setdefault(holder, []).append(r)
            else:
                del holder_of[r.name]
                text = _prepare(self.language, r.text, self.member_hint(r.name), r.name)
                forms[r.name] = self.classify(r.name, text)
        for holder, members in nested.items():
            self.nest(plan, holder, members, forms)

        for r in tops:
            sym = by_name[r.name]
            before = self.data[sym.start : sym.end]
            # No new member was spliced into it and it is the very text: keep the bytes.
            if r.text.strip(_WS) == before and r.name not in nested:
                after = before  # byte-identical, whatever mix of line endings the file has
            else:
                after = forms[r.name].text.placed(self.indent_of(sym.start)[0], self.eol)
            expect = (r.name, *(m.name for m in nested.get(r.name, [])))
            maybe = tuple(n for n, c in contained.items() if c == r.name)
            owners = self.ancestors(sym)
            plan.edits.append(
                _Edit(sym.start, sym.end, after, self.next_key(), expect, maybe, owners)
            )
            plan.placements[r.name] = "replaced in place"
        for name, holder in contained.items():
            plan.placements[name] = f"contained in the replacement of {holder}"

        for r in new:
            if r.name in holder_of:
                continue
            form = forms[r.name]
            expect = (r.name, *(m.name for m in nested.get(r.name, [])))
            parent_name = _parent_name(r.name)
            if r.after is not None and self.can_chain(plan, r.name, r.after, form):
                self.chain(plan, r.name, r.after, form.text, expect)
            elif parent_name is None:
                anchor = by_name.get(r.after) if r.after is not None else None
                self.place_top(plan, r.name, form.text, anchor, expect)
            elif form.kind == "standalone":
                # Go methods, C++ out-of-line members: after the type's last top-level item.
                anchor = by_name.get(r.after) if r.after is not None else None
                related = [
                    s for s in self.symbols if s.name == parent_name or s.parent == parent_name
                ]
                if anchor is None and related:
                    anchor = max(related, key=self.top_item_end)
                if anchor is None and parent_name in plan.points:
                    self.chain(plan, r.name, parent_name, form.text, expect)
                else:
                    self.place_top(plan, r.name, form.text, anchor, expect)
            else:
                self.place_member(plan, r, form, expect)
        self.flush_impls(plan)

        result, regions = self.build(plan.edits)
        final = self.check(result, regions, {r.name for r in tops})
        found = {s.name for s in final}
        replaced = {r.name for r in tops} | {n for n in contained if n in found}
        removed = [
            s.name
            for s in self.symbols
            if s.name not in found and any(_contains(by_name[r.name], s) for r in tops)
        ]
        added = [r.name for r in new]
        return SpliceResult(
            data=result,
            replaced=tuple(n for n in calls if n in replaced),
            added=tuple(added),
            placements=plan.placements,
            removed=tuple(removed),
        )

    def nest(
        self, plan: _Plan, holder: str, members: list[Replacement], forms: dict[str, _Form]
    ) -> None:
        """Splice new members into the new text of their container (same call)."""
        form = forms[holder]
        prefix = holder.rsplit(".", 1)[0] + "." if "." in holder else ""
        mini = form.text.joined()
        defined = {_plain(s.name) for s in _extract(self.path, mini).symbols}
        todo: list[Replacement] = []
        for r in members:
            relative = r.name[len(prefix) :]
            if _plain(relative) in defined:
                plan.placements[r.name] = f"contained in the new text of {holder}"
                continue
            after = r.after
            if after is not None and after.startswith(prefix):
                after = after[len(prefix) :]
            todo.append(Replacement(relative, r.text, after))
        if not todo:
            return
        inner = splice(self.path, mini, todo)
        for r in members:
            relative = r.name[len(prefix) :]
            if relative in inner.placements:
                plan.placements[r.name] = (
                    f"inside the new text of {holder}, {inner.placements[relative]}"
                )
        forms[holder] = _Form(
            form.kind, _prepare(self.language, inner.data, b"", holder), form.header
        )

    # ------------------------------------------------------------------ build and verify

    def build(self, edits: list[_Edit]) -> tuple[bytes, list[tuple[_Edit, int, int]]]:
        out: list[bytes] = []
        regions: list[tuple[_Edit, int, int]] = []
        pos = size = 0
        for edit in sorted(edits, key=lambda e: (e.start, -e.depth, e.key)):
            if edit.start < pos:
                raise SpliceError(
                    f"cannot splice {', '.join(edit.expect)} into {self.path}: it overlaps "
                    "another proposed symbol"
                )
            out.append(self.data[pos : edit.start])
            size += edit.start - pos
            out.append(edit.data)
            regions.append((edit, size, size + len(edit.data)))
            size += len(edit.data)
            pos = edit.end
        out.append(self.data[pos:])
        return b"".join(out), regions

    def check(
        self,
        result: bytes,
        regions: list[tuple[_Edit, int, int]],
        replaced: set[str],
    ) -> tuple[Symbol, ...]:
        """Verify the result (see the module docstring); its symbols when it passes."""
        path = self.path
        if self.clean:
            problem = _problem(self.language, result)
            if problem is not None:
                edit, reason = self.culprit(regions, problem)
                raise SpliceError(
                    f"splicing {', '.join(edit.expect)} into {path} breaks its syntax: {reason}"
                )
        after = _extract(path, result).symbols
        new_by_name = {s.name: s for s in after}
        for edit, begin, end in regions:
            for name in edit.expect:
                sym = new_by_name.get(name)
                if sym is None or not (begin <= sym.start and sym.end <= end):
                    raise SpliceError(
                        f"after splicing, {path} does not define {name} where its new text went"
                    )
        for sym in after:
            inside = [e for e, b, n in regions if b <= sym.start and sym.end <= n]
            allowed = {x for e in inside for x in (*e.expect, *e.maybe)}
            if inside and not any(sym.name == a or sym.name.startswith(a + ".") for a in allowed):
                culprit = inside[0].expect[0] if inside[0].expect else "a symbol"
                raise SpliceError(
                    f"the new text for {culprit} in {path} also defines {sym.name}; each "
                    "definition must be proposed on its own"
                )
            if not inside and sym.name not in self.by_name:
                raise SpliceError(f"splicing into {path} would rename an existing {sym.name}")
        owners = {o for e, _b, _n in regions for o in e.owners}
        gone = {
            s.name for s in self.symbols if s.name in replaced or self.inside_replaced(s, replaced)
        }
        for sym in self.symbols:
            if sym.name in gone:
                continue
            now = new_by_name.get(sym.name)
            if now is None:
                raise SpliceError(f"splicing into {path} would lose {sym.name}")
            if sym.name in owners:
                continue
            if result[now.start : now.end] != self.data[sym.start : sym.end]:
                raise SpliceError(
                    f"splicing into {path} would change {sym.name}, which was not proposed"
                )
        return after

    def inside_replaced(self, sym: Symbol, replaced: set[str]) -> bool:
        return any(_contains(self.by_name[name], sym) for name in replaced)

    def culprit(
        self, regions: list[tuple[_Edit, int, int]], reason: str | None
    ) -> tuple[_Edit, str]:
        """The first edit that breaks the syntax on its own (else the first edit)."""
        for edit, _begin, _end in regions:
            alone = self.data[: edit.start] + edit.data + self.data[edit.end :]
            problem = _problem(self.language, alone)
            if problem is not None:
                return edit, problem
        return regions[0][0], reason or "syntax error"


# --------------------------------------------------------------------------- public API


def _check_names(names: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        if not name or name == FILE_SYMBOL or any(not part for part in name.split(".")):
            raise ValueError(f"not a symbol name: {name!r}")
        if name in seen:
            raise ValueError(f"{name} is named twice")
        seen.add(name)
        out.append(name)
    return out


def splice(path: str, original: bytes, replacements: Sequence[Replacement]) -> SpliceResult:
    """Replace and insert the proposed symbols in `original` (the content of `path`).

    ValueError for a duplicate or malformed name or an empty text; SpliceError (exit code 5)
    when the result would not be safe (see the module docstring). Never writes anything.
    """
    _check_names(r.name for r in replacements)
    language = _grammar(path)
    if not replacements:
        return SpliceResult(original, (), (), {})
    return _Splicer(path, language, original).run(replacements)


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
    begin = _line_start(data, start, floor)
    line_end = _line_end(data, end)
    if data[begin:start].strip(_INDENT) or data[end:line_end].strip(_WS):
        return data[:start] + data[end:]  # shares a line with other code: only its bytes go
    stop = line_end + _break_length(data, line_end)
    below = stop
    while below < len(data):
        next_end = _line_end(data, below)
        if not _blank(data[below:next_end]):
            break
        below = next_end + _break_length(data, next_end)
    above = begin
    while above > floor:
        previous = _line_start(data, above - 1, floor)
        if not _blank(data[previous:above]):
            break
        above = previous
    has_before = bool(data[floor:above].strip(_WS))
    if below < len(data):
        next_indent = len(_leading_ws(data[below : _line_end(data, below)]))
        if has_before and next_indent < start - begin:
            return data[:above] + data[stop:]
        return data[:begin] + data[below:]
    if not has_before:
        return data[:above]
    if data.endswith(b"\n"):
        return data[:above]
    return data[: _line_end(data, above - 1)]  # it had no final newline: neither does the rest


def delete_symbols(path: str, original: bytes, names: Sequence[str]) -> bytes:
    """`original` without the named symbols' spans and the blank lines they leave.

    ValueError for an unknown or duplicate name; SpliceError when the rest would not parse
    (a Python class left with no body) or another symbol would change. A member named with
    its container is removed with it.
    """
    _check_names(names)
    language = _grammar(path)
    ext = _extract(path, original)
    by_name = {s.name: s for s in ext.symbols}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"{path} defines no {', '.join(unknown)}")
    targets = [by_name[n] for n in names]
    outer = {(t.start, t.end): t for t in targets if not any(_contains(o, t) for o in targets)}
    floor = len(_BOM) if original.startswith(_BOM) else 0
    data = original
    # From the end backwards: earlier spans stay valid, and each cut sees its real neighbours.
    for sym in sorted(outer.values(), key=lambda s: s.start, reverse=True):
        data = _cut(data, sym.start, sym.end, floor)
    label = ", ".join(names)
    if _problem(language, original) is None:
        problem = _problem(language, data)
        if problem is not None:
            raise SpliceError(f"deleting {label} from {path} breaks its syntax: {problem}")
    # Survivors are compared in source order, not by name: deleting `f` renames `f#2` to `f`.
    survivors = [
        s for s in ext.symbols if not any(t == s or _contains(t, s) for t in outer.values())
    ]
    remaining = _extract(path, data).symbols
    if [_plain(s.name) for s in survivors] != [_plain(s.name) for s in remaining]:
        lost = {_plain(s.name) for s in survivors} - {_plain(s.name) for s in remaining}
        what = ", ".join(sorted(lost)) or "the other symbols"
        raise SpliceError(f"deleting {label} from {path} would also remove or rename {what}")
    for sym, now in zip(survivors, remaining, strict=True):
        holds = any(_contains(sym, t) for t in outer.values())
        if not holds and data[now.start : now.end] != original[sym.start : sym.end]:
            raise SpliceError(f"deleting {label} from {path} would change {sym.name}")
    return data


def whole_file_symbols(
    path: str, proposal: bytes, *, original: bytes | None = None
) -> list[Replacement]:
    """The symbols a whole-file proposal defines, as Replacements in source order.

    Without `original`: every top-level symbol and every member (splice lets a container's
    text win over its members', so this amounts to replacing whole top-level definitions).
    With `original` (recommended for the fallback): a container that already exists in the
    original is broken up into its members, so members the proposal left out (an elided
    "# ... rest unchanged") are kept rather than deleted by omission; new containers come
    whole. Each text keeps its first line's indentation; `after` is the previous sibling in
    the proposal, so new symbols land where the model put them. Rust members of an impl block
    come wrapped in their `impl … { }` header, so splice picks the same impl. The caller still
    has to refuse texts with elision markers (tinymem.reply.find_elisions).
    """
    language = _grammar(path)
    symbols = _extract(path, proposal).symbols
    known = None if original is None else {s.name for s in _extract(path, original).symbols}
    floor = len(_BOM) if proposal.startswith(_BOM) else 0
    root = _root(language, proposal) if language == "rust" else None

    def parent_of(sym: Symbol) -> Symbol | None:
        holders = [s for s in symbols if _contains(s, sym)]
        return max(holders, key=lambda s: s.start) if holders else None

    children: dict[Symbol | None, list[Symbol]] = {}
    for sym in symbols:
        children.setdefault(parent_of(sym), []).append(sym)

    def text_of(sym: Symbol) -> bytes:
        begin = _line_start(proposal, sym.start, floor)
        if proposal[begin : sym.start].strip(_INDENT):
            begin = sym.start
        text = proposal[begin : sym.end]
        if root is not None and begin < sym.start:
            node: Node | None = root
            header = None
            while node is not None:
                body = node.child_by_field_name("body") if node.type == "impl_item" else None
                if body is not None:
                    header = proposal[node.start_byte : body.start_byte].strip(_WS)
                node = next(
                    (c for c in node.children if c.start_byte <= sym.start < c.end_byte), None
                )
            if header is not None:
                text = header + b" {\n" + text + b"\n}"
        return text

    out: list[Replacement] = []

    def emit(level: list[Symbol]) -> None:
        previous: str | None = None
        for sym in level:
            kids = children.get(sym, [])
            if known is not None and sym.name in known and kids:
                emit(kids)
            else:
                out.append(Replacement(sym.name, text_of(sym), previous))
                if known is None and kids:
                    emit(kids)
            previous = sym.name

    emit(children.get(None, []))
    return out
