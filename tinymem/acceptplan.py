"""What `tm accept` and `tm diff` decide before anything is written: each proposal's gates
(`Check`), each file's text before and after (`FilePlan`), the whole `Plan`."""

from __future__ import annotations

from dataclasses import dataclass, field

from tinymem.proposalrecords import Proposal


@dataclass
class GateResult:
    gate: str
    ok: bool
    detail: str


@dataclass
class Check:
    proposal: Proposal
    gates: list[GateResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "whole file elided: symbols spliced"
    # A diff or SEARCH/REPLACE proposal's edit applied again to the file as tm's own accepts
    # left it (`reapply.py`): the text it writes instead of its ask-time file.
    rebased: bytes | None = None

    @property
    def ok(self) -> bool:
        return all(g.ok for g in self.gates)

    @property
    def blocked(self) -> GateResult | None:
        return next((g for g in self.gates if not g.ok), None)


@dataclass
class FilePlan:
    path: str
    before: bytes | None  # current work-tree text (None: the file does not exist)
    before_oid: str | None
    after: bytes | None  # None: delete the file
    proposals: list[str] = field(default_factory=list)
    # The disk already held what a proposal writes (applied by hand, or by another tool):
    # nothing is written, but the file is recorded as an accept that wrote it would.
    applied: bool = False
    executable: bool | None = None  # the mode to write (None: the file's own, kept)


@dataclass
class Plan:
    checks: list[Check]
    files: dict[str, FilePlan]
    overwritten: dict[str, bytes] = field(default_factory=dict)  # key -> disk text saved
    # Entity keys (a whole file: its path) changed by proposals that passed earlier in this
    # run -> the proposal: a later one changing them too conflicts, it is not STALE.
    changed_by: dict[str, str] = field(default_factory=dict)
    # Entity keys deleted by proposals that passed earlier in this run: a later proposal of
    # the same file no longer has them to lose.
    deleted: set[str] = field(default_factory=set)
    # What a passing proposal changes (`_change_key`) -> its id: an identical one (the same
    # thing asked twice) is the same change, written once.
    changes: dict[tuple[object, ...], str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)
