"""The text a proposal makes of a file at accept time: its definitions spliced into the
file as it is now, a whole file in the file's own form, a deletion."""

from __future__ import annotations

from tinymem.acceptplan import Check, FilePlan
from tinymem.edits.elisions import find_elisions
from tinymem.edits.fragments import shrunk
from tinymem.edits.splice import (
    Replacement,
    SpliceError,
    delete_symbols,
    in_file_form,
    splice,
    whole_file_symbols,
)
from tinymem.edits.stubs import elided_members, placeholder_members
from tinymem.errors import UsageError
from tinymem.proposalrecords import Proposal
from tinymem.records import FILE_SYMBOL
from tinymem.statemap import EntityRecord, StateView
from tinymem.symbols import extract


def only_this_change(
    view: StateView, p: Proposal, path: str, live: dict[str, EntityRecord], fp: FilePlan
) -> bool:
    """Whether the disk text is the State Map's with this proposal applied and nothing else:
    what an accept that wrote it would have recorded."""
    meta = view.meta(path)
    if meta is None or meta.deleted or fp.before is None:
        return False
    try:
        merged = merged_text(
            view, Check(p), path, view.blob(meta.snapshot), live, allow_delete=False
        )
    except (SpliceError, UsageError):
        return False
    return merged == fp.before


def removes_file(p: Proposal, live: dict[str, EntityRecord]) -> bool:
    """Whether a deletion takes the whole file (as `merged_text` decides): every line of it goes,
    not only the definitions it names, so the whole file must be the one the model saw."""
    names = {e.symbol for e in p.entities}
    return p.kind == "delete" and (FILE_SYMBOL in names or names >= set(live))


def merged_text(
    view: StateView,
    check: Check,
    path: str,
    text: bytes | None,
    live: dict[str, EntityRecord],
    allow_delete: bool,
) -> bytes | None:
    p = check.proposal
    if p.kind == "delete":
        if not allow_delete:
            raise UsageError("a deletion needs --allow-delete")
        names = [e.symbol for e in p.entities]
        if text is None:
            return None
        if FILE_SYMBOL in names or set(names) >= set(live):
            return None  # the whole file goes
        return delete_symbols(path, text, names)
    block = view.blob(p.block) if p.block else b""
    if p.kind == "new-file":
        return block
    if text is None:
        if view.snapshot(path) is None:
            # Deleted in the State Map too (or its record left it: a file of the name of a
            # directory above it took its place, #29): there is nothing to adopt.
            raise UsageError(f"{path} no longer exists, and the State Map records it deleted")
        raise UsageError(f"{path} no longer exists; `tm adopt {path}` records the deletion first")
    if p.kind == "whole-file":
        if check.rebased is not None:
            return check.rebased
        if not p.elisions and p.gates.get("A") == "pass":
            return in_file_form(block, text)
        reps, skipped = _complete_symbols(view, path, block, text)
        if not reps:
            raise UsageError("the whole-file reply is elided and holds no complete symbol")
        check.notes.append(
            "whole-file reply was elided or failed parity: only its complete symbols were"
            " spliced ("
            + ", ".join(r.name for r in reps)
            + ")"
            + ("; skipped " + ", ".join(skipped) if skipped else "")
        )
        return splice(path, text, reps).data
    reps = [Replacement(e.symbol, view.blob(e.artifact), e.after) for e in p.entities if e.artifact]
    if any(e.symbol == FILE_SYMBOL for e in p.entities):
        return in_file_form(block, text)
    return splice(path, text, reps).data


def _complete_symbols(
    view: StateView, path: str, block: bytes, text: bytes
) -> tuple[list[Replacement], list[str]]:
    """The symbols of a whole-file reply that can stand on their own: no elision inside, and
    a class only when it keeps every member the State Map knows."""
    meta = view.meta(path)
    live = set() if meta is None else {r.symbol for r in meta.live_entities()}
    reps = whole_file_symbols(path, block)
    given = {r.name for r in reps}
    now = {s.name: text[s.start : s.end] for s in extract(path, text).symbols}
    keep: list[Replacement] = []
    skipped: list[str] = []
    for r in reps:
        members = {n for n in live if n.startswith(r.name + ".")}
        elided = find_elisions(r.text.decode("utf-8", "replace"), text.decode("utf-8", "replace"))
        stubbed = r.name in now and (
            placeholder_members(path, now[r.name], r.text)
            or elided_members(path, now[r.name], r.text)
        )
        cut = r.name in now and shrunk(path, {r.name: now[r.name]}, {r.name: r.text})
        if elided or stubbed or cut or not members <= given:
            skipped.append(r.name)
        else:
            keep.append(r)
    # A kept class already carries its members: do not splice them twice.
    kept = {r.name for r in keep}
    keep = [r for r in keep if not any(r.name.startswith(k + ".") for k in kept)]
    return keep, skipped
