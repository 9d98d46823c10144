"""What sits above a definition: its comment block and its decorators / attributes.

A symbol's span starts at its leading comments (a licence header with no blank line under it,
`///` docs, Javadoc) and decorators (`@setupmethod`, `#[cold]`, `#[cfg(backtrace)]`,
`@Override`, `[Obsolete]`). Models rewrite a definition from its `def` / `fn` line and leave
those out, as the system prompt lets them ("whatever you omit is kept unchanged"); replacing
the whole span with such a text deleted them. The splice keeps each part the new text does
not give: the file's comments when it has none, the file's decorators when it has none, and
the modifiers on the definition's own line that it does not state (splice/modifiers.py: the
visibility, `export`, `pub`, `public`, ..., whose loss unexported `export function parse`
and broke its importers; `static`, `async`, `virtual`, a C++ `template <...>` line).
"""

from __future__ import annotations

from dataclasses import dataclass

from tinymem.edits.splice.modifiers import keep_modifiers, parameter_list

__all__ = ["Prefix", "keep_line_modifiers", "keep_prefix", "parameters_of", "prefix_of"]

_LINE_COMMENTS: dict[str, tuple[bytes, ...]] = {
    "python": (b"#",),
    "ruby": (b"#",),
}
_C_COMMENTS = (b"//", b"/*")
_DECORATORS: dict[str, tuple[bytes, ...]] = {
    "python": (b"@",),
    "java": (b"@",),
    "javascript": (b"@",),
    "typescript": (b"@",),
    "tsx": (b"@",),
    "rust": (b"#[",),
    "csharp": (b"[",),
    "cpp": (b"[[",),
}
_OPEN, _CLOSE = b"([{", b")]}"


@dataclass(frozen=True)
class Prefix:
    """Offsets into a definition's text (each at a line's first non-blank byte): its
    decorators start at `decorators`, the definition itself at `core`. [0, decorators) is its
    comment block. `ordered` is False when they interleave (no part is then kept apart)."""

    decorators: int
    core: int
    ordered: bool = True

    @property
    def has_comments(self) -> bool:
        return self.decorators > 0

    @property
    def has_decorators(self) -> bool:
        return self.core > self.decorators


def _comment_starts(language: str) -> tuple[bytes, ...]:
    return _LINE_COMMENTS.get(language, _C_COMMENTS)


def prefix_of(language: str, text: bytes) -> Prefix:
    """Where the comment block and the decorators above the definition in `text` end. The
    first line of `text` starts at its first non-blank byte, as a symbol's span does."""
    comments, decorators = _comment_starts(language), _DECORATORS.get(language, ())
    pos = 0
    first_decorator: int | None = None
    ordered = True
    in_block = False  # inside a /* ... */ comment
    depth = 0  # open brackets of a decorator spanning lines
    while pos < len(text):
        end = text.find(b"\n", pos)
        end = len(text) if end < 0 else end + 1
        line = text[pos:end]
        body = line.strip()
        start = pos + len(line) - len(line.lstrip())
        if depth > 0:
            depth = max(0, depth + _balance(body))
        elif in_block:
            in_block = b"*/" not in body
        elif not body:
            break  # a blank line: what is above it is not this definition's
        elif decorators and body.startswith(decorators) and not body.startswith(b"#!["):
            if _inline_end(language, body) > 0:
                # Attributes and the definition on one line (`@Override public String
                # toString() {`): the line is the definition's.
                return Prefix(start if first_decorator is None else first_decorator, start, ordered)
            if first_decorator is None:
                first_decorator = start
            depth = max(0, _balance(body))
        elif body.startswith(comments):
            if first_decorator is not None:
                ordered = False  # a comment below a decorator
            in_block = body.startswith(b"/*") and b"*/" not in body[2:]
        else:
            return Prefix(start if first_decorator is None else first_decorator, start, ordered)
        pos = end
    return Prefix(0, 0, False)  # no definition line found: nothing to tell apart


