"""Every blocked line of `tm accept` and `tm diff` says what the user can do next (#24)."""

from __future__ import annotations

import pytest

from tinymem.acceptadvice import blocked_line
from tinymem.acceptplan import Check, GateResult
from tinymem.proposalrecords import Proposal

# The reasons the gates give (edits/gates.py, accept.py, filekinds.py, splice errors), as
# (gate, detail, confidence, kind, placement).
REASONS = [
    ("A", "UNRESOLVED: no provable file; never promoted", "UNRESOLVED", "unresolved", "named"),
    (
        "A",
        "INFERRED: file inferred by correlation with a.py::f (score 0.6)",
        "INFERRED",
        "symbols",
        "inferred",
    ),
    ("A", "INFERRED: regex fallback: no grammar", "INFERRED", "symbols", "named"),
    (
        "A",
        "UNRESOLVED: `get` is ambiguous in a.py: it could be A.get, B.get; ask again with `A.get`",
        "UNRESOLVED",
        "symbols",
        "named",
    ),
    ("A", "does not parse: syntax error at line 3, column 1", "CONFIRMED", "symbols", "named"),
    (
        "A",
        "elided ('...'): a whole file with placeholders would delete code",
        "CONFIRMED",
        "whole-file",
        "named",
    ),
    (
        "A",
        "elided ('# ...') inside f: give the complete definition",
        "CONFIRMED",
        "symbols",
        "named",
    ),
    (
        "A",
        "elided: f has a placeholder body (`...`, `todo!()`) where the file has its code",
        "CONFIRMED",
        "symbols",
        "named",
    ),
    ("A", "syntax tree collapsed (10 nodes, was 90)", "CONFIRMED", "whole-file", "named"),
    (
        "A",
        "the merged file does not parse: syntax error at line 1, column 1",
        "CONFIRMED",
        "symbols",
        "named",
    ),
    (
        "A",
        "structural parity: f would be lost: the reply leaves it out without removing it,"
        " and tm deletes a definition only when … you accept with --allow-delete",
        "CONFIRMED",
        "whole-file",
        "named",
    ),
    ("A", "the file would be removed", "CONFIRMED", "symbols", "named"),
    ("A", "a deletion needs --allow-delete", "CONFIRMED", "delete", "named"),
    ("A", "nothing to delete", "CONFIRMED", "delete", "named"),
    (
        "A",
        "a.bin is a binary file; tm writes text proposals into text files only",
        "CONFIRMED",
        "symbols",
        "named",
    ),
    (
        "A",
        "a.py is 12.0 MB, larger than the 8 MB tm reads as entities",
        "CONFIRMED",
        "symbols",
        "named",
    ),
    (
        "A",
        "the new text for f in a.py also defines g; each definition must be proposed on its own",
        "CONFIRMED",
        "symbols",
        "named",
    ),
    (
        "A",
        "UNRESOLVED: hunk 1 (@@ -1,3 +1,4 @@) matches nowhere in the State Map's a.py",
        "UNRESOLVED",
        "symbols",
        "named",
    ),
    (
        "A",
        "held back: proposal abc for a.py is blocked, and tm writes a file's proposals"
        " together or not at all; `tm accept def` alone applies this one",
        "CONFIRMED",
        "symbols",
        "named",
    ),
    (
        "A",
        "conflicts with abc, accepted in this run, which changes a.py::f too: accept one of"
        " them, then ask again for the other change",
        "CONFIRMED",
        "symbols",
        "named",
    ),
    (
        "ETV",
        "STALE: a.py::f changed since the model saw it; `tm adopt` it, or `tm accept"
        " --overwrite-stale ENTITY` (a whole file: its PATH) to replace your text",
        "CONFIRMED",
        "symbols",
        "named",
    ),
]
_STEPS = ("`tm ", "--allow-delete", "--overwrite-stale", "--path", "ask again")


@pytest.mark.parametrize("reason", REASONS, ids=[r[1][:40] for r in REASONS])
def test_every_blocked_line_says_what_to_do(reason: tuple[str, str, str, str, str]) -> None:
    gate, detail, confidence, kind, placement = reason
    p = Proposal(
        "abc123",
        "e",
        None if kind == "unresolved" else "a.py",
        kind,
        confidence,
        detail.split(": ", 1)[-1],
        [],
        None,
        None,
        placement=placement,
    )
    line = blocked_line(Check(p, [GateResult(gate, False, detail)]))
    assert line.startswith(f"{gate}: {detail}")
    assert any(step in line for step in _STEPS), line


def test_an_inferred_file_names_the_path_to_confirm() -> None:
    p = Proposal(
        "abc123",
        "e",
        "a.py",
        "symbols",
        "INFERRED",
        "file inferred",
        [],
        None,
        None,
        placement="inferred",
    )
    line = blocked_line(Check(p, [GateResult("A", False, "INFERRED: file inferred")]))
    assert "`tm accept abc123 --path a.py`" in line
