"""What sits above a definition: its comment block and its decorators / attributes.

A symbol's span starts at its leading comments (a licence header with no blank line under it,
`///` docs, Javadoc) and decorators (`@setupmethod`, `#[cold]`, `#[cfg(backtrace)]`,
`@Override`, `[Obsolete]`). Models rewrite a definition from its `def` / `fn` line and leave
those out, as the system prompt lets them ("whatever you omit is kept unchanged"); replacing
the whole span with such a text deleted them. The splice keeps each part the new text does
not give: the file's comments when it has none, the file's decorators when it has none.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Prefix", "keep_prefix", "prefix_of"]

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
    `old`'s prefix it leaves out, and what was kept ("comments", "decorators")."""
    was, now = prefix_of(language, old), prefix_of(language, new)
    if not (was.ordered and now.ordered) or not (was.has_comments or was.has_decorators):
        return new, []
    kept: list[str] = []
    if was.has_decorators and not now.has_decorators:
        at = now.decorators  # after the new text's own comments, before its definition line
        new = new[:at] + old[was.decorators : was.core] + new[at:]
        kept.append("decorators")
    if was.has_comments and not now.has_comments:
        new = old[: was.decorators] + new
        kept.append("comments")
    return new, kept
