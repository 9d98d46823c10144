"""The records of aligning a block with its file, and the file it is aligned with: names
without duplicate suffixes, definitions inside others, container headers and signatures
compared without what does not identify them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from tinymem.edits.normalise import container_headers
from tinymem.symbols import Symbol

__all__ = [
    "Alignment",
    "Evidence",
    "FileView",
    "Target",
    "header_key",
    "inside",
    "leaf",
    "outermost",
    "plain",
    "signature",
]

_SUFFIX = re.compile(r"#\d+(?=\.|$)")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Evidence:
    """What the request and the prompt say about which entity a block means."""

    qualified: frozenset[str] = frozenset()  # dotted names in the request: "Session.send"
    hydrated: frozenset[str] = frozenset()  # symbols of this file shown in this prompt
    # the code of the reply's blocks for this file or naming none (`hoists.py`)
    blocks: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class Target:
    """One entity the block changes: its qualified name in the file and its new text."""

    name: str
    op: str  # "modify" | "add"
    text: bytes  # the definition as the block gives it (normalised; any indentation)
    after: str | None = None  # for "add": the symbol it follows in the block


@dataclass
class Alignment:
    targets: list[Target] = field(default_factory=list)
    whole_file: bool = False  # the block gives every entity the file has
    problem: str | None = None  # why the normalised block does not parse
    blocked: str | None = None  # why it cannot be tied to entities (UNRESOLVED)
    method: str = "tree-sitter"  # how the block's definitions were found
    language: str | None = None
    notes: list[str] = field(default_factory=list)  # how the block was read
    # a whole file's lines outside every definition that the file has and the block not
    dropped: list[str] = field(default_factory=list)


def plain(name: str) -> str:
    """A qualified name without its "#2" duplicate suffixes."""
    return _SUFFIX.sub("", name)


def leaf(name: str) -> str:
    return plain(name).rsplit(".", 1)[-1]


class Span(Protocol):
    """Anything with a byte span: a block's Symbol, a State Map EntityRecord."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


def inside(outer: Span, inner: Span) -> bool:
    """`inner` lies within `outer` and is not `outer` itself."""
    return (
        outer.start <= inner.start
        and inner.end <= outer.end
        and (outer.start, outer.end) != (inner.start, inner.end)
    )


def outermost(symbols: tuple[Symbol, ...]) -> list[Symbol]:
    return [s for s in symbols if not any(inside(o, s) for o in symbols)]


_GENERICS = re.compile(r"<[^<>]*>")


def header_key(header: str) -> str:
    """A container header without generics, `where` clause, bases or body opener:
    `impl<C, E> Display for ContextError<C, E> where C: Display` -> `impl Display for
    ContextError`, `class Session(SessionRedirectMixin)` -> `class Session`."""
    text = header
    while True:
        stripped = _GENERICS.sub("", text)
        if stripped == text:
            break
        text = stripped
    for cut in (" where ", "(", ":", "{", " extends ", " implements "):
        text = text.split(cut, 1)[0]
    return _SPACES.sub(" ", text).strip()


def signature(text: bytes) -> str:
    """A definition's head, whitespace collapsed: attributes, decorators and what comes
    before its body (`{`, `=>`, or the `:` ending a Python def line)."""
    out: list[str] = []
    for line in text.decode("utf-8", "replace").split("\n"):
        stripped = line.strip()
        comment = stripped.startswith(("//", "#", "/*", "*")) and not stripped.startswith("#[")
        if not stripped or comment:
            continue
        out.append(stripped)
        if "{" in stripped or "=>" in stripped or stripped.endswith(":"):
            break
    head = " ".join(out).split("{", 1)[0].split("=>", 1)[0]
    return _SPACES.sub(" ", head).strip()


@dataclass
class FileView:
    """The file a block is aligned with: its symbols by name and its container headers."""

    path: str
    data: bytes
    symbols: tuple[Symbol, ...]

    def __post_init__(self) -> None:
        self.by_name = {s.name: s for s in self.symbols}

    def text(self, sym: Symbol) -> bytes:
        return self.data[sym.start : sym.end]

    def header_of(self, sym: Symbol) -> str | None:
        """The normalised header of the nearest container around `sym` (an impl block too)."""
        best: tuple[int, str] | None = None
        for start, (end, head) in container_headers(self.path, self.data).items():
            if start <= sym.start and sym.end <= end and (best is None or start > best[0]):
                best = (start, head)
        return None if best is None else best[1]
