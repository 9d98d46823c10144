"""What the splicer takes and gives, and the one error it raises."""

from __future__ import annotations

from dataclasses import dataclass, field

from tinymem.errors import TinymemError


class SpliceError(TinymemError):
    """The proposed symbols cannot be spliced safely; reported as a Gate A failure."""

    exit_code = 5


@dataclass(frozen=True)
class Replacement:
    """One proposed symbol.

    `name` is the qualified name as `tinymem.symbols` produces it ("f", "Client.get").
    `text` is the complete definition: dedented to column 0, or indented as it would sit in
    its container (the first line included or not, as `extract` spans are cut), with any line
    endings. `after` optionally names the symbol the new one should follow (used only when the
    name is new).
    """

    name: str
    text: bytes
    after: str | None = None


@dataclass(frozen=True)
class SpliceResult:
    data: bytes  # the new file content
    replaced: tuple[str, ...]  # names whose existing span was replaced
    added: tuple[str, ...]  # names inserted as new symbols
    placements: dict[str, str]  # name -> where it went, for humans
    # Original symbols the result no longer defines: members a replaced container's new text
    # left out. Empty unless a container was replaced; the caller decides whether to allow it.
    removed: tuple[str, ...] = ()
    # Replaced names whose new text left out the comments or decorators above them, which the
    # splice kept from the file (prefix.py): name -> ("comments", "decorators").
    kept: dict[str, tuple[str, ...]] = field(default_factory=dict)
