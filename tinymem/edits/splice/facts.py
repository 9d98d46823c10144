"""Facts about the file a splice writes into: its tree, indentation unit, gaps, items."""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

from tree_sitter import Node

from tinymem.edits.splice.lines import (
    BOM,
    INDENT,
    WS,
    contains,
    content_end,
    eol_of,
    is_blank,
    leading_ws,
    start_of_line,
)
from tinymem.edits.splice.syntax import file_symbols, parse_root, syntax_problem
from tinymem.symbols import Extraction, Symbol

_DEFAULT_UNIT: dict[str, bytes] = {
    "python": b"    ",
    "go": b"\t",
    "javascript": b"  ",
    "typescript": b"  ",
    "tsx": b"  ",
    "ruby": b"  ",
}

# Kinds left out when measuring the blank lines between definitions: `A = 1\nB = 2` runs of
# constants say nothing about how functions are separated.
_GAPLESS_KINDS = frozenset({"constant", "variable"})


class FileFacts:
    """What a splice knows about the file it writes into, computed once, on demand."""

    def __init__(self, path: str, language: str, data: bytes) -> None:
        self.path = path
        self.language = language
        self.data = data
        self.ext: Extraction = file_symbols(path, data)
        self.symbols = self.ext.symbols
        self.by_name = {s.name: s for s in self.symbols}
        self.eol = eol_of(data)
        self.floor = len(BOM) if data.startswith(BOM) else 0
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
            self._root = parse_root(self.language, self.data)
        return self._root

    @property
    def clean(self) -> bool:
        if self._clean is None:
            self._clean = syntax_problem(self.language, self.data) is None
        return self._clean

    def next_key(self) -> tuple[int, ...]:
        self._seq += 1
        return (self._seq,)

    def indent_of(self, pos: int) -> tuple[bytes, bool]:
        """(indentation of the line holding pos, whether only that indentation precedes pos)."""
        begin = start_of_line(self.data, pos, self.floor)
        prefix = self.data[begin:pos]
        if not prefix.strip(INDENT):
            return prefix, True
        return leading_ws(prefix), False

    def unit(self) -> bytes:
        """One indentation level as the file writes it (the commonest step between lines)."""
        if self._unit is None:
            steps: Counter[int] = Counter()
            tabs = spaces = previous = 0
            for line in self.data.split(b"\n"):
                if is_blank(line):
                    continue
                ws = leading_ws(line)
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
            if b.start < a.end:
                continue  # two names of one definition (`a.x = a.y = function …`)
            between = self.data[a.end : b.start]
            if not between.strip(WS):
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
                return max(content_end(self.data, end, start), sym.end)
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
                return head.split(b"{", 1)[0].strip(WS).decode("utf-8", "replace") or None
        return None

    def node_with_body(self, sym: Symbol) -> Node | None:
        """The outermost syntax node inside `sym`'s span that has a `body` field."""
        node: Node | None = self.root
        probe = max(sym.end - 1, sym.start)
        while node is not None:
            if (
                node.start_byte >= sym.start
                # a comment node keeps its trailing blanks, the span does not
                and content_end(self.data, node.end_byte, node.start_byte) <= sym.end
                and node.child_by_field_name("body") is not None
            ):
                return node
            node = next((c for c in node.children if c.start_byte <= probe < c.end_byte), None)
        return None

    def ancestors(self, sym: Symbol) -> tuple[str, ...]:
        return tuple(s.name for s in self.symbols if contains(s, sym))

    def around(self, start: int, end: int) -> tuple[str, ...]:
        """Symbols whose span holds [start, end) strictly inside."""
        return tuple(s.name for s in self.symbols if s.start < start and end < s.end)

    def with_ancestors(self, name: str) -> tuple[str, ...]:
        sym = self.by_name.get(name)
        return () if sym is None else (sym.name, *self.ancestors(sym))
