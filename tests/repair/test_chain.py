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
    aimed = [RepairItem("r", a, aims=frozenset({"f"})), RepairItem("r", b, aims=frozenset({"g"}))]
    kept = link([q], aimed, [a, b])
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


def test_a_fix_of_another_entity_repairs_nothing() -> None:
    # Two broken blocks for one file, the model fixes only the second: the first is not
    # superseded by it (it would leave the pending set unfixed).
    a = _p("a", "x.py", "f", "1", "does not parse")
    b = _p("b", "x.py", "g", "2", "does not parse")
    q = _p("q", "x.py", "g", "3")
    sent = [RepairItem("r", a, aims=frozenset({"f"})), RepairItem("r", b, aims=frozenset({"g"}))]
    link([q], sent, [a, b])
    assert q.repairs == "b" and a.status == "pending" and not a.superseded_by
    # A changed repeat of what passed, beside a broken block aimed elsewhere: not a repair.
    passed = _p("p", "x.py", "h", "4")
    broken = _p("c", "x.py", "f", "5", "does not parse")
    again = _p("r", "x.py", "h", "6")
    kept = link([again], [RepairItem("r", broken, aims=frozenset({"f"}))], [passed, broken])
    assert kept == [again] and again.repairs is None and broken.status == "pending"


def test_blocks_of_unknown_aim_are_answered_one_each_in_order() -> None:
    a = _p("a", "x.py", "f", "1", "does not parse")
    b = _p("b", "x.py", "g", "2", "does not parse")
    q1, q2 = _p("q1", "x.py", "new1", "3"), _p("q2", "x.py", "new2", "4")
    link([q1, q2], [RepairItem("r", a), RepairItem("r", b)], [a, b])
    assert (q1.repairs, q2.repairs) == ("a", "b")
