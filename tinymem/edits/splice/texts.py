"""Definition texts in canonical form, and how they are re-indented for a place in a file."""

from __future__ import annotations

from dataclasses import dataclass

from tinymem.edits.splice.lines import BOM, WS, is_blank, leading_ws, start_of_line
from tinymem.edits.splice.syntax import string_rows, syntax_problem


@dataclass
class Text:
    """A definition text in canonical form: LF line breaks, first line at column 0, every
    `shift` line indented relative to column 0. Lines with `shift` False (blank lines, lines
    inside multi-line strings, lines less indented than the text's own base) are kept
    byte-for-byte wherever the text goes."""

    lines: list[bytes]
    shift: list[bool]

    def joined(self) -> bytes:
        return b"\n".join(self.lines)

    def unit(self) -> bytes | None:
        """One indentation level as this text writes it: a tab, or the widest of 8, 4, 3, 2
        spaces that the indentation of at least four in five of its moved lines is a multiple
        of (hanging indents and aligned continuations are the rest). None: no indented line,
        tabs mixed with spaces, or no such width."""
        indents = [leading_ws(line) for line, s in zip(self.lines, self.shift, strict=True) if s]
        indents = [ws for ws in indents if ws]
        if not indents:
            return None
        if all(ws.strip(b"\t") == b"" for ws in indents):
            return b"\t"
        if any(b"\t" in ws for ws in indents):
            return None
        widths = [len(ws) for ws in indents]
        for unit in (8, 4, 3, 2):
            if unit <= min(widths) and sum(w % unit == 0 for w in widths) * 5 >= len(widths) * 4:
                return b" " * unit
        return None

    def in_unit(self, unit: bytes) -> Text:
        """The same text with its indentation levels written in `unit` (the file's): a method
        indented with two spaces, or tabs, goes into a four-space file with four. Widths that
        are not whole levels (aligned continuation lines) are scaled in proportion."""
        own = self.unit()
        if own is None or own == unit:
            return self
        lines = [self.lines[0]]
        for line, shift in zip(self.lines[1:], self.shift[1:], strict=True):
            ws = leading_ws(line)
            if not shift or not ws:
                lines.append(line)
                continue
            if own == b"\t":  # spaces after the tabs align, they are not a level
                levels, extra = len(ws) - len(ws.lstrip(b"\t")), len(ws.lstrip(b"\t"))
            else:
                levels, rest = divmod(len(ws), len(own))
                extra = rest if unit == b"\t" else rest * len(unit) // len(own)
            new = unit * levels + b" " * extra
            lines.append(new + line[len(ws) :])
        return Text(lines, list(self.shift))

    def placed(self, indent: bytes, eol: bytes) -> bytes:
        """The text for a spot whose first line already sits at `indent`."""
        out = [self.lines[0]]
        out.extend(
            indent + line if shift else line
            for line, shift in zip(self.lines[1:], self.shift[1:], strict=True)
        )
        return eol.join(out)


def prepare(language: str, raw: bytes, hint: bytes, name: str) -> Text:
    """Normalise a proposed text to canonical form.

    The text's base indentation is its first line's. One ambiguity: a first line at column 0
    followed by lines that all start with `hint` (the indentation of the spot it goes to) is
    either a dedented text whose body happens to be that deep, or a span cut from its file the
    way `extract` cuts spans (the first line's indentation left before the span). Both read
    the same in brace languages, where the cut reading changes nothing, so it is taken; in
    Python the reading that parses is taken, the cut one when both do.
    """
    text = raw[len(BOM) :] if raw.startswith(BOM) else raw
    lines = text.replace(b"\r\n", b"\n").split(b"\n")
    while lines and is_blank(lines[0]):
        lines.pop(0)
    while lines and is_blank(lines[-1]):
        lines.pop()
    if not lines:
        raise ValueError(f"the new text for {name} is empty; use delete_symbols to delete")
    lines[-1] = lines[-1].rstrip(WS)
    literal = string_rows(language, b"\n".join(lines))
    movable = [i > 0 and i not in literal and not is_blank(line) for i, line in enumerate(lines)]

    base = leading_ws(lines[0])
    dedented = [lines[0][len(base) :]]
    dedented_shift = [False]
    for i, line in enumerate(lines[1:], 1):
        if movable[i] and line.startswith(base):
            dedented.append(line[len(base) :])
            dedented_shift.append(True)
        else:
            dedented.append(line)
            dedented_shift.append(False)
    as_written = Text(dedented, dedented_shift)

    if base or not hint or len(lines) == 1:
        return as_written
    if not all(line.startswith(hint) for i, line in enumerate(lines) if movable[i]):
        return as_written
    cut = Text(
        [line[len(hint) :] if movable[i] else line for i, line in enumerate(lines)],
        list(movable),
    )
    if cut.lines == as_written.lines or language != "python":
        return cut
    if syntax_problem(language, cut.joined()) is None or syntax_problem(
        language, as_written.joined()
    ):
        return cut
    return as_written


def sub_text(language: str, src: bytes, start: int, end: int, name: str) -> Text:
    """The canonical text of src[start:end] (an unwrapped member), with its line's indent."""
    begin = start_of_line(src, start, 0)
    if src[begin:start].strip(WS):
        begin = start
    return prepare(language, src[begin:end], b"", name)
