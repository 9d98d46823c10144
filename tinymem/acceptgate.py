"""Gate A at accept time: whether the text a proposal makes of a file may be written
(it parses, loses no live definition the reply does not remove, keeps its structure)."""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from tinymem.edits.filekinds import write_problem
from tinymem.edits.fragments import fragment_reason, shrunk_in_file
from tinymem.edits.splice.syntax import compile_problem
from tinymem.edits.statements import dropped_note, dropped_statements
from tinymem.edits.stubs import stubbed_in_file, stubbed_note
from tinymem.edits.textparity import collapsed_text, left_out, left_out_note
from tinymem.proposalrecords import Proposal
from tinymem.records import FILE_SYMBOL
from tinymem.statemap import EntityRecord
from tinymem.symbols import analyze, extract, language_for_path


def gate_a_reason(
    path: str,
    before: bytes | None,
    after: bytes | None,
    live: dict[str, EntityRecord],
    p: Proposal,
    allow_delete: bool,
    gone: AbstractSet[str] = frozenset(),
) -> str | None:
    """Why the merged text `after` may not be written, or None. `gone`: definitions of the
    file that proposals accepted earlier in this run delete."""
    if after is None:
        return None if (p.kind == "delete" and allow_delete) else "the file would be removed"
    kind_problem = write_problem(path, before, after)
    if kind_problem is not None:
        return kind_problem
    lang = language_for_path(path)
    if lang is None:
        if p.kind == "whole-file" and p.format == "code" and before is not None:
            collapsed = collapsed_text(path, before, after)
            if collapsed is not None or allow_delete:
                return collapsed
            removed = left_out(before, after)
            if removed:
                return (
                    left_out_note(path, removed) + "; accept with --allow-delete to remove"
                    " them, or ask again for the whole file"
                )
        return None
    syn = analyze(lang, after)
    if not syn.clean:
        return f"the merged file does not parse: {syn.reason}"
    refused = compile_problem(lang, before, after)
    if refused is not None:
        return f"the merged file does not compile: {refused}"
    removes = {e.symbol for e in p.entities if e.op == "delete"}
    deleted = (removes if allow_delete else set()) | gone
    now = {s.name for s in extract(path, after).symbols}
    lost = sorted(n for n in live if n != FILE_SYMBOL and n not in now and n not in deleted)
    if lost:
        return "structural parity: " + ", ".join(lost[:5]) + _why_lost(set(lost) <= removes)
    if p.kind == "whole-file" and p.format == "code" and before is not None and not allow_delete:
        dropped = dropped_statements(path, before, after)
        if dropped:
            return (
                dropped_note(dropped) + "; accept with --allow-delete to remove them, or ask"
                " again for the whole file with them"
            )
    if before is not None and p.kind != "delete":
        old_nodes = analyze(lang, before).node_count
        if old_nodes and syn.node_count * 2 < old_nodes:
            return f"syntax tree collapsed ({syn.node_count} nodes, was {old_nodes})"
        # Parity per definition (`fragments.py`): only a diff or SEARCH/REPLACE block removes
        # most of a body, and only with --allow-delete.
        cuts = shrunk_in_file(path, before, after)
        if cuts and p.format == "code":
            return fragment_reason(cuts[0])
        if cuts and not allow_delete:
            return (
                f"{cuts[0].name} would lose most of its body ({cuts[0].nodes} syntax nodes where"
                f" the file has {cuts[0].was}): the reply removes those lines; accept with"
                " --allow-delete to remove them"
            )
        # A diff or SEARCH/REPLACE block that puts a placeholder where the file has code
        # removes that code explicitly: the same rule (`stubs.py`).
        stubbed = [] if allow_delete or p.format == "code" else stubbed_in_file(path, before, after)
        if stubbed:
            return (
                stubbed_note(stubbed) + ": the reply removes that code; accept with"
                " --allow-delete to remove it"
            )
    return None


def _why_lost(removed: bool) -> str:
    """What deletes a definition, as `gate_a_reason` decides it: an entity the proposal itself
    deletes (a DELETE line, or a diff or SEARCH/REPLACE block that takes the definition
    out) and `--allow-delete`; a definition merely left out of a reply is never deleted."""
    if removed:
        return " would be deleted: the reply removes it; accept with --allow-delete to delete it"
    return (
        " would be lost: the reply leaves it out without removing it, and tm deletes a"
        " definition only when the reply removes it (a DELETE line, or a diff or"
        " SEARCH/REPLACE block that takes it out) and you accept with --allow-delete"
    )


def newer_reason(keys: list[str]) -> str:
    """Why a proposal a newer tm recorded is not accepted here: what its unknown keys mean
    for the write (how to apply it again, where it goes) only that tm knows."""
    return (
        f"recorded by a newer tm (its record has {', '.join(keys)}, which this one does not"
        " know): accept it with that version, or ask again"
    )
