"""What `tm accept` and `tm diff` tell the user about a blocked proposal: the gate, why,
and what to do next (every blocked line leaves a way forward)."""

from __future__ import annotations

from tinymem.acceptplan import Check, GateResult
from tinymem.proposalrecords import Proposal
from tinymem.records import Confidence


def blocked_line(check: Check) -> str:
    """The gate that blocked `check` and why, with what the user can do next (one sentence):
    every blocked line of `tm accept` and `tm diff` leaves a way forward."""
    g = check.blocked
    assert g is not None
    step = next_step(check.proposal, g)
    return f"{g.gate}: {g.detail}" + (f"; {step}" if step else "")


# A reason that already names what to run or which option to give.
_HAS_STEP = ("`tm ", "tm adopt", "--allow-delete", "--overwrite-stale", "--path", "ask again")


def next_step(p: Proposal, g: GateResult) -> str | None:
    """What the user can do about this blocked gate, or None when its reason says it."""
    detail = g.detail
    if confirmable(p) and detail.startswith("INFERRED:") and p.placement == "elsewhere":
        return (
            f"if a second definition in {p.path} is what you want, `tm accept {p.id} --path"
            f" {p.path}` writes it (`tm diff {p.id}` shows what it would write), else"
            f" `tm reject {p.id}`"
        )
    if confirmable(p) and detail.startswith("INFERRED:"):
        return (
            f"the reply named no file: if {p.path} is where it belongs, `tm accept {p.id}"
            f" --path {p.path}` writes it (`tm diff {p.id}` shows what it would write)"
        )
    if any(word in detail for word in _HAS_STEP):
        return None
    if p.path is None or p.kind == "unresolved" or p.confidence == "UNRESOLVED":
        return (
            "ask again naming the file (`tm ask -f PATH …`) or the definition (`Class.method`),"
            f" or `tm reject {p.id}`"
        )
    if p.confidence == "INFERRED":
        return (
            f"tm cannot prove where it goes in {p.path}: make the change by hand and"
            f" `tm adopt {p.path}`, or `tm reject {p.id}`"
        )
    if detail.startswith("elided") or "placeholder" in detail:
        return f"ask again for the whole definition (name it in `tm ask`), or `tm reject {p.id}`"
    if detail == "the file would be removed":
        return f"`tm accept {p.id} --allow-delete` if the file is to go, else `tm reject {p.id}`"
    if "tm writes" in detail or "MB, larger than" in detail:  # a file no model text goes into
        return f"edit {p.path} by hand and `tm adopt {p.path}`, or `tm reject {p.id}`"
    return f"ask again for the change, or `tm reject {p.id}` to drop this proposal"


def confirmable(p: Proposal) -> bool:
    """An INFERRED proposal whose only open question is its file (correlation chose it, or
    a definition it adds is in another file already: `edits/elsewhere.py`): `tm accept ID
    --path FILE` is the user answering it."""
    return (
        p.confidence == Confidence.INFERRED.value
        and p.placement in ("inferred", "elsewhere")
        and p.path is not None
        and p.kind != "unresolved"
    )
