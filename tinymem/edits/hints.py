"""What to do about a name several entities share, said only when it works.

A hint is tried before it is given: the evidence it suggests (a qualified name in the
request as `tm ask` reads it, the class line above the member, the signature as the file
has it) is run through the same choice (`choose.py`) and kept only when it leaves that one
candidate. `Cls.name` is no hint for overloads (they share it) nor for a member whose name
the request reader cuts short (`has_header?`, `#private`), and a C++ reader writes
`Cls::name`, which the request reader does not take: each of those once sent users round
in circles.
"""

from __future__ import annotations

from collections.abc import Callable

from tinymem.edits.alignment import FileView, leaf, plain, signature
from tinymem.hydration.relevance import Request
from tinymem.symbols import Symbol
from tinymem.textlist import shortened

__all__ = ["ONE_NAME", "ambiguity"]

# (qualified names of a request, the block's text, its container header) -> what is left
Decide = Callable[[frozenset[str], bytes, str | None], list[Symbol]]
_SHOWN = 3
# Said when every candidate is one member name (overloads, a getter and its setter): the
# class line decides nothing then (a repair round words its advice by it).
ONE_NAME = " (members of one name, told apart by their unchanged signature)"
_OWNERS = frozenset({"class", "struct", "interface", "trait", "enum", "union", "module"})


def ambiguity(
    short: str, path: str, candidates: list[Symbol], block: bytes, file: FileView, decide: Decide
) -> str:
    """The gate's reason for an ambiguous `short`: the candidates, then "; ask again …" with
    the hints that decide (a repair round keeps only the part before "; ask again": the
    model is told what to write, not what to type). `block` is the definition as the block
    gives it: asking again by name or class line, the model may well write it the same."""
    names = [c.name for c in candidates]
    shown = shortened(names, 6)
    head = f"`{short}` is ambiguous in {path}: it could be {shown}"
    if len({plain(n) for n in names}) == 1:
        head += ONE_NAME
    ways: list[str] = []
    keys = _by_request(candidates, block, decide)
    if keys:
        asks = " or ".join(f'`tm ask "… {k} …"`' for k in keys[:_SHOWN])
        ways.append(f"naming the one you mean as tm reads it ({asks})")
    lines = _by_class_line(candidates, file, block, decide)
    if lines:
        shown_lines = " or ".join(f"`{h}`" for h in lines[:_SHOWN])
        ways.append(f"with it inside its class, under its class line ({shown_lines})")
    signatures = _by_signature(candidates, file, decide)
    if signatures:
        sigs = ", ".join(f"`{s}`" for s in signatures[:_SHOWN])
        more = ", …" if len(signatures) > _SHOWN else ""
        ways.append(f"keeping the signature of the one you mean as the file has it ({sigs}{more})")
    # A diff's lines say where it goes: it needs no name at all.
    ways.append("for the change as a unified diff")
    return f"{head}; ask again " + ", or ".join(ways)


def _by_request(candidates: list[Symbol], block: bytes, decide: Decide) -> list[str]:
    """Per candidate, the shortest dotted name of it that, in a request as `tm ask` reads
    it, leaves that candidate alone; none unless every candidate has one."""
    out: list[str] = []
    for c in candidates:
        key = _request_key(c, block, decide)
        if key is None:
            return []
        out.append(key)
    return out


def _request_key(c: Symbol, text: bytes, decide: Decide) -> str | None:
    parts = plain(c.name).split(".")
    for n in range(2, len(parts) + 1):
        key = ".".join(parts[-n:])
        read = Request.parse(f"… {key} …").qualified
        if key not in read:
            return None  # the request reader cuts it short (`has_header?`): longer keys too
        if _decides(decide(read, text, None), c):
            return key
    return None


def _by_class_line(
    candidates: list[Symbol], file: FileView, block: bytes, decide: Decide
) -> list[str]:
    """Per candidate, the class line that, above the member in the block, leaves it alone:
    the block's header decides, and the class it names is the only one of its name (a class
    given in the block is anchored by its name first)."""
    out: list[str] = []
    for c in candidates:
        header = file.header_of(c)
        if header is None or not _decides(decide(frozenset(), block, header), c):
            return []
        if c.parent is not None:
            owner = leaf(c.parent)
            if sum(leaf(s.name) == owner for s in file.symbols if s.kind in _OWNERS) > 1:
                return []
        out.append(header)
    return out


def _by_signature(candidates: list[Symbol], file: FileView, decide: Decide) -> list[str]:
    """Per candidate, its signature, when a block keeping it leaves that candidate alone."""
    out: list[str] = []
    for c in candidates:
        own = file.text(c)
        if not _decides(decide(frozenset(), own, None), c):
            return []
        out.append(signature(own))
    return out


def _decides(left: list[Symbol], wanted: Symbol) -> bool:
    return [s.name for s in left] == [wanted.name]
