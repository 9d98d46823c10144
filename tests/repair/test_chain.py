"""Linking a repair round's proposals to the blocked ones they answer."""

from __future__ import annotations

from tinymem.proposalrecords import Proposal, ProposedEntity
from tinymem.repair.chain import link
from tinymem.repair.triage import RepairItem


def _p(pid: str, path: str | None, symbol: str, artifact: str, gate_a: str = "pass") -> Proposal:
    return Proposal(
        pid,
        "ep",
        path,
        "symbols",
        "CONFIRMED",
        None,
        [ProposedEntity(symbol, "modify", artifact, "base")],
        "block",
        "file",
        gates={"A": gate_a, "ETV": "pass"},
    )


def test_same_file_and_symbol_is_preferred() -> None:
    a = _p("a", "x.py", "f", "1", "does not parse")
    b = _p("b", "x.py", "g", "2", "does not parse")
    q = _p("q", "x.py", "g", "3")
    kept = link([q], [RepairItem("r", a), RepairItem("r", b)], [a, b])
    assert kept == [q] and q.repairs == "b"
    assert b.status == "superseded" and b.superseded_by == ["q"] and a.status == "pending"


def test_a_pathless_block_is_answered_by_a_named_file() -> None:
    lost = _p("a", None, "f", "1", "UNRESOLVED: no file")
    q = _p("q", "y.py", "f", "2")
    link([q], [RepairItem("r", lost)], [lost])
    assert q.repairs == "a" and lost.superseded_by == ["q"]


def test_repeats_of_passed_proposals_are_dropped_and_new_ones_kept() -> None:
    passed = _p("a", "x.py", "f", "1")
    repeat = _p("q", "x.py", "f", "1")
    new = _p("n", "z.py", "h", "5")
    assert link([repeat, new], [], [passed]) == [new]
    assert new.repairs is None and passed.status == "pending"
