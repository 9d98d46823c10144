"""Tying a repair round's proposals to the blocked ones they answer.

A new proposal repairs the sent-back proposal for the same file (the one sharing a symbol
with it, when several were sent back for that file); a proposal for a file no sent-back
proposal named repairs a sent-back block that named no file, in order. The repaired proposal
is superseded: it leaves the pending set, kept in the vault with `superseded_by`. A new
proposal identical to one that already passed in an earlier round is the model repeating
itself, which the follow-up told it not to do: it is dropped.
"""

from __future__ import annotations

from tinymem.proposalrecords import Proposal
from tinymem.repair.triage import RepairItem

__all__ = ["link"]


def _same_change(a: Proposal, b: Proposal) -> bool:
    def key(p: Proposal) -> tuple[object, ...]:
        return (p.path, p.kind, p.format, tuple((e.symbol, e.op, e.artifact) for e in p.entities))

    return key(a) == key(b)


def link(new: list[Proposal], sent: list[RepairItem], earlier: list[Proposal]) -> list[Proposal]:
    """The proposals of the round to keep; sets `repairs` on them and supersedes what they
    repair. `earlier`: every proposal of the rounds before."""
    passed = [p for p in earlier if p.blocked is None and p.status == "pending"]
    kept = [q for q in new if not any(_same_change(q, p) for p in passed)]
    targets = [item.proposal for item in sent if item.proposal is not None]
    named = {p.path for p in targets if p.path is not None}
    pathless = [p for p in targets if p.path is None]
    for q in kept:
        chosen: Proposal | None = None
        same_file = [p for p in targets if p.path is not None and p.path == q.path]
        if same_file:
            symbols = {e.symbol for e in q.entities}
            sharing = [p for p in same_file if symbols & {e.symbol for e in p.entities}]
            chosen = (sharing or same_file)[0]
        elif q.path not in named and pathless:
            chosen = pathless.pop(0)
        if chosen is not None:
            q.repairs = chosen.id
            chosen.status = "superseded"
            chosen.superseded_by.append(q.id)
    return kept
