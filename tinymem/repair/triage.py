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

from tinymem.edits.alignment import inside, leaf
from tinymem.edits.filekinds import target_problem, write_problem
from tinymem.edits.nested import may_define, nested_functions
from tinymem.edits.normalise import parse_block
from tinymem.edits.proposals import Outcome
from tinymem.etv import EtvReport
from tinymem.hydration.relevance import Request
from tinymem.proposalrecords import Proposal
from tinymem.records import FILE_SYMBOL, nested
from tinymem.statemap import EntityRecord, FileMeta, StateView
from tinymem.symbols import extract

__all__ = ["RepairItem", "aimed_at", "triage"]


@dataclass(frozen=True)
class RepairItem:
    """One thing the follow-up asks the model to redo."""

    reason: str  # the gate's reason, as recorded
    proposal: Proposal | None  # None: a block whose path was refused as an example path
    raw_path: str | None = None  # for a refused block: the path it named
    aims: frozenset[str] = frozenset()  # the file's entities the block aimed at (symbols)
    syntax: str | None = None  # why the block does not parse, in the block's own lines

    @property
    def path(self) -> str | None:
        return self.proposal.path if self.proposal is not None else None

    def summary(self) -> dict[str, Any]:
        return {
            "proposal": self.proposal.id if self.proposal is not None else None,
            "path": self.path or self.raw_path,
            "reason": self.reason,
        }


def triage(
    view: StateView, outcome: Outcome, proposals: list[Proposal], etv: EtvReport
) -> list[RepairItem]:
    """The items of one round (its `proposals`, its refusals) a follow-up may send back;
    `etv` is the work tree as the round's proposals were judged against it."""
    stale = etv.stale_keys()
    items: list[RepairItem] = []
    for p in proposals:
        gate_a = p.gates.get("A", "pass")
        if gate_a == "pass" or p.gates.get("ETV", "pass") != "pass":
            continue
        if _refuses_text(view, p):
            continue
        meta = view.meta(p.path) if p.path is not None else None
        aims = (
            []
            if meta is None or meta.deleted
            else aimed_at(p, _block(view, p), meta, view.blob(meta.snapshot))
        )
        if meta is not None and _touches_stale(p, meta, aims, stale):
            continue
        syntax = _syntax(p, _block(view, p))
        reason = f"does not parse: {syntax}" if syntax else gate_a  # as the model is told
        items.append(RepairItem(reason, p, aims=frozenset(r.symbol for r in aims), syntax=syntax))
    for r in outcome.refused:
        if r.get("repairable"):
            items.append(RepairItem(str(r["reason"]), None, str(r["path"])))
    return items


def aimed_at(
    p: Proposal, block: str, meta: FileMeta, data: bytes | None = None
) -> list[EntityRecord]:
    """The file's entities a block aimed at, outermost first in file order: those it changes,
    and every entity that shares a name with a definition in it (the candidates of an
    ambiguous member), or, given the file's text `data`, holds a nested function of that name
    (the block gave it alone: the model is to give the function around it). A block too
    broken to read definitions from still names them on its first line."""
    live = {r.symbol: r for r in meta.live_entities() if r.symbol != FILE_SYMBOL}
    wanted = {e.symbol for e in p.entities if e.base is not None and e.symbol in live}
    if p.path is not None and block and p.format == "code":
        leaves = {leaf(s.name) for s in parse_block(p.path, block.encode()).symbols}
        if not leaves:
            first = next((line for line in block.splitlines() if line.strip()), "")
            leaves = set(Request.parse(first).words)
        wanted |= {name for name in live if leaf(name) in leaves}
        if data is not None:
            wanted |= {n for n in _enclosing(meta.language, data, meta, leaves) if n in live}
    chosen = [live[name] for name in wanted]
    chosen = [r for r in chosen if not any(inside(o, r) for o in chosen)]
    return sorted(chosen, key=lambda r: r.start)


def _enclosing(language: str | None, data: bytes, meta: FileMeta, leaves: set[str]) -> set[str]:
    """The entities around the functions nested in them that bear one of `leaves`."""
    if not any(may_define(language, data, name) for name in leaves):
        return set()
    symbols = extract(meta.path, data).symbols
    return {
        n.enclosing
        for n in nested_functions(language, data, symbols)
        if n.name in leaves and n.enclosing is not None
    }


def _syntax(p: Proposal, block: str) -> str | None:
    """Why a code block does not parse, with line numbers of the block as the model wrote
    it (as Gate A reads it: normalised, `⋮` lines dropped); None when it parses or tm has no
    grammar for it. A block that does not parse is often UNRESOLVED too ("defines nothing tm
    can place"): the syntax error is the cause worth telling."""
    if p.path is None or p.format != "code" or p.kind == "delete" or not block:
        return None
    return parse_block(p.path, block.encode()).problem


def _block(view: StateView, p: Proposal) -> str:
    return view.blob(p.block).decode("utf-8", "replace") if p.block else ""


def _touches_stale(p: Proposal, meta: FileMeta, aims: list[EntityRecord], stale: set[str]) -> bool:
    """The block is aimed at text the user changed by hand: the model must not be shown the
    State Map's version of it as the truth (the STATE NOTICE excluded it), and no answer
    could be accepted before the user adopts. Told apart from the rest of the file when the
    block names what it aims at; a diff, or a block naming nothing known, is aimed at lines
    that may be the user's, so any STALE entity of its file keeps it back."""
    here = {k for k in stale if k.startswith(meta.path + "::")}
    if not here:
        return False
    if p.format != "code" or not aims:
        return True
    return any(nested(meta.key(r.symbol), k) for r in aims for k in here)


def _refuses_text(view: StateView, p: Proposal) -> bool:
    """The target is a file tm writes no model text into: no answer can change that."""
    if p.path is None or p.block is None:
        return False
    meta = view.meta(p.path)
    if meta is None or meta.deleted:
        return False
    before = view.blob(meta.snapshot)
    if target_problem(p.path, before) is not None:
        return True
    return write_problem(p.path, before, view.blob(p.block)) is not None
