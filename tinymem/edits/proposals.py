"""From a parsed reply to proposals: blocks tied to files and entities, with gate results.

Confidence per the rules: CONFIRMED when the block's file is named (fence, heading or inline
comment) and tree-sitter parses the block cleanly; INFERRED when the file was found only by
correlation with known entities or the parse/regex is not clean; UNRESOLVED when no file can be
proven (recorded, never promoted). Correlation aligns with existing entities; it never creates.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from tinymem.edits.reply import Block, ParsedReply, block_path
from tinymem.errors import UnsafePathError
from tinymem.etv import EtvReport
from tinymem.gitobjects import ObjectWriter
from tinymem.paths import repo_relative
from tinymem.proposalrecords import Proposal, ProposedEntity
from tinymem.records import FILE_SYMBOL, Confidence, entity_key, split_key
from tinymem.statemap import FileMeta, StateView
from tinymem.symbols import Symbol, analyze, correlate, extract, identifiers


@dataclass
class Outcome:
    proposals: list[Proposal]
    refused: list[dict[str, str]]  # blocks whose path was refused, with the reason


def _targets(block_syms: list[Symbol], meta: FileMeta | None) -> list[Symbol]:
    """The outermost symbols a block proposes. A class given with only some of its existing
    members is read as those members, never as a class that lost the others."""
    names = {s.name for s in block_syms}
    live = {} if meta is None else {r.symbol: r for r in meta.live_entities()}
    out: list[Symbol] = []
    exploded: set[str] = set()
    for s in block_syms:
        if s.parent is not None and s.parent in names and s.parent not in exploded:
            continue  # covered by its enclosing symbol
        existing_members = {n for n in live if n.startswith(s.name + ".")}
        given_members = {n for n in names if n.startswith(s.name + ".")}
        if s.name in live and existing_members and not existing_members <= given_members:
            exploded.add(s.name)
            continue
        out.append(s)
    return out


def _new_id(taken: set[str]) -> str:
    while True:
        pid = secrets.token_hex(3)
        if pid not in taken:
            taken.add(pid)
            return pid


def build(
    view: StateView,
    writer: ObjectWriter,
    workdir: str,
    parsed: ParsedReply,
    etv: EtvReport,
    hydrated: dict[str, str],
    episode_id: str,
) -> Outcome:
    taken = set(view.proposal_ids())
    stale = etv.stale_keys()
    drifted = {d.path for d in etv.drift}
    live_files = view.files()
    outcome = Outcome([], [])
    candidates: dict[str, frozenset[str]] | None = None
    for block in parsed.blocks:
        path, refusal = block_path(block, workdir)
        if refusal is not None:
            outcome.refused.append({"path": block.raw_path or "", "reason": refusal})
            continue
        code = block.code.encode()
        reason: str | None = None
        confidence = Confidence.CONFIRMED
        if path is None:
            if candidates is None:
                candidates = _correlation_candidates(view)
            match = correlate(code, candidates)
            if match is None:
                outcome.proposals.append(
                    Proposal(
                        _new_id(taken),
                        episode_id,
                        None,
                        "unresolved",
                        Confidence.UNRESOLVED.value,
                        "no file named and no known entity matches the block",
                        [],
                        writer.blob(code),
                        None,
                        list(block.elisions),
                        {"A": "UNRESOLVED: no provable file"},
                    )
                )
                continue
            path = split_key(match[0])[0]
            confidence = Confidence.INFERRED
            reason = f"file inferred by correlation with {match[0]} (score {match[1]:.2f})"
        outcome.proposals.append(
            _file_proposal(
                view,
                writer,
                block,
                path,
                code,
                confidence,
                reason,
                taken,
                episode_id,
                stale,
                drifted,
                live_files,
                hydrated,
            )
        )
    for d in parsed.deletes:
        raw_path, _, symbol = d.target.partition("::")
        try:
            path = repo_relative(workdir, raw_path.strip())
        except UnsafePathError as exc:
            outcome.refused.append({"path": raw_path, "reason": str(exc)})
            continue
        meta = view.meta(path)
        names = [symbol] if symbol else [r.symbol for r in meta.live_entities()] if meta else []
        ents = []
        for name in names:
            rec = meta.entities.get(name) if meta else None
            ents.append(ProposedEntity(name, "delete", None, rec.artifact if rec else None))
        gate_a = "pass" if ents and all(e.base for e in ents) else "nothing to delete"
        p = Proposal(
            _new_id(taken),
            episode_id,
            path,
            "delete",
            Confidence.CONFIRMED.value,
            None,
            ents,
            None,
            live_files.get(path),
            [],
            {"A": gate_a},
        )
        p.gates["ETV"] = _etv_gate(p, stale, drifted)
        p.gates["B"] = "user accept with --allow-delete"
        outcome.proposals.append(p)
    return outcome


def _correlation_candidates(view: StateView) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for meta in view.all_meta():
        if meta.deleted or meta.kind != "code":
            continue
        data = view.blob(meta.snapshot)
        for rec in meta.live_entities():
            out[meta.key(rec.symbol)] = identifiers(meta.language, data[rec.start : rec.end])
    return out


def _etv_gate(p: Proposal, stale: set[str], drifted: set[str]) -> str:
    if p.path is None:
        return "pass"
    hit = [k for k in p.entity_keys() if k in stale]
    if hit:
        return "STALE: " + ", ".join(hit) + " changed on disk since the State Map; tm adopt first"
    if p.kind in ("whole-file", "new-file") and p.path in drifted:
        return f"STALE: {p.path} changed on disk; tm adopt it first"
    return "pass"


def _file_proposal(
    view: StateView,
    writer: ObjectWriter,
    block: Block,
    path: str,
    code: bytes,
    confidence: Confidence,
    reason: str | None,
    taken: set[str],
    episode_id: str,
    stale: set[str],
    drifted: set[str],
    live_files: dict[str, str],
    hydrated: dict[str, str],
) -> Proposal:
    meta = view.meta(path)
    if meta is not None and meta.deleted:
        meta = None
    ex = extract(path, code)
    if ex.method != "tree-sitter" and confidence is Confidence.CONFIRMED and ex.method != "none":
        confidence = Confidence.INFERRED
        reason = ex.reason
    syms = list(ex.symbols)
    if meta is None:
        kind = "new-file"
        targets = syms or [Symbol(FILE_SYMBOL, "file", 0, len(code), None)]
    else:
        live_top = {r.symbol for r in meta.live_entities() if "." not in r.symbol}
        given_top = {s.name for s in syms if s.parent is None}
        whole = bool(live_top) and live_top <= given_top
        if not syms:
            whole = True  # a symbol-less file (or text) given in full
        kind = "whole-file" if whole else "symbols"
        targets = (
            [Symbol(FILE_SYMBOL, "file", 0, len(code), None)]
            if not syms
            else (syms if whole else _targets(syms, meta))
        )
    live = {} if meta is None else {r.symbol: r for r in meta.live_entities()}
    ents: list[ProposedEntity] = []
    for s in targets:
        if kind == "whole-file" and s.parent is not None:
            continue
        text = code if s.name == FILE_SYMBOL else code[s.start : s.end]
        rec = live.get(s.name)
        ents.append(
            ProposedEntity(
                s.name, "modify" if rec else "add", writer.blob(text), rec.artifact if rec else None
            )
        )
    p = Proposal(
        _new_id(taken),
        episode_id,
        path,
        kind,
        confidence.value,
        reason,
        ents,
        writer.blob(code),
        live_files.get(path),
        list(block.elisions),
    )
    p.gates["A"] = _gate_a(p, ex, meta, view, code)
    p.gates["ETV"] = _etv_gate(p, stale, drifted)
    modified = [e for e in ents if e.op == "modify"]
    p.hydrated = bool(modified) and all(
        _was_hydrated(path, e.symbol, e.base, hydrated) for e in modified
    )
    p.gates["B"] = "eligible for --accept (targets hydrated)" if p.hydrated else "user accept"
    return p


def _was_hydrated(path: str, symbol: str, base: str | None, hydrated: dict[str, str]) -> bool:
    """The model saw this entity's current text: itself, or an enclosing class in full."""
    if hydrated.get(entity_key(path, symbol)) == base:
        return True
    parts = symbol.split(".")
    return any(entity_key(path, ".".join(parts[:n])) in hydrated for n in range(1, len(parts)))


def _gate_a(p: Proposal, ex: Any, meta: FileMeta | None, view: StateView, code: bytes) -> str:
    if p.confidence != Confidence.CONFIRMED.value:
        return f"{p.confidence}: {p.reason}"
    if not ex.clean:
        return f"does not parse: {ex.reason}"
    if ex.language:
        # analyze() adds Python's own parser, stricter than tree-sitter-python.
        syntax = analyze(ex.language, code)
        if not syntax.clean:
            return f"does not parse: {syntax.reason}"
    if p.elisions and p.kind in ("whole-file", "new-file"):
        return f"elided ({p.elisions[0]!r}): a whole file with placeholders would delete code"
    if p.kind == "whole-file" and meta is not None and ex.language:
        before = analyze(ex.language, view.blob(meta.snapshot)).node_count
        after = analyze(ex.language, code).node_count
        if before and after * 2 < before:
            return f"syntax tree collapsed ({after} nodes, was {before})"
    if p.elisions:
        return f"elided ({p.elisions[0]!r}) inside a symbol"
    return "pass"
