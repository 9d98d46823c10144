"""Parity for a file tm reads no structure in (TOML, JSON, YAML, a Dockerfile, Markdown, a
.vue or .rake file: no grammar, or no definitions the fallback can read).

A code block for such a file can only be taken as the whole file, and small models answer
"change `pyproject.toml`" with the two lines that change: taken whole, that cuts an 86-line
file to 2. The file's lines are the only evidence there is, so the rule is the grammar
languages' tree-collapse rule on lines: a block with fewer than half of the file's non-blank
lines is no whole file (a small file rewritten whole, or a new one, passes). Nor is a block
that is no JSON (TOML) document where the file is one: `"dependencies": {...}` given for a
package.json is a fragment whatever its size. The user is told what to ask for instead: the
whole file, or the change as a SEARCH/REPLACE block or unified diff, which tm applies to the
file's own lines.

Between half and all of the file's lines, a block may be the whole file with lines removed
(four requirements given as two): the lines of the file the block has nowhere are a deletion,
named in the proposal and written only with `--allow-delete`, as `statements.py` does for
the grammar languages. A block with at least as many lines (a rewrite, a version bump) is
written as given.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from collections.abc import Callable

from tinymem.textlist import shortened

__all__ = ["collapsed_text", "left_out", "left_out_note"]

_ASK_AGAIN = (
    "ask again for the whole file, or for the change as a SEARCH/REPLACE block or unified diff"
)


def _json(data: bytes) -> object:
    return json.loads(data)


def _toml(data: bytes) -> object:
    return tomllib.loads(data.decode("utf-8"))


# Documents a standard-library parser reads: a block that is none where the file is one is
# no whole file. (JSON with comments, a tsconfig.json often, does not parse: not judged.)
_PARSERS: dict[str, tuple[str, Callable[[bytes], object]]] = {
    ".json": ("JSON", _json),
    ".toml": ("TOML", _toml),
}


def _nonblank(data: bytes) -> list[bytes]:
    return [line.strip() for line in data.splitlines() if line.strip()]


def _parses(parse: Callable[[bytes], object], data: bytes) -> bool:
    try:
        parse(data)
    except (ValueError, UnicodeDecodeError):  # JSONDecodeError, TOMLDecodeError
        return False
    return True


def _not_a_document(path: str, before: bytes, after: bytes) -> str | None:
    suffix = path[path.rfind(".") :].lower() if "." in path.rsplit("/", 1)[-1] else ""
    known = _PARSERS.get(suffix)
    if known is None:
        return None
    name, parse = known
    if not _parses(parse, before) or _parses(parse, after):
        return None
    return (
        f"the block is no {name} document where {path} is one: tm reads no definitions in this"
        " file, so a block for it replaces the whole file, and this one would cut it to a"
        f" fragment; {_ASK_AGAIN}"
    )


def collapsed_text(path: str, before: bytes, after: bytes) -> str | None:
    """Why `after`, a block given for the whole of `path` (whose text is `before`), is no
    whole file; None when it may be one."""
    broken = _not_a_document(path, before, after)
    if broken is not None:
        return broken
    old, new = len(_nonblank(before)), len(_nonblank(after))
    if new * 2 >= old:
        return None
    return (
        f"the block has {new} non-blank {'line' if new == 1 else 'lines'} where {path} has"
        f" {old}: tm reads no definitions in this file, so a block for it replaces the whole"
        f" file, and this one would cut it to a fragment; {_ASK_AGAIN}"
    )


def left_out(before: bytes, after: bytes) -> list[str]:
    """The non-blank lines of `before` (stripped) that `after`, a block with fewer non-blank
    lines, has nowhere (counted as a multiset: a line the file has twice and the block once
    is left out once). Empty when the block has at least as many lines as the file."""
    old, new = _nonblank(before), _nonblank(after)
    if len(new) >= len(old):
        return []
    spare = Counter(new)
    out: list[str] = []
    for line in old:
        if spare[line]:
            spare[line] -= 1
        else:
            out.append(line.decode("utf-8", "replace"))
    return out


def left_out_note(path: str, lines: list[str]) -> str:
    """What a block with fewer lines than the file removes, for the proposal and Gate A."""
    shown = shortened([f"`{line[:60]}`" for line in lines], 4)
    count = f"{len(lines)} {'line' if len(lines) == 1 else 'lines'}"
    return (
        f"the block leaves out {count} of {path} ({shown}): tm reads no definitions in"
        " this file, so written whole it removes them"
    )
