"""A whole-file proposal read as the symbols it defines (for elided or partial whole files), and
written in the file's own BOM and line endings (`in_file_form`)."""

from __future__ import annotations

import re

from tree_sitter import Node

from tinymem.edits.splice.lines import BOM, INDENT, WS, contains, eol_of, start_of_line
from tinymem.edits.splice.model import Replacement
from tinymem.edits.splice.syntax import file_symbols, grammar, parse_root
from tinymem.symbols import Symbol

_LONE_LF = re.compile(rb"(?<!\r)\n")


def in_file_form(proposal: bytes, original: bytes) -> bytes:
    """A whole-file proposal as it replaces `original`: with the file's BOM and line endings.
    A reply is read as UTF-8 with LF line ends, while git stores a file's CRLF (when no
    filter converts them) and its BOM as they are: written as the model gave it, every line
    of the file would change and the BOM would go."""
    if original.startswith(BOM) and not proposal.startswith(BOM):
        proposal = BOM + proposal
    if eol_of(original) == b"\r\n":
        proposal = _LONE_LF.sub(b"\r\n", proposal)
    return proposal


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
    has to refuse texts with elision markers (tinymem.edits.elisions.find_elisions).
    """
    language = grammar(path)
    symbols = file_symbols(path, proposal).symbols
    known = None if original is None else {s.name for s in file_symbols(path, original).symbols}
    floor = len(BOM) if proposal.startswith(BOM) else 0
    root = parse_root(language, proposal) if language == "rust" else None

    def parent_of(sym: Symbol) -> Symbol | None:
        holders = [s for s in symbols if contains(s, sym)]
        return max(holders, key=lambda s: s.start) if holders else None

    children: dict[Symbol | None, list[Symbol]] = {}
    for sym in symbols:
        children.setdefault(parent_of(sym), []).append(sym)

    def text_of(sym: Symbol) -> bytes:
        begin = start_of_line(proposal, sym.start, floor)
        if proposal[begin : sym.start].strip(INDENT):
            begin = sym.start
        text = proposal[begin : sym.end]
        if root is not None and begin < sym.start:
            node: Node | None = root
            header = None
            while node is not None:
                body = node.child_by_field_name("body") if node.type == "impl_item" else None
                if body is not None:
                    header = proposal[node.start_byte : body.start_byte].strip(WS)
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