def _balance(line: bytes) -> int:
    return sum(line.count(bytes([c])) for c in _OPEN) - sum(line.count(bytes([c])) for c in _CLOSE)


def keep_prefix(language: str, old: bytes, new: bytes) -> tuple[bytes, list[str]]:
    """`new` (a definition's replacement, placed as the file writes it) with the parts of
    `old`'s prefix it leaves out, and what was kept ("comments", "decorators", and the
    visibility in backticks: "`export`")."""
    was, now = prefix_of(language, old), prefix_of(language, new)
    if not (was.ordered and now.ordered):
        return new, []
    kept: list[str] = []
    old_line, new_line = old[was.core :], new[now.core :]
    # Attributes on the definition's own line (`[HttpGet] public IActionResult Get()`).
    old_inline, new_inline = _inline_end(language, old_line), _inline_end(language, new_line)
    inline = (
        old_line[:old_inline] if old_inline and not new_inline and not now.has_decorators else b""
    )
    at = now.core + new_inline
    line, modifiers = keep_modifiers(language, old_line[old_inline:], new[at:])
    if inline or modifiers:  # nothing above the definition line moves
        new = new[: now.core] + inline + new[now.core : at] + line
    if (was.has_decorators and not now.has_decorators) or inline:
        if was.has_decorators and not now.has_decorators:
            at = now.decorators  # after the new text's own comments, before its definition
            new = new[:at] + old[was.decorators : was.core] + new[at:]
        kept.append("decorators")
    if was.has_comments and not now.has_comments:
        new = old[: was.decorators] + new
        kept.append("comments")
    kept += [f"`{word}`" for word in modifiers]
    return new, kept


def keep_line_modifiers(language: str, old: bytes, new: bytes) -> tuple[bytes, list[str]]:
    """Only the modifiers of `keep_prefix`: for a member of a container the block gives
    whole, whose comments and decorators the block states with the container."""
    was, now = prefix_of(language, old), prefix_of(language, new)
    if not (was.ordered and now.ordered):
        return new, []
    old_line = old[was.core :]
    at = now.core + _inline_end(language, new[now.core :])
    line, words = keep_modifiers(language, old_line[_inline_end(language, old_line) :], new[at:])
    return (new[:at] + line, [f"`{w}`" for w in words]) if words else (new, [])


def parameters_of(language: str, text: bytes) -> bytes | None:
    """The parameter list of the definition in `text` (a symbol's span), past its comments
    and attributes (whose own parentheses are not it), whitespace normalised."""
    found = prefix_of(language, text)
    line = text[found.core :]
    return parameter_list(line[_inline_end(language, line) :])


def _inline_end(language: str, line: bytes) -> int:
    """Where the attributes that open a definition's line end, when the definition follows
    them on that line (`@Override public ...`, `[HttpGet] public ...`, `#[inline] pub fn`):
    0 when the line has none, or holds attributes only."""
    markers = _DECORATORS.get(language, ())
    if not markers or language == "python":
        return 0
    pos = 0
    while line.startswith(markers, pos) and not line.startswith(b"#![", pos):
        end = _attribute_end(line, pos)
        if end is None:
            return 0
        while end < len(line) and line[end] in b" \t":
            end += 1
        if end >= len(line) or line[end] in b"\r\n" or line.startswith((b"//", b"/*"), end):
            return 0  # attributes alone on their line: decorator lines, not this one
        pos = end
    return pos


def _attribute_end(line: bytes, pos: int) -> int | None:
    """The end of the one attribute at `pos` on this line (None: it goes on past it)."""
    if line.startswith(b"@", pos):
        end = pos + 1
        while end < len(line) and (chr(line[end]).isalnum() or line[end] in b"_."):
            end += 1
        if not line.startswith(b"(", end):
            return end
        pos = end
    depth = 0
    for k in range(pos, len(line)):
        c = line[k]
        if c in b"\r\n":
            return None
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return k + 1
    return None
