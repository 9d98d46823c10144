"""What a whole new text of a file changes, entity by entity (for diffs and SEARCH/REPLACE).

A diff is applied to the State Map's text, which gives the file as the model meant it. That
result is turned back into entities: modified, added, removed. When splicing the modified and
added entities into the old text gives exactly the result, the edit is a "symbols" proposal
(later splices touch nothing else, whatever the user changed elsewhere in the file). When it
does not (an import, a module statement, a removed definition), it is a "whole-file"
proposal: it can only be written over the very text it was made from, and a removed
definition is an explicit deletion that needs `tm accept --allow-delete`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tinymem.edits.alignment import Target
from tinymem.edits.splice import Replacement, SpliceError, splice
from tinymem.symbols import extract

__all__ = ["FileChanges", "changes_between"]


@dataclass
class FileChanges:
    kind: str  # "symbols" | "whole-file"
    targets: list[Target] = field(default_factory=list)  # modify / add, with new texts
    removed: list[str] = field(default_factory=list)  # entities the new text no longer has
    texts: dict[str, bytes] = field(default_factory=dict)  # name -> text as in the result


def changes_between(path: str, before: bytes, after: bytes) -> FileChanges:
    old = {s.name: s for s in extract(path, before).symbols}
    new_syms = extract(path, after).symbols
    new = {s.name: s for s in new_syms}
    texts = {name: after[s.start : s.end] for name, s in new.items()}
    changed = [n for n in new if n in old and before[old[n].start : old[n].end] != texts[n]]
    added = [n for n in new if n not in old]
    removed = [n for n in old if n not in new]
    # Report the outermost change: a method changed inside a class changed the class too,
    # but only the method is the edit; a new class carries its own new members.
    changed = [n for n in changed if not any(n.startswith(a + ".") for a in added)]
    holders = {n for n in changed if any(m.startswith(n + ".") for m in changed + added)}
    changed = [n for n in changed if n not in holders]
    added = [n for n in added if not any(n.startswith(a + ".") for a in added if a != n)]
    previous: dict[str, str | None] = {}
    last: dict[str | None, str] = {}
    for sym in new_syms:
        parent = sym.name.rsplit(".", 1)[0] if "." in sym.name else None
        previous[sym.name] = last.get(parent)
        last[parent] = sym.name
    targets = [Target(n, "modify", texts[n]) for n in changed]
    targets += [Target(n, "add", texts[n], previous.get(n)) for n in added]
    result = FileChanges("whole-file", targets, removed, {t.name: t.text for t in targets})
    if removed or not targets:
        return result
    try:
        spliced = splice(path, before, [Replacement(t.name, t.text, t.after) for t in targets])
    except (SpliceError, ValueError):
        return result
    if spliced.data == after:
        result.kind = "symbols"
    return result
