"""The gates as they stand when a proposal is made (`tm accept` runs them all again).

Gate A, structural proof: CONFIRMED, the block parses once normalised, no elision inside a
definition it changes (nor anywhere in a whole file), no collapse of the syntax tree (of the
file, nor of any definition: `fragments.py`), no new
member under an access label the splice cannot honour, and the splice into the State Map's
text succeeds. ETV: no target is STALE. Gate B: whether the model
saw the current text of every entity it modifies (`--accept` may then promote it).
"""

from __future__ import annotations

from tinymem.edits.access import access_problem
from tinymem.edits.elisions import find_elisions
from tinymem.edits.filekinds import target_problem, write_problem
from tinymem.edits.fragments import fragment_reason, shrunk_in_file
from tinymem.edits.textparity import collapsed_text
from tinymem.proposalrecords import Proposal
from tinymem.records import entity_key
from tinymem.symbols import analyze

__all__ = ["etv_gate", "gate_b", "structure_gate", "was_hydrated"]


def structure_gate(
    p: Proposal,
    *,
    language: str | None,
    problem: str | None,
    texts: dict[str, bytes],
    block: bytes,
    before: bytes | None,
) -> str:
    """Gate A at ask time: "pass" or why not. `texts` are the entity texts the block gives,
    `before` the file's authoritative text (None for a new file)."""
    if p.confidence != "CONFIRMED":
        return f"{p.confidence}: {p.reason}"
    # Asked before anything about the block, as accept's Gate A does: both refuse alike.
    refused = target_problem(p.path or "?", before)
    if refused is not None:
        return refused
    if problem is not None:
        return f"does not parse: {problem}"
    kind_problem = write_problem(p.path or "?", before, block)
    if kind_problem is not None:
        return kind_problem
    known = None if before is None else before.decode("utf-8", "replace")
    if p.kind in ("whole-file", "new-file"):
        if p.elisions:
            return f"elided ({p.elisions[0]!r}): a whole file with placeholders would delete code"
        if p.kind == "whole-file" and before is not None and language:
            old = analyze(language, before).node_count
            new = analyze(language, block).node_count
            if old and new * 2 < old:
                return f"syntax tree collapsed ({new} nodes, was {old})"
            for cut in shrunk_in_file(p.path or "?", before, block):
                return fragment_reason(cut)
        elif p.kind == "whole-file" and before is not None and p.format == "code":
            # No grammar: the file's lines are all the evidence (`textparity.py`).
            return collapsed_text(p.path or "?", before, block) or "pass"
        return "pass"
    for name, text in texts.items():
        marks = find_elisions(text.decode("utf-8", "replace"), known)
        if marks:
            return f"elided ({marks[0]!r}) inside {name}: give the complete definition"
    if p.format == "code" and language is not None:
        problem = access_problem(p, language, texts, block)
        if problem is not None:
            return problem
    return "pass"


def etv_gate(p: Proposal, stale: set[str], drifted: set[str]) -> str:
    if p.path is None:
        return "pass"
    hit = [k for k in p.entity_keys() if k in stale]
    if hit:
        return "STALE: " + ", ".join(hit) + " changed on disk since the State Map; tm adopt first"
    if p.kind in ("whole-file", "new-file") and p.path in drifted:
        return f"STALE: {p.path} changed on disk; tm adopt it first"
    return "pass"


def was_hydrated(path: str, symbol: str, base: str | None, hydrated: dict[str, str]) -> bool:
    """The model saw this entity's current text: itself, or an enclosing class in full."""
    if hydrated.get(entity_key(path, symbol)) == base:
        return True
    parts = symbol.split(".")
    return any(entity_key(path, ".".join(parts[:n])) in hydrated for n in range(1, len(parts)))


def gate_b(p: Proposal, hydrated: dict[str, str]) -> str:
    """Sets `p.hydrated`; the Gate B line for the proposal table."""
    path = p.path or ""
    modified = [e for e in p.entities if e.op == "modify"]
    p.hydrated = bool(modified) and all(
        was_hydrated(path, e.symbol, e.base, hydrated) for e in modified
    )
    return "eligible for --accept (targets hydrated)" if p.hydrated else "user accept"
