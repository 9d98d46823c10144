"""A nested function moved out of the function it was nested in: the reply gives both.

A block giving a function that the file has only nested (`nested.py`) is refused, naming the
enclosing function to ask for whole. When the reply also gives that enclosing function, and
its new text no longer defines a function of that name, the model has done just that: the
block's function is the one moved out to the top level (click's `_safecall` given without its
nested `wrapper`, and `wrapper` beside it at module level), and is added as a new definition.
The enclosing function's new text is looked for in the block itself and in the reply's other
code blocks for the same file or naming none (`Evidence.blocks`); a text that still has any
words that could define the function (`nested.may_define`, no parse: a comment or a string
counts) is no evidence, so the doubt keeps the refusal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tinymem.edits.alignment import plain
from tinymem.edits.nested import Nested, may_define
from tinymem.edits.normalise import Parsed, parse_block
from tinymem.symbols import language_for_path

__all__ = ["hoisted"]
_CALLABLE = frozenset({"function", "method"})


def _definitions(parsed: Parsed, enclosing: str) -> Iterable[bytes]:
    """The texts of `parsed` that define `enclosing` (a qualified name of the file): the same
    qualified name, or a tail of it (a method given without its class)."""
    wanted = plain(enclosing)
    for sym in parsed.symbols:
        name = plain(sym.name)
        if sym.kind in _CALLABLE and (wanted == name or wanted.endswith("." + name)):
            yield parsed.text[sym.start : sym.end]


def hoisted(
    path: str, name: str, local: Sequence[Nested], parsed: Parsed, blocks: Sequence[bytes]
) -> bool:
    """Whether the reply gives one of the functions that `local` (nested functions named
    `name`) are nested in, with a new text that no longer defines `name`: the block in
    `parsed` defining `name` is then that function moved out, not the nested one alone."""
    language = language_for_path(path)
    enclosing = {n.enclosing for n in local if n.enclosing is not None}
    if not enclosing:
        return False  # nested in no entity: nothing the reply could give instead
    readings = [parsed, *(parse_block(path, code) for code in blocks)]
    return any(
        not may_define(language, text, name)
        for reading in readings
        for around in enclosing
        for text in _definitions(reading, around)
    )
