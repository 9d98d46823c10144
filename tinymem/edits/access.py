"""Access labels (C++ `public:` / `private:`, Ruby's bare `private`) a block writes above a new
member: the splice places a new member after the member the block gives it after, else in the
public part of its container (`splice/place.py`), and never reads the block's label lines
(they are not definitions). A member the block puts under a label that placement would not
honour is refused, rather than written with another access."""

from __future__ import annotations

import re

from tinymem.proposalrecords import Proposal

__all__ = ["access_problem"]

# An access label line that governs the members below it, as a block writes it.
_LABEL_LINES = {
    "cpp": re.compile(rb"(public|private|protected)\b[\w \t]*:(?!:)\s*(?://.*)?"),
    "ruby": re.compile(rb"(public|private|protected)\s*(?:#.*)?"),
}
_SUFFIX = re.compile(r"#\d+$")


def access_problem(p: Proposal, language: str, texts: dict[str, bytes], block: bytes) -> str | None:
    """Why a new member cannot go where the block puts it, or None.

    The splice never reads the block's own label lines (they are not definitions): it puts a
    new member after the member the block gives it after, else in the public part of its
    container (`splice/place.py`). A member the block writes under a label that placement
    would not honour is refused here, rather than written with another access."""
    pattern = _LABEL_LINES.get(language)
    if pattern is None:
        return None
    lines = block.split(b"\n")
    names = [e.symbol for e in p.entities]
    for e in p.entities:
        text = texts.get(e.symbol)
        if e.op != "add" or "." not in e.symbol or text is None:
            continue
        if any(e.symbol.startswith(name + ".") for name in names):
            continue  # its container's new text is written whole, label lines and all
        row = _row_of(lines, text)
        found = None if row is None else _label_above(lines, row, pattern)
        if found is None:
            continue
        label, label_row = found
        assert row is not None
        shown = label.decode("utf-8", "replace")
        if e.after is not None:
            leaf = _SUFFIX.sub("", e.after.rsplit(".", 1)[-1])
            between = b"\n".join(lines[label_row + 1 : row])
            if re.search(rb"(?<![\w$])" + re.escape(leaf.encode()) + rb"(?![\w$?!])", between):
                continue  # the member it follows is under the same label: it goes after it
            return (
                f"the block puts {e.symbol} under `{shown}`, below {e.after}, which it shows"
                f" above that label; tm adds a new member right after the member it follows,"
                f" so it would not be under `{shown}`: give it right after a member of that part"
            )
        if label.split()[0].rstrip(b":") != b"public":
            return (
                f"the block puts {e.symbol} under `{shown}`; tm adds a new member that follows"
                " no member of the block to the public part of its class: give it right after"
                " a member of that part"
            )
    return None


def _row_of(lines: list[bytes], text: bytes) -> int | None:
    """The row of `lines` where `text` (a definition of the block, normalised) begins."""
    wanted = [line.strip() for line in text.split(b"\n") if line.strip()][:3]
    if not wanted:
        return None
    for row, line in enumerate(lines):
        if line.strip() != wanted[0]:
            continue
        rest = [line.strip() for line in lines[row:] if line.strip()][: len(wanted)]
        if rest == wanted:
            return row
    return None


def _label_above(
    lines: list[bytes], row: int, pattern: re.Pattern[bytes]
) -> tuple[bytes, int] | None:
    """The access label governing the line at `row`: the nearest above it, before a line
    less indented than it (its container's header) that is not a label."""
    indent = len(lines[row]) - len(lines[row].lstrip())
    for above in range(row - 1, -1, -1):
        line = lines[above]
        stripped = line.strip()
        depth = len(line) - len(line.lstrip())
        if depth <= indent and pattern.fullmatch(stripped):
            return stripped, above
        if stripped and depth < indent and stripped != "⋮".encode():
            return None
    return None
