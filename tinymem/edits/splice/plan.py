"""A splice plan: the edits (replacements and insertions) and where new symbols went."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tinymem.edits.splice.lines import WS
from tinymem.edits.splice.texts import Text

_SPACES = re.compile(rb"\s+")


@dataclass
class Edit:
    start: int  # original coordinates; start == end for an insertion
    end: int
    data: bytes
    key: tuple[int, ...]  # order among insertions at one position
    expect: tuple[str, ...]  # names that must be defined inside the new bytes
    maybe: tuple[str, ...] = ()  # contained names: inside -> replaced, absent -> removed
    owners: tuple[str, ...] = ()  # original symbols whose text the edit changes (containers)
    # Indentation width of an insertion: at one position a deeper insertion goes first, so the
    # new member of an inner class does not land after (in Python: inside) an outer one's.
    depth: int = 0


@dataclass
class Point:
    """Where a new symbol went, so a later one can follow it (`after` naming a new symbol)."""

    pos: int
    key: tuple[int, ...]
    indent: bytes
    gap: int
    top: bool
    parent: str | None = None  # the container of a member


@dataclass
class NewImpl:
    pos: int
    key: tuple[int, ...]
    header: bytes
    members: list[tuple[str, Text]]


@dataclass
class Plan:
    edits: list[Edit] = field(default_factory=list)
    placements: dict[str, str] = field(default_factory=dict)
    points: dict[str, Point] = field(default_factory=dict)
    impls: dict[tuple[str, bytes], NewImpl] = field(default_factory=dict)
    kept: dict[str, tuple[str, ...]] = field(default_factory=dict)  # see SpliceResult.kept


def norm_header(header: bytes) -> bytes:
    return _SPACES.sub(b" ", header.strip(WS))


def describe_header(header: bytes) -> str:
    return norm_header(header).decode("utf-8", "replace")
