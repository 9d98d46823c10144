"""Turn raw definitions (spans + local names) into qualified, de-duplicated symbols.

Both the tree-sitter and the regex extractor produce `RawDef`s and share this step, so the
naming rules (qualification by lexical nesting, "#2" suffixes, which definitions count) are the
same whatever found the definitions.

Nesting is decided by span containment alone: after sorting by (start, -end), the enclosing
definition of each entry is the nearest one on a stack whose span contains it. That is cheap
(no tree walk) and, since spans come from syntax nodes, it equals the syntactic nesting.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tinymem.symbols.model import Symbol

# Pseudo-kinds, never emitted:
# SCOPE qualifies what it contains without being an entity (a Rust `impl` block);
# BLOCK hides what it contains (a lambda, an anonymous class): definitions inside function
# bodies are local, not entities of the file.
SCOPE = "@scope"
BLOCK = "@block"

# Entries of these kinds make everything inside them local (dropped).
_LOCAL_MAKERS = frozenset({"function", "method", BLOCK})


@dataclass(slots=True)
class RawDef:
    start: int
    end: int
    parts: tuple[str, ...]  # the local name, split into its qualifying components
    kind: str  # a symbol kind, SCOPE or BLOCK


@dataclass(slots=True)
class _Open:
    start: int
    end: int
    kind: str
    qualified: str | None  # None: dropped (local), so are its children
    parts: tuple[str, ...]


def assemble(raws: Iterable[RawDef], method_containers: frozenset[str]) -> tuple[Symbol, ...]:
    """Qualify, filter and de-duplicate `raws`; the result is sorted by (start, -end).

    - A definition nested in a function, method or BLOCK is local and dropped (with its
      children): only top-level definitions and members of types/namespaces are entities.
    - A "function" directly inside a kind of `method_containers` becomes a "method".
    - The qualified name is the enclosing qualified name (or a SCOPE's) + "." + local parts;
      a multi-part local name (`Foo::bar`, a Go receiver) makes the parent the name minus
      its last part, even when that parent is not defined in this file.
    - The second and later uses of a qualified name get "#2", "#3", ... in source order.
    """
    ordered = sorted(raws, key=lambda r: (r.start, -r.end))
    stack: list[_Open] = []
    seen: dict[str, int] = {}
    out: list[Symbol] = []
    for raw in ordered:
        # Equal spans are siblings (two names of one Go const spec), never parent and child.
        while stack and not (
            stack[-1].start <= raw.start
            and raw.end <= stack[-1].end
            and (stack[-1].start, stack[-1].end) != (raw.start, raw.end)
        ):
            stack.pop()
        enclosing = stack[-1] if stack else None
        dropped = enclosing is not None and (
            enclosing.qualified is None or enclosing.kind in _LOCAL_MAKERS
        )
        if dropped or raw.kind == BLOCK or not raw.parts:
            stack.append(_Open(raw.start, raw.end, raw.kind, None, ()))
            continue
        prefix = enclosing.parts if enclosing is not None else ()
        parts = prefix + raw.parts
        base = ".".join(parts)
        if raw.kind == SCOPE:
            stack.append(_Open(raw.start, raw.end, raw.kind, base, parts))
            continue
        kind = raw.kind
        if kind == "function" and enclosing is not None and enclosing.kind in method_containers:
            kind = "method"
        count = seen.get(base, 0) + 1
        seen[base] = count
        if count > 1:
            parts = (*parts[:-1], f"{parts[-1]}#{count}")
        qualified = ".".join(parts)
        parent = ".".join(parts[:-1]) if len(parts) > 1 else None
        out.append(Symbol(qualified, kind, raw.start, raw.end, parent))
        stack.append(_Open(raw.start, raw.end, kind, qualified, parts))
    return tuple(out)
