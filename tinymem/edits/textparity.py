"""Parity for a file tm reads no structure in (TOML, JSON, YAML, a Dockerfile, Markdown, a
.vue or .rake file: no grammar, or no definitions the fallback can read).

A code block for such a file can only be taken as the whole file, and small models answer
"change `pyproject.toml`" with the two lines that change: taken whole, that cuts an 86-line
file to 2. The file's lines are the only evidence there is, so the rule is the grammar
languages' tree-collapse rule on lines: a block with fewer than half of the file's non-blank
lines is no whole file (a small file rewritten whole, or a new one, passes). The user is
told what to ask for instead: the whole file, or the change as a SEARCH/REPLACE block or
unified diff, which tm applies to the file's own lines.
"""

from __future__ import annotations

__all__ = ["collapsed_text"]


def _lines(data: bytes) -> int:
    return sum(1 for line in data.splitlines() if line.strip())


def collapsed_text(path: str, before: bytes, after: bytes) -> str | None:
    """Why `after`, a block given for the whole of `path` (whose text is `before`), is no
    whole file; None when it may be one."""
    old, new = _lines(before), _lines(after)
    if new * 2 >= old:
        return None
    return (
        f"the block has {new} non-blank {'line' if new == 1 else 'lines'} where {path} has"
        f" {old}: tm reads no definitions in this file, so a block for it replaces the whole"
        " file, and this one would cut it to a fragment; ask again for the whole file, or for"
        " the change as a SEARCH/REPLACE block or unified diff"
    )
