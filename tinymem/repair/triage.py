"""What a repair round may send back to the model, and what it never negotiates.

Sent back: a proposal Gate A blocked for a reason the model can fix (a syntax error, an
elision, no file named, an ambiguous member, a hunk that matches nowhere, a symbol it cannot
place, a DELETE of something tm does not have) and a block that named an example path.
Never: a STALE target (the user must act: `tm adopt` first), a path refused for safety (`..`,
absolute, `.git/`, a symlink or a submodule), a file tm will not write text into (binary, not
UTF-8), and a reply with no code at all (it has no proposals).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tinymem.edits.filekinds import write_problem
from tinymem.edits.proposals import Outcome
from tinymem.proposalrecords import Proposal
from tinymem.statemap import StateView

__all__ = ["RepairItem", "triage"]


@dataclass(frozen=True)
class RepairItem:
    """One thing the follow-up asks the model to redo."""

    reason: str  # the gate's reason, as recorded
    proposal: Proposal | None  # None: a block whose path was refused as an example path
    raw_path: str | None = None  # for a refused block: the path it named

    @property
    def path(self) -> str | None:
        return self.proposal.path if self.proposal is not None else None

    def summary(self) -> dict[str, Any]:
        return {
            "proposal": self.proposal.id if self.proposal is not None else None,
            "path": self.path or self.raw_path,
            "reason": self.reason,
        }


def triage(view: StateView, outcome: Outcome, proposals: list[Proposal]) -> list[RepairItem]:
    """The items of one round (its `proposals`, its refusals) a follow-up may send back."""
    items: list[RepairItem] = []
    for p in proposals:
        gate_a = p.gates.get("A", "pass")
        if gate_a == "pass" or p.gates.get("ETV", "pass") != "pass":
            continue
        if _refuses_text(view, p):
            continue
        items.append(RepairItem(gate_a, p))
    for r in outcome.refused:
        if r.get("repairable"):
            items.append(RepairItem(str(r["reason"]), None, str(r["path"])))
    return items


def _refuses_text(view: StateView, p: Proposal) -> bool:
    """The target is a file tm writes no model text into: no answer can change that."""
    if p.path is None or p.block is None:
        return False
    meta = view.meta(p.path)
    if meta is None or meta.deleted:
        return False
    return write_problem(p.path, view.blob(meta.snapshot), view.blob(p.block)) is not None
