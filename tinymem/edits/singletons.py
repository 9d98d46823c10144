"""Ruby singleton methods and their two spellings.

`def self.load` and a `def load` inside `class << self` define one thing, the class method
`load`; a plain `def load` elsewhere in the class defines another, the instance method. The
symbols of a file name all three after the class (`Loader.load`, `Loader.load#2`), and only
the head of `def self.load` says it is a singleton (`roles.py`), so a block written in the
other spelling than the file's read as an instance method: it was added beside the class
method it meant to change, or a second class method was added beside the first.

Here a definition inside `class << self` is read in the `def self.` spelling while it is
matched with the file's, and the text that changes a file's singleton method is written back
in the file's spelling. A block that gives as an instance method a name the file has only as
a class method is held: models drop `self.`, so which one it meant is not provable, and adding
it is a new method the request did not ask for. The reverse is not held: a block that writes
`def self.x` (or `def x` inside `class << self`) states a class method, which models rarely
add by mistake, and it is added beside the instance method `x` (rack's `Response.redirect`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from tinymem.edits.alignment import FileView, Target, leaf
from tinymem.edits.roles import SINGLETON, role
from tinymem.symbols import Symbol, language_for_path
from tinymem.symbols.treesitter import parse_root

__all__ = ["as_self", "crossed", "file_role", "in_file_spelling", "in_sclass"]

# The head of a method: its indentation, `def`, a receiver (`self.`, `Loader.`) or none.
_HEAD = re.compile(
    rb"^(?P<lead>[ \t]*def[ \t]+)(?P<receiver>(?:self|[A-Z]\w*(?:::[A-Z]\w*)*)[ \t]*\.[ \t]*)?",
    re.M,
)


@lru_cache(maxsize=32)
def _sclass_spans(data: bytes) -> tuple[tuple[int, int], ...]:
    """The byte spans of the `class << self` bodies of Ruby source `data`."""
    try:
        root = parse_root("ruby", data)
    except ValueError:
        return ()
    spans: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "singleton_class":
            value = node.child_by_field_name("value")
            if value is not None and value.type == "self":
                spans.append((node.start_byte, node.end_byte))
        stack.extend(node.named_children)
    return tuple(spans)


def in_sclass(language: str | None, data: bytes, offset: int) -> bool:
    """The Ruby definition at `offset` of `data` lies inside a `class << self`."""
    if language != "ruby":
        return False
    return any(start < offset < end for start, end in _sclass_spans(data))


def _head(text: bytes) -> re.Match[bytes] | None:
    """The `def` line of a definition's text (comments above it skipped)."""
    for line in _HEAD.finditer(text):
        return line
    return None


def as_self(text: bytes) -> bytes:
    """A definition given inside `class << self`, spelled `def self.name`."""
    head = _head(text)
    if head is None or head.group("receiver"):
        return text
    return text[: head.end()] + b"self." + text[head.end() :]


def _receiver(text: bytes) -> bytes | None:
    head = _head(text)
    return None if head is None else head.group("receiver")


def file_role(file: FileView, sym: Symbol, wanted: str | None) -> str | None:
    """The role of the file's `sym` as the block's `wanted` role reads it. A method inside the
    file's `class << self` is a singleton for a block that gives one (in either spelling);
    for a plain `def` of that name given alone it is what the block copied, its own text."""
    language = language_for_path(file.path)
    found = role(language, file.text(sym))
    if found is None and wanted == SINGLETON and in_sclass(language, file.data, sym.start):
        return SINGLETON
    return found


def crossed(
    language: str | None,
    item_role: str | None,
    candidates: Sequence[Symbol],
    roles: Sequence[str | None],
) -> str | None:
    """Why a Ruby method given as an instance method, where its class has a class method of
    that name and no instance one, is held instead of added beside it (module docstring)."""
    if language != "ruby" or not roles or not candidates or candidates[0].parent is None:
        return None
    name = leaf(candidates[0].name)
    owner = leaf(candidates[0].parent)
    if item_role is None and all(r == SINGLETON for r in roles):
        return (
            f"{owner} has `self.{name}` (a class method) and no instance method of that name;"
            f" the block gives an instance method `{name}`: ask again with `def self.{name}` to"
            f" change the class method (a new instance method of that name needs a unified diff)"
        )
    return None


def in_file_spelling(file: FileView, target: Target) -> Target:
    """A change of the file's Ruby singleton method written as the file spells it: `def
    self.load` keeps `self.`, a method inside `class << self` gets none."""
    sym = file.by_name.get(target.name)
    language = language_for_path(file.path)
    if target.op != "modify" or sym is None or language != "ruby":
        return target
    theirs = _receiver(file.text(sym))
    if theirs is None and not in_sclass(language, file.data, sym.start):
        return target  # an instance method: the block's text as given
    head = _head(target.text)
    if head is None or head.group("receiver") == theirs:
        return target
    start = head.start("receiver") if head.group("receiver") else head.end()
    text = target.text[:start] + (theirs or b"") + target.text[head.end() :]
    return Target(target.name, target.op, text, target.after)
