"""Tying a repair round's proposals to the blocked ones they answer.

A new proposal repairs a sent-back proposal for the same file that aimed at an entity it
changes, holds or is held by (`RepairItem.aims`: what the block changed, or named on its first
line when it was too broken to read). A sent-back block whose aim is unknown is answered by the
first new proposal for its file not already taken by another; one aimed elsewhere is not: the
model changing another entity of the file has not repaired it, and it stays pending and
blocked, as it is. A proposal for a file no sent-back proposal named repairs a sent-back block
that named no file, in order. The repaired proposal is superseded: it leaves the pending set,
kept in the vault with `superseded_by`. A new proposal identical to one that already passed in
an earlier round is the model repeating itself, which the follow-up told it not to do: it is
dropped.
"""

from __future__ import annotations

from tinymem.proposalrecords import Proposal
from tinymem.records import nested
from tinymem.repair.triage import RepairItem

__all__ = ["link"]


def _same_change(a: Proposal, b: Proposal) -> bool:
    def key(p: Proposal) -> tuple[object, ...]:
        entities = tuple((e.symbol, e.op, e.artifact) for e in p.entities)
        return (p.path, p.kind, p.format, entities, (p.note or {}).get("text"))

    return key(a) == key(b)


def link(new: list[Proposal], sent: list[RepairItem], earlier: list[Proposal]) -> list[Proposal]:
    """The proposals of the round to keep; sets `repairs` on them and supersedes what they
    repair. `earlier`: every proposal of the rounds before."""
    passed = [p for p in earlier if p.blocked is None and p.status == "pending"]
    kept = [q for q in new if not any(_same_change(q, p) for p in passed)]
    targets = [item for item in sent if item.proposal is not None]
    named = {item.path for item in targets if item.path is not None}
    pathless = [item.proposal for item in targets if item.path is None]
    answered: list[Proposal] = []
    for q in kept:
        chosen: Proposal | None = None
        if q.note is not None:
            continue  # a note repairs no code, even one whose block named no file
        if q.path in named:
            changes = {e.symbol for e in q.entities}
            same_file = [item for item in targets if item.path == q.path]
            aimed = [i for i in same_file if any(nested(a, c) for a in i.aims for c in changes)]
            unknown = [i for i in same_file if not i.aims and i.proposal not in answered]
            found = (aimed or unknown)[:1]
            chosen = found[0].proposal if found else None
        elif pathless:
            chosen = pathless.pop(0)
        if chosen is not None:
            answered.append(chosen)
            q.repairs = chosen.id
            chosen.status = "superseded"
            chosen.superseded_by.append(q.id)
    return kept
