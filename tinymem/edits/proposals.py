"""From a parsed reply to proposals: blocks tied to files and entities, with gate results.

Confidence per the rules: CONFIRMED when the block's file is named (fence, heading or inline
comment) and the normalised block parses with tree-sitter and aligns with the file's entities;
INFERRED when the file was found only by correlation with known entities or only the regex
fallback read it; UNRESOLVED when no file or no entity can be proven (an ambiguous member, a
method that no class has): recorded, never promoted. Correlation aligns with existing
entities; it never creates.

A proposal that changes symbols is spliced into the State Map's text right away (a trial:
nothing is written), so a block that cannot be placed is blocked with the splicer's reason,
and every entity's artifact is its text exactly as accepting would write it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from typing import Any

from tinymem.edits.align import align
from tinymem.edits.alignment import Alignment, Evidence, leaf, plain, signature
from tinymem.edits.changes import changes_between
from tinymem.edits.comments import comment_path
from tinymem.edits.elisions import find_elisions
from tinymem.edits.elsewhere import Definitions, defined_elsewhere
from tinymem.edits.filekinds import target_problem
from tinymem.edits.fragments import (
    Shrink,
    fragment_reason,
    shrunk,
    shrunk_in_file,
)
from tinymem.edits.gates import etv_gate, gate_b, structure_gate
from tinymem.edits.noteproposals import note_proposals
from tinymem.edits.patches import Patched, apply_edit
from tinymem.edits.reply import Block, ParsedReply, block_path
from tinymem.edits.splice import Replacement, SpliceError, splice
from tinymem.edits.splice.syntax import compile_problem
from tinymem.edits.stubs import (
    elided_members,
    placeholder_members,
    stubbed_in_file,
    stubbed_note,
)
from tinymem.errors import UnsafePathError
from tinymem.etv import EtvReport
from tinymem.gitobjects import ObjectWriter, blob_id
from tinymem.paths import repo_relative
from tinymem.proposalrecords import Proposal, ProposedEntity
from tinymem.records import FILE_SYMBOL, Confidence, split_key
from tinymem.statemap import EntityRecord, FileMeta, StateView
from tinymem.symbols import (
    GRAMMAR_LANGUAGES,
    analyze,
    correlate,
    extract,
    identifiers,
    language_for_path,
)
from tinymem.symbols.correlate import defined_names
from tinymem.textlist import shortened

__all__ = ["Outcome", "build"]


@dataclass
class Outcome:
    proposals: list[Proposal]
    # blocks whose path was refused: path, reason, and whether a repair round may correct it
    refused: list[dict[str, Any]]


@dataclass
class _Context:
    view: StateView
    writer: ObjectWriter
    stale: set[str]
    drifted: set[str]
    live_files: dict[str, str]
    hydrated: dict[str, str]  # entity key -> artifact shown in this prompt
    seen: dict[str, str]  # the same, with what later messages showed (Gate B only)
    qualified: frozenset[str]  # dotted names in the request
    episode_id: str
    taken: set[str]
    definitions: Definitions
    named_paths: frozenset[str]  # the paths and file names the request gives
    # proposal id -> (symbol, text) of each definition it adds (its blobs are not flushed yet)
    added: dict[str, list[tuple[str, bytes]]] = field(default_factory=dict)
    # the reply's code blocks by the file they name (None: naming none), for `hoists.py`
    code: dict[str | None, tuple[bytes, ...]] = field(default_factory=dict)

    def new_id(self) -> str:
        while True:
            pid = secrets.token_hex(3)
            if pid not in self.taken:
                self.taken.add(pid)
                return pid

    def evidence(self, path: str) -> Evidence:
        prefix = path + "::"
        shown = frozenset(k[len(prefix) :] for k in self.hydrated if k.startswith(prefix))
        blocks = self.code.get(path, ()) + self.code.get(None, ())
        return Evidence(qualified=self.qualified, hydrated=shown, blocks=blocks)


def build(
    view: StateView,
    writer: ObjectWriter,
    workdir: str,
    parsed: ParsedReply,
    etv: EtvReport,
    hydrated: dict[str, str],
    episode_id: str,
    *,
    qualified: frozenset[str] = frozenset(),
    taken: set[str] | None = None,
    shown_later: dict[str, str] | None = None,
    cache_dir: str | None = None,
    named_paths: frozenset[str] = frozenset(),
) -> Outcome:
    """Proposals for every block and DELETE line of a reply. `hydrated` maps the entity keys
    shown in the prompt to their artifacts; `qualified` holds the dotted names the request
    used (`Session.send`): the evidence that decides between same-named members; `taken`
    holds proposal ids already given out (earlier rounds of the same ask); `shown_later`,
    entities a repair follow-up showed: they count for Gate B, not as evidence (a follow-up
    shows every candidate of a name, which would undo what the request's hydration decided);
    `cache_dir`: where the relevance index lives, which says where else a name is defined
    (`elsewhere.py`; without one the State Map's records are read); `named_paths`: the paths and
    file names the request gives (`-f` files too): a definition the reply adds to one of
    them is where the user asked for it, even if another file has one alike."""
    ctx = _Context(
        view,
        writer,
        etv.stale_keys(),
        {d.path for d in etv.drift},
        view.files(),
        hydrated,
        {**hydrated, **(shown_later or {})},
        qualified,
        episode_id,
        set(view.proposal_ids()) | (taken or set()),
        Definitions(view, cache_dir),
        named_paths,
    )
    ctx.code = _code_by_path(ctx, parsed, workdir)
    outcome = Outcome([], [])
    candidates: dict[str, frozenset[str]] | None = None
    for block in parsed.blocks:
        path, refusal, example = block_path(block, workdir, ctx.live_files)
        if refusal is not None:
            # An example path is the model's slip, which a repair round can correct; an unsafe
            # path is refused, never negotiated.
            outcome.refused.append(
                {
                    "path": block.raw_path or next(iter(block.spaced), ""),
                    "reason": refusal,
                    "repairable": example,
                }
            )
            continue
        code = block.code.encode()
        confidence, reason = Confidence.CONFIRMED, None
        named = _named_target(ctx, code) if path is None and block.format == "code" else None
        note: str | None = None
        if named is not None:
            path, note = named
        elif path is None:
            if candidates is None:
                candidates = _correlation_candidates(view)
            match = correlate(code, candidates)
            if match is None:
                outcome.proposals.append(_unresolved(ctx, block, code))
                continue
            path = split_key(match[0])[0]
            confidence = Confidence.INFERRED
            reason = f"file inferred by correlation with {match[0]} (score {match[1]:.2f})"
            note = _spaced_note(block)
        path, known_note, could_be = _known_path(ctx, path)
        if could_be:
            outcome.proposals.append(_ambiguous_path(ctx, block, path, could_be))
            continue
        note = note or known_note
        # A file correlation chose is judged as if named, so that `tm accept ID --path FILE`
        # (the user naming it) needs nothing else; then it is INFERRED until the user does.
        inferred = confidence is Confidence.INFERRED
        if block.format != "code":
            proposal = _edit_proposal(ctx, block, path, Confidence.CONFIRMED, None)
        else:
            meta = ctx.view.meta(path)
            known = None if meta is None or meta.deleted else ctx.view.blob(meta.snapshot)
            block = _without_path_comment(block, path, known)
            code = block.code.encode()
            proposal = _file_proposal(ctx, block, path, code, Confidence.CONFIRMED, None)
        if inferred and proposal.confidence == Confidence.CONFIRMED.value:
            proposal.confidence, proposal.reason = Confidence.INFERRED.value, reason
            proposal.placement = "inferred"
            if proposal.gates.get("A") == "pass":
                proposal.gates["A"] = f"INFERRED: {reason}"
        elif not inferred:
            _hold_second_definition(ctx, proposal)
        if note is not None:
            proposal.notes.insert(0, note)
        if _changes_nothing(proposal):
            outcome.refused.append(
                {
                    "path": path,
                    "reason": f"the block changes nothing: {path} already has this text; not"
                    " proposed",
                    "repairable": False,
                }
            )
            continue
        outcome.proposals.append(proposal)
    for d in parsed.deletes:
        raw_path, _, symbol = d.target.partition("::")
        try:
            path = repo_relative(workdir, raw_path.strip())
        except UnsafePathError as exc:
            outcome.refused.append({"path": raw_path, "reason": str(exc), "repairable": False})
            continue
        outcome.proposals.append(_deletion(ctx, path, symbol))
    outcome.proposals += note_proposals(parsed.notes, outcome.proposals, ctx.new_id, episode_id)
    return outcome


def _code_by_path(
    ctx: _Context, parsed: ParsedReply, workdir: str
) -> dict[str | None, tuple[bytes, ...]]:
    """The reply's code blocks by the file each names (None: naming none, as correlation may
    give them any), for a block to see what the same reply gives beside it for its file."""
    found: dict[str | None, tuple[bytes, ...]] = {}
    for block in parsed.blocks:
        if block.format != "code":
            continue
        path, refusal, _ = block_path(block, workdir, ctx.live_files)
        if refusal is not None:
            continue
        if path is not None:
            path = _known_path(ctx, path)[0]
        found[path] = (*found.get(path, ()), block.code.encode())
    return found


def _hold_second_definition(ctx: _Context, p: Proposal) -> None:
    """A definition the proposal adds that one other file already has, alike: the reply's
    path is likely wrong (`elsewhere.py`). INFERRED then, placement `elsewhere`: `tm accept
    ID --path FILE` is the user confirming the second definition."""
    added = ctx.added.get(p.id)
    if not added or p.path is None or p.confidence != Confidence.CONFIRMED.value:
        return
    if p.gates.get("A") != "pass" or p.kind not in ("symbols", "new-file"):
        return
    if p.path in ctx.named_paths or p.path.rsplit("/", 1)[-1] in ctx.named_paths:
        return  # the user asked for it there (a platform's own implementation, say)
    found = defined_elsewhere(ctx.definitions, p.path, added)
    if found is None:
        return
    symbol, other = found
    where = "a new file" if p.kind == "new-file" else p.path
    p.confidence = Confidence.INFERRED.value
    p.placement = "elsewhere"
    p.reason = (
        f"{symbol} is defined in {other} already, and this would add a second one"
        f" to {where}: if the change is to that one, ask again naming {other}"
        + (f" (the reply named {p.path})" if p.kind == "new-file" else "")
    )
    p.gates["A"] = f"INFERRED: {p.reason}"


def _known_path(ctx: _Context, path: str) -> tuple[str, str | None, list[str]]:
    """The file a named path means, a note saying so, and the files it could mean when it is
    ambiguous. A path tm does not know that the end of exactly one known path spells
    (`certs.py` or `requests/certs.py` for `src/requests/certs.py`, `gin/context.go` for
    `context.go`) is that file: models drop or prefix a project directory, and tm never
    creates a file from a path the reply did not spell out in full and unambiguously. A path
    several known files end like means none of them, nor a new file."""
    if path in ctx.live_files:
        return path, None, []
    found = [
        known
        for known in ctx.live_files
        if known.endswith("/" + path) or path.endswith("/" + known)
    ]
    found = [k for k in found if (m := ctx.view.meta(k)) is not None and not m.deleted]
    if len(found) > 1:
        return path, None, sorted(found)
    if not found:
        return path, None, []
    return found[0], f"the reply names {path}; the one file it can mean is {found[0]}", []


def _ambiguous_path(ctx: _Context, block: Block, path: str, files: list[str]) -> Proposal:
    shown = shortened(files, 5)
    why = f"{path} could be {shown}; name the file by its full path"
    return _unresolved(
        ctx,
        block,
        block.code.encode(),
        reason=f"the reply names {path}, which could be {shown}: name the file by its full path",
        gate=f"UNRESOLVED: {why}",
        notes=[],
    )


def _without_path_comment(block: Block, path: str, before: bytes | None) -> Block:
    """A code block whose first line is a comment naming its file (`# src/requests/certs.py`)
    holds that line only as a label: written into the file it would sit above the file's own
    first line (a shebang, which then no longer works). Kept when the file itself starts so."""
    lines = block.code.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return block
    named = comment_path(lines[first])
    if named is None:
        return block
    label = named[0].removeprefix("./")
    if not (label == path or path.endswith("/" + label) or label.endswith("/" + path)):
        return block
    if before is not None and before.split(b"\n", 1)[0].strip() == lines[first].strip().encode():
        return block
    return replace(block, code="\n".join(lines[first + 1 :]))


def _changes_nothing(p: Proposal) -> bool:
    """The proposal would leave its file as it is: the whole file or a diff's result equals
    the text the model saw, or every definition it gives is the file's own."""
    if p.kind not in ("symbols", "whole-file") or p.file_base is None:
        return False
    if p.kind == "whole-file" or p.format != "code":
        return p.block == p.file_base  # (a diff's block is its result)
    return bool(p.entities) and all(e.op == "modify" and e.artifact == e.base for e in p.entities)


def _named(symbol: str, qualified: frozenset[str]) -> bool:
    """The request names this entity by a dotted name it is or ends with (`Session.get`)."""
    name = plain(symbol)
    return any("." in q and (name == q or name.endswith("." + q)) for q in qualified)


def _named_target(ctx: _Context, code: bytes) -> tuple[str, str] | None:
    """The file of a block that names none, when the request named what it rewrites: every
    definition of the block aligns with an entity the request named (`Session.get`) and the
    prompt showed as it stands, in one file, and no other entity of that name anywhere has
    the block's signature. The commonest reply of a small model (the method alone, no path)
    then needs no guess. None otherwise (correlation may still infer a file)."""
    if not ctx.qualified:
        return None
    paths = set()
    for key in ctx.hydrated:
        path, symbol = split_key(key)
        if not _named(symbol, ctx.qualified):
            continue
        if leaf(symbol) in defined_names(code, language_for_path(path)):
            paths.add(path)
    if len(paths) != 1:
        return None
    (path,) = paths
    meta = ctx.view.meta(path)
    if meta is None or meta.deleted:
        return None
    aligned = align(path, code, ctx.view.blob(meta.snapshot), ctx.evidence(path))
    if aligned.blocked or aligned.problem or aligned.whole_file or aligned.method != "tree-sitter":
        return None
    if not aligned.targets:
        return None
    for t in aligned.targets:
        rec = meta.entities.get(t.name)
        if t.op != "modify" or rec is None or not _named(t.name, ctx.qualified):
            return None
        if ctx.hydrated.get(meta.key(t.name)) != rec.artifact:
            return None
        if _signature_elsewhere(ctx.view, meta.key(t.name), t.text):
            return None
    names = ", ".join(t.name for t in aligned.targets)
    return path, (
        f"the reply names no file; the request names {names}, which the prompt showed, and the"
        f" block is that definition alone: placed in {path}"
    )


def _signature_elsewhere(view: StateView, key: str, text: bytes) -> bool:
    """Another live entity of the same last name has the block's signature exactly."""
    wanted = signature(text)
    name = leaf(split_key(key)[1])
    for meta in view.all_meta():
        if meta.deleted or meta.kind != "code":
            continue
        for rec in meta.live_entities():
            other = meta.key(rec.symbol)
            if other == key or leaf(rec.symbol) != name:
                continue
            if signature(view.blob(rec.artifact)) == wanted:
                return True
    return False


def _spaced_note(block: Block) -> str | None:
    """Why words naming a file with spaces in its path were not taken (`spacedpaths.py`)."""
    if not block.spaced:
        return None
    return (
        f"the reply names {block.spaced[0]!r}, which is no file of the repository: a path with"
        ' spaces is taken only for an existing file, or quoted (path="...")'
    )


def _unresolved(
    ctx: _Context,
    block: Block,
    code: bytes,
    *,
    reason: str = "no file named and no known entity matches the block",
    gate: str = "UNRESOLVED: no provable file",
    notes: list[str] | None = None,
) -> Proposal:
    """A block tm can place in no file: recorded, never promoted. `notes` default: why a
    spaced path the block named was not taken, if it named one."""
    if notes is None:
        note = _spaced_note(block)
        notes = [note] if note is not None else []
    return Proposal(
        ctx.new_id(),
        ctx.episode_id,
        None,
        "unresolved",
        Confidence.UNRESOLVED.value,
        reason,
        [],
        ctx.writer.blob(code),
        None,
        list(block.elisions),
        {"A": gate},
        notes=notes,
    )


def _deletion(ctx: _Context, path: str, symbol: str) -> Proposal:
    meta = ctx.view.meta(path)
    names = [symbol] if symbol else [r.symbol for r in meta.live_entities()] if meta else []
    ents = []
    for name in names:
        rec = meta.entities.get(name) if meta else None
        ents.append(ProposedEntity(name, "delete", None, rec.artifact if rec else None))
    # A whole file with nothing tm reads as entities (too large, binary) still goes whole.
    whole_file = not symbol and meta is not None and not meta.deleted
    gate_a = "pass" if whole_file or (ents and all(e.base for e in ents)) else "nothing to delete"
    p = Proposal(
        ctx.new_id(),
        ctx.episode_id,
        path,
        "delete",
        Confidence.CONFIRMED.value,
        None,
        ents,
        None,
        ctx.live_files.get(path),
        [],
        {"A": gate_a},
    )
    p.gates["ETV"] = etv_gate(p, ctx.stale, ctx.drifted)
    p.gates["B"] = "user accept with --allow-delete"
    return p


def _correlation_candidates(view: StateView) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for meta in view.all_meta():
        if meta.deleted or meta.kind != "code":
            continue
        data = view.blob(meta.snapshot)
        for rec in meta.live_entities():
            out[meta.key(rec.symbol)] = identifiers(meta.language, data[rec.start : rec.end])
    return out


def _elisions(code: bytes, before: bytes | None) -> tuple[str, ...]:
    known = None if before is None else before.decode("utf-8", "replace")
    return find_elisions(code.decode("utf-8", "replace"), known)


def _file_proposal(
    ctx: _Context,
    block: Block,
    path: str,
    code: bytes,
    confidence: Confidence,
    reason: str | None,
) -> Proposal:
    meta: FileMeta | None = ctx.view.meta(path)
    if meta is not None and meta.deleted:
        meta = None
    before = None if meta is None else ctx.view.blob(meta.snapshot)
    aligned = align(path, code, before, ctx.evidence(path))
    if aligned.method == "regex" and confidence is Confidence.CONFIRMED:
        confidence, reason = Confidence.INFERRED, aligned.problem
    if aligned.blocked is not None and confidence is Confidence.CONFIRMED:
        confidence, reason = Confidence.UNRESOLVED, aligned.blocked
    if meta is None:
        kind = "new-file"
    elif aligned.whole_file:
        kind = "whole-file"
    else:
        kind = "symbols"
    p = Proposal(
        ctx.new_id(),
        ctx.episode_id,
        path,
        kind,
        confidence.value,
        reason,
        [],
        ctx.writer.blob(code),
        ctx.live_files.get(path),
        list(_elisions(code, before)),
        notes=list(aligned.notes),
    )
    live = {} if meta is None else {r.symbol: r for r in meta.live_entities()}
    texts, splice_problem, kept = _entity_texts(kind, path, code, before, aligned)
    p.notes += [
        f"the file's {' and '.join(parts)} of {name}, which the block leaves out, are kept"
        for name, parts in kept.items()
    ]
    same = _unchanged(kind, aligned, texts, live)
    if same and kind == "whole-file":
        # Written whole, they are rewritten with the same text: no change to list.
        p.notes.append(f"the file's other {len(same)} definitions are given as it has them")
    elif same:
        p.notes.append("the block gives " + ", ".join(same) + " as the file has it: not proposed")
    for t in aligned.targets:
        if t.name in same:
            continue
        rec = live.get(t.name)
        text = texts.get(t.name, t.text)
        if rec is None:
            ctx.added.setdefault(p.id, []).append((t.name, text))
        p.entities.append(
            ProposedEntity(
                t.name,
                "modify" if rec else "add",
                ctx.writer.blob(text),
                rec.artifact if rec else None,
                t.after if not rec else None,
            )
        )
    if not p.entities and confidence is not Confidence.UNRESOLVED:
        # A text with no definitions (Markdown, a config file) is the file itself.
        rec = live.get(FILE_SYMBOL)
        op = "modify" if kind == "whole-file" else "add"
        base = rec.artifact if rec else None
        p.entities.append(ProposedEntity(FILE_SYMBOL, op, ctx.writer.blob(code), base))
    gate_a = structure_gate(
        p,
        language=aligned.language,
        problem=aligned.problem,
        texts={t.name: t.text for t in aligned.targets},
        block=code,
        before=before,
    )
    if gate_a == "pass" and splice_problem is not None:
        gate_a = splice_problem
    if gate_a == "pass" and kind in ("whole-file", "new-file") and aligned.language:
        compiled = compile_problem(aligned.language, before, code)
        gate_a = gate_a if compiled is None else f"does not compile: {compiled}"
    if gate_a == "pass":
        given = {t.name: texts.get(t.name, t.text) for t in aligned.targets if t.name in live}
        gate_a = _placeholder_problem(ctx.view, path, live, given) or gate_a
        if kind == "symbols" and gate_a == "pass":
            # Parity per definition (`fragments.py`), on the texts as they would sit in the
            # file, against the file's own.
            old = {n: ctx.view.blob(live[n].artifact) for n in given}
            cut = next(iter(shrunk(path, old, given)), None)
            gate_a = fragment_reason(cut) if cut is not None else gate_a
    p.gates["A"] = gate_a
    p.gates["ETV"] = etv_gate(p, ctx.stale, ctx.drifted)
    p.gates["B"] = gate_b(p, ctx.seen)
    if aligned.dropped:
        # Lines outside every definition that the whole file leaves out: a deletion.
        p.hydrated = False
        p.gates["B"] = "user accept with --allow-delete"
    return p


def _unchanged(
    kind: str, aligned: Alignment, texts: dict[str, bytes], live: dict[str, EntityRecord]
) -> list[str]:
    """Targets a spliced block leaves exactly as the file has them (a model copies the whole
    excerpt it was shown back with one method changed): no change, so not proposed. All of
    them unchanged: the proposal keeps them, there being nothing else to propose."""
    if kind not in ("symbols", "whole-file"):
        return []
    same = [
        t.name
        for t in aligned.targets
        if t.name in live and t.name in texts and blob_id(texts[t.name]) == live[t.name].artifact
    ]
    return same if len(same) < len(aligned.targets) else []


def _placeholder_problem(
    view: StateView, path: str, live: dict[str, EntityRecord], given: dict[str, bytes]
) -> str | None:
    """A definition the block gives (`given`: modified entities' texts) as a stub (`...`,
    `todo!()`) where the file has code: taken literally it would delete that code (see
    `stubs.py`)."""
    for symbol, text in given.items():
        old = view.blob(live[symbol].artifact)
        for member in elided_members(path, old, text):
            # Worded as a `# ... existing code ...` marker at that place is: the same elision.
            name = f"{symbol}.{member}" if member else symbol
            return f"elided ('...') inside {name}: give the complete definition"
        for member in placeholder_members(path, old, text):
            name = f"{symbol}.{member}" if member else symbol
            return (
                f"elided: {name} has a placeholder body (`...`, `todo!()`) where the file has its"
                " code: give the complete definition, or leave it out"
            )
    return None


def _edit_proposal(
    ctx: _Context, block: Block, path: str, confidence: Confidence, reason: str | None
) -> Proposal:
    """A unified diff or SEARCH/REPLACE block: applied to the State Map's text of the file,
    then read back as the entities it changes (`changes.py`)."""
    meta: FileMeta | None = ctx.view.meta(path)
    if meta is not None and meta.deleted:
        meta = None
    before = None if meta is None else ctx.view.blob(meta.snapshot)
    # A file no model text may go into is not patched nor read for entities (megabytes of a
    # bundle would be matched and parsed for nothing): Gate A says why.
    refused = target_problem(path, before)
    if refused is not None:
        patched = Patched(b"", None)
    else:
        patched = apply_edit(block.format, block.code, before, path)
        if patched.data is None and patched.problem is None:
            return _deletion(ctx, path, "")  # a diff to /dev/null: the whole file goes
    if patched.problem is not None:
        confidence, reason = Confidence.UNRESOLVED, patched.problem
    after = patched.data if patched.data is not None else b""
    live = {} if meta is None else {r.symbol: r for r in meta.live_entities()}
    p = Proposal(
        ctx.new_id(),
        ctx.episode_id,
        path,
        "new-file" if before is None else "symbols",
        confidence.value,
        reason,
        [],
        ctx.writer.blob(block.code.encode() if patched.problem or refused else after),
        ctx.live_files.get(path),
        list(block.elisions),
        format=block.format,
        edit=ctx.writer.blob(block.code.encode()),
    )
    texts: dict[str, bytes] = {}
    cuts: list[Shrink] = []  # definitions it leaves with most of their body removed
    readable = refused is None
    if patched.problem is None and before is not None and readable:
        found = changes_between(path, before, after)
        p.kind = found.kind
        texts = found.texts
        for target in found.targets:
            rec = live.get(target.name)
            if rec is None:
                ctx.added.setdefault(p.id, []).append((target.name, target.text))
            p.entities.append(
                ProposedEntity(
                    target.name,
                    "modify" if rec else "add",
                    ctx.writer.blob(target.text),
                    rec.artifact if rec else None,
                    None if rec else target.after,
                )
            )
        for name in found.removed:
            rec = live.get(name)
            p.entities.append(ProposedEntity(name, "delete", None, rec.artifact if rec else None))
        if found.removed:
            p.notes.append(
                "it removes " + ", ".join(found.removed) + ": accepting needs --allow-delete"
            )
        cuts = shrunk_in_file(path, before, after)
        if cuts:
            p.notes.append(
                "it removes most of "
                + ", ".join(c.name for c in cuts)
                + ": accepting needs --allow-delete"
            )
    elif patched.problem is None:
        for sym in extract(path, after).symbols:
            if sym.parent is None:
                text = after[sym.start : sym.end]
                ctx.added.setdefault(p.id, []).append((sym.name, text))
                p.entities.append(ProposedEntity(sym.name, "add", ctx.writer.blob(text), None))
    language = language_for_path(path)
    problem = compiled = None
    if language in GRAMMAR_LANGUAGES and patched.problem is None and readable:
        clean_before = before is None or analyze(language, before).clean
        syntax = analyze(language, after)
        if clean_before and not syntax.clean:
            problem = syntax.reason or "syntax error"
        elif clean_before:
            compiled = compile_problem(language, before, after)
    p.gates["A"] = structure_gate(
        p, language=language, problem=problem, texts=texts, block=after, before=before
    )
    if p.gates["A"] == "pass" and compiled is not None:
        p.gates["A"] = f"does not compile: {compiled}"
    stubbed: list[str] = []
    if p.gates["A"] == "pass" and before is not None and patched.data is not None and readable:
        # `-` lines or a SEARCH text name what a placeholder in their place replaces: an
        # explicit removal, as cutting most of a body is, not an elision (`stubs.py`).
        cut = {c.name for c in cuts}  # said already
        stubbed = [n for n in stubbed_in_file(path, before, after) if n not in cut]
        if stubbed:
            p.notes.append(stubbed_note(stubbed) + ": accepting needs --allow-delete")
    p.gates["ETV"] = etv_gate(p, ctx.stale, ctx.drifted)
    deleting = any(e.op == "delete" for e in p.entities) or bool(cuts) or bool(stubbed)
    p.gates["B"] = "user accept with --allow-delete" if deleting else gate_b(p, ctx.seen)
    return p


def _entity_texts(
    kind: str, path: str, code: bytes, before: bytes | None, aligned: Alignment
) -> tuple[dict[str, bytes], str | None, dict[str, tuple[str, ...]]]:
    """Each target's text as it will sit in the file, why the splice fails (or None), and
    what of the file's comments and decorators it kept (`SpliceResult.kept`).

    Symbols are spliced into the State Map's text on trial; whole and new files are their own
    result. A block that does not parse or cannot be aligned is not spliced: its texts stay
    as the block gives them.
    """
    if kind != "symbols":
        found = {s.name: code[s.start : s.end] for s in extract(path, code).symbols}
        return found, None, {}
    if before is None or aligned.blocked is not None or aligned.problem is not None:
        return {}, None, {}
    if target_problem(path, before) is not None:
        return {}, None, {}  # Gate A refuses the file before any splice would parse it
    if not aligned.targets:
        return {}, None, {}
    reps = [Replacement(t.name, t.text, t.after) for t in aligned.targets]
    try:
        result = splice(path, before, reps)
    except SpliceError as exc:
        return {}, str(exc), {}
    except ValueError as exc:  # two targets of one name: the block defines it twice
        return {}, f"the block cannot be spliced: {exc}", {}
    spans = {s.name: result.data[s.start : s.end] for s in extract(path, result.data).symbols}
    texts = {t.name: spans[t.name] for t in aligned.targets if t.name in spans}
    return texts, None, result.kept
