"""`tm diff | accept | reject`: gates run again at this moment, then an all-or-nothing apply.

Order of the gates for each proposal (each result is reported):
  A    structural proof: CONFIRMED, the merged file parses with no ERROR/MISSING node, no
       live symbol lost (unless the proposal removes it: a DELETE line, or a diff or
       SEARCH/REPLACE block that takes it out, with --allow-delete), no collapse of the syntax
       tree, of the file nor of any definition (`edits/fragments.py`: only a diff or
       SEARCH/REPLACE block removes most of a body, with --allow-delete);
  ETV  every target's working-tree text still equals the base the model wrote against
       (or the user named it with --overwrite-stale: the disk text is stored first);
  B    the user's accept is the authority.
Files are written atomically (temp, fsync, rename), each re-hashed right before its rename; an
editor saving in between aborts the whole accept and restores what was already renamed.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import partial

from tinymem.acceptadvice import confirmable
from tinymem.acceptdisplaced import check_displaced, end_displaced
from tinymem.acceptgate import gate_a_reason, newer_reason
from tinymem.acceptmerge import merged_text, only_this_change, removes_file
from tinymem.acceptplan import Check, FilePlan, GateResult, Plan
from tinymem.edits.filekinds import target_problem
from tinymem.edits.splice import (
    SpliceError,
)
from tinymem.errors import HeadMovedError, StaleError, UsageError
from tinymem.gitobjects import MODE_TREE, ObjectWriter, blob_id
from tinymem.ledger import Committed, Draft, Episode, commit_episode, current, new_episode_id
from tinymem.notes.model import Note
from tinymem.notes.proposed import fresh_id, proposal_note, rejection_note
from tinymem.notes.store import check_text, note_edits
from tinymem.proposalrecords import Proposal, pending, store
from tinymem.reapply import Refused, accepted_since, reapply
from tinymem.records import FILE_SYMBOL, Confidence, Source, State, entity_key, split_key
from tinymem.repository import Repo
from tinymem.statemap import PROPOSALS, FileMeta, StateView
from tinymem.symbols import GRAMMAR_LANGUAGES, extract, language_for_path
from tinymem.symcache import SymbolCache, extraction_for
from tinymem.transitions import TreeEdits, apply_update, record_deletion, record_file
from tinymem.worktree import worktree_form
from tinymem.writing.ondisk import as_written, disk_text
from tinymem.writing.transaction import Change, read_raw, write_all


def check_unchanged(repo: Repo, fp: FilePlan, *, doing: str) -> None:
    """Refuse when the file no longer holds the text the plan was made from (`doing`:
    "accepting", "undoing")."""
    if disk_text(repo, fp.path)[1] != fp.before_oid:
        raise StaleError(
            f"{fp.path} changed while {doing} (an editor saved it?); nothing was written"
        )


def file_changes(repo: Repo, plans: Iterable[FilePlan], *, doing: str) -> list[Change]:
    """The writes of these plans, in the file's own form (line endings, filters), each
    checked again right before its rename."""
    return [
        Change(
            fp.path,
            None
            if fp.after is None
            else worktree_form(read_raw(repo, fp.path), fp.before, fp.after),
            partial(check_unchanged, repo, fp, doing=doing),
            fp.executable,
        )
        for fp in plans
    ]


def select(view: StateView, refs: list[str], every: bool) -> list[Proposal]:
    props = pending(view)
    if every:
        if refs:
            raise UsageError("give proposal ids or --all, not both")
        return [props[k] for k in sorted(props)]
    if not refs:
        raise UsageError("name proposals (ids from `tm diff`, or entities path::Symbol), or --all")
    chosen: dict[str, Proposal] = {}
    for ref in refs:
        hits = [p for pid, p in props.items() if pid.startswith(ref)]
        if not hits and "::" in ref:
            path, sym = split_key(ref)
            hits = [
                p
                for p in props.values()
                if p.path == path and any(e.symbol == sym for e in p.entities)
            ]
        if not hits:
            raise UsageError(f"no pending proposal matches {ref!r}; `tm diff` lists them")
        if len(hits) > 1 and "::" not in ref:
            raise UsageError(f"{ref!r} matches {len(hits)} proposals; give more of the id")
        for p in hits:
            chosen[p.id] = p
    return [chosen[k] for k in sorted(chosen)]


def plan(
    repo: Repo,
    view: StateView,
    proposals: list[Proposal],
    *,
    overwrite_stale: set[str] | None = None,
    allow_delete: bool = False,
    placed: set[str] | None = None,
) -> Plan:
    """Run every gate now and compute the new text of every file; writes nothing.
    `placed`: files the user confirms (`--path`) for proposals whose file was inferred."""
    overwrite = overwrite_stale or set()
    confirmed = placed or set()
    result = Plan([], {})
    for p in proposals:
        check = Check(p)
        result.checks.append(check)
        if p.newer_keys:
            check.gates.append(GateResult("A", False, newer_reason(p.newer_keys)))
            continue
        if p.note is not None:  # a note writes no file: the user's word is its only gate
            check.gates += [
                GateResult("A", True, "pass"),
                GateResult("ETV", True, "pass"),
                GateResult("B", True, "accepted by the user"),
            ]
            continue
        if p.path is None or p.kind == "unresolved":
            check.gates.append(
                GateResult("A", False, "UNRESOLVED: no provable file; never promoted")
            )
            continue
        fp = result.files.get(p.path)
        if fp is None:
            before, oid = disk_text(repo, p.path)
            fp = FilePlan(p.path, before, oid, before)
            result.files[p.path] = fp
        earlier = result.changes.get(_change_key(p))
        done = None if earlier is not None else _already_applied(view, p, fp)
        if earlier is not None or done is not None:
            check.notes.append(
                f"the same change as {earlier}, accepted in this run: written once"
                if earlier is not None
                else f"already applied by {done}: its change is in the file, nothing to write"
            )
            check.gates += [
                GateResult("A", True, "pass"),
                GateResult("ETV", True, "pass"),
                GateResult("B", True, "accepted by the user"),
            ]
            continue
        _check_one(view, check, fp, overwrite, allow_delete, result, p.path in confirmed, repo)
        if check.ok:
            fp.proposals.append(p.id)
            result.changes.setdefault(_change_key(p), p.id)
    check_displaced(repo, view, result)
    # A file is written only if every proposal touching it passed: never half a proposal set.
    # What passed for such a file is held back, pending, and said so: recorded as accepted it
    # would leave the pending set without ever being written.
    blocked = {c.proposal.path: c.proposal.id for c in result.checks if not c.ok}
    for check in result.checks:
        path = check.proposal.path
        if path in blocked and path in result.files and check.ok:
            check.gates.append(
                GateResult(
                    "A",
                    False,
                    f"held back: proposal {blocked[path]} for {path} is blocked, and tm writes"
                    f" a file's proposals together or not at all; `tm accept"
                    f" {check.proposal.id}` alone applies this one",
                )
            )
        if path in blocked and path in result.files:
            fp = result.files[path]
            fp.after = fp.before
            fp.proposals.clear()
    return result


def _change_key(p: Proposal) -> tuple[object, ...]:
    """What a proposal changes: two proposals with one key write the same text."""
    whole = p.kind in ("whole-file", "new-file") or any(e.symbol == FILE_SYMBOL for e in p.entities)
    entities = sorted((e.symbol, e.op, e.artifact or "", e.base or "") for e in p.entities)
    return (p.path, p.kind, p.block if whole else None, tuple(entities))


def _already_applied(view: StateView, p: Proposal, fp: FilePlan) -> str | None:
    """The episode that already put this proposal's change in the file (the State Map's
    record and the disk both hold its text), or None. Asked twice, the same change is
    proposed twice; accepting one leaves the other nothing to do, which is no error."""
    if p.kind not in ("symbols", "whole-file") or p.path is None or fp.after is None:
        return None
    if not p.entities or any(e.op not in ("modify", "add") or not e.artifact for e in p.entities):
        return None
    if all(e.artifact == e.base for e in p.entities):
        return None  # it changes nothing: nothing to have applied
    meta = view.meta(p.path)
    if meta is None or meta.deleted:
        return None
    if p.kind == "whole-file" and blob_id(fp.after) != p.block:
        return None
    disk = {s.name: blob_id(fp.after[s.start : s.end]) for s in extract(p.path, fp.after).symbols}
    episodes = []
    for e in p.entities:
        rec = meta.entities.get(e.symbol)
        if rec is None or rec.state is not State.AUTHORITATIVE or rec.artifact != e.artifact:
            return None
        if e.symbol != FILE_SYMBOL and disk.get(e.symbol) != e.artifact:
            return None
        if e.symbol == FILE_SYMBOL and blob_id(fp.after) != e.artifact:
            return None
        episodes.append(rec.episode)
    return episodes[0]


def _check_one(
    view: StateView,
    check: Check,
    fp: FilePlan,
    overwrite: set[str],
    allow_delete: bool,
    plan_: Plan,
    placed: bool = False,
    repo: Repo | None = None,
) -> None:
    p = check.proposal
    path = p.path
    assert path is not None
    check.notes.extend(p.notes)  # how the block was read: what is taken and what is not
    meta = view.meta(path)
    live = {} if meta is None or meta.deleted else {r.symbol: r for r in meta.live_entities()}
    asked = p.gates.get("A", "pass")
    user_placed = placed and confirmable(p)
    if user_placed:
        # Judged at ask time as if the reply had named the file: only the placement was left.
        check.notes.append(
            f"the user confirmed a second definition in {path} with --path (tm had held it:"
            " another file defines it)"
            if p.placement == "elsewhere"
            else f"the reply named no file; the user confirmed {path} with --path (tm had"
            " inferred it)"
        )
        asked = "pass" if asked.startswith("INFERRED:") else asked
    elif p.confidence != Confidence.CONFIRMED.value:
        check.gates.append(GateResult("A", False, f"{p.confidence}: {p.reason}"))
        return
    refused = None if p.kind == "delete" else target_problem(path, fp.before)
    if refused is not None:
        check.gates.append(GateResult("A", False, refused))
        return
    spliceable = language_for_path(path) in GRAMMAR_LANGUAGES
    if asked != "pass" and (
        p.kind in ("symbols", "new-file") or p.format != "code" or not spliceable
    ):
        # What the block itself failed at ask time (it does not parse, it is elided inside a
        # definition, it cannot be spliced into the text the model saw, a hunk matches
        # nowhere) no later state mends. A whole file the model wrote out is different: its
        # complete symbols may still be spliced (see merged_text).
        check.gates.append(GateResult("A", False, asked))
        return
    current_text = fp.after
    disk_syms = (
        {}
        if current_text is None
        else {s.name: current_text[s.start : s.end] for s in extract(path, current_text).symbols}
    )
    # ETV first in the computation (its verdict is reported after Gate A, as documented).
    etv_problems: list[str] = []
    to_name: list[str] = []  # what --overwrite-stale would take for each problem
    conflicts: list[str] = []
    saved_before = list(plan_.overwritten)
    whole = p.kind in ("whole-file", "new-file") or removes_file(p, live)
    file_named = whole and path in overwrite  # the whole file is kept, below
    # Proposals that passed earlier in this run changed the file: a whole file computed on
    # the text the model saw would write their lines back as they were.
    in_run = whole and (path in plan_.changed_by or (fp.after != fp.before and bool(fp.proposals)))
    moved = in_run or (whole and fp.before_oid != p.file_base)
    tm_only: Refused | None = None  # only tm moved the file, but onto the lines p changes
    if moved and repo is not None and current_text is not None:
        again = reapply(repo, view, p, fp.before_oid, current_text)
        if isinstance(again, Refused):
            tm_only = again
            check.notes.append(
                f"{path} changed since the model saw it only by tm, and this proposal's edit is"
                f" not applied again: {again.reason}"
            )
        elif again is not None:
            # Nothing of the user's would be replaced: --overwrite-stale has nothing to do.
            file_named = False
            check.rebased = again.data
            by = [f"proposal {x}, accepted in this run" for x in fp.proposals]
            by += [f"accept {e}" for e in again.accepts]
            check.notes.append(
                f"{path} changed since the model saw it only by tm ({'; '.join(by)}): this"
                " proposal's edit is applied again to the file as it is now"
            )
    for e in p.entities:
        key = entity_key(path, e.symbol)
        if file_named or (check.rebased is not None and e.symbol == FILE_SYMBOL):
            continue
        if e.op in ("modify", "delete"):
            if e.symbol == FILE_SYMBOL:
                now = None if fp.before is None else blob_id(fp.before)
            else:
                text = disk_syms.get(e.symbol)
                now = None if text is None else blob_id(text)
            if now != e.base:
                if key in plan_.changed_by:
                    conflicts.append(key)
                elif key in overwrite and now is not None:
                    plan_.overwritten[key] = (
                        fp.before
                        if e.symbol == FILE_SYMBOL and fp.before is not None
                        else disk_syms[e.symbol]
                    )
                else:
                    etv_problems.append(key)
                    to_name.append(key)
        elif e.op == "add" and e.symbol in disk_syms and key in plan_.changed_by:
            conflicts.append(key)
        elif e.op == "add" and e.symbol in disk_syms and key not in overwrite:
            etv_problems.append(f"{key} (now exists on disk)")
            to_name.append(key)
    if check.rebased is not None:
        pass  # the file moved by tm's accepts alone, and the edit still applies
    elif in_run:
        conflicts.append(path)
    elif whole and fp.before_oid != p.file_base:
        # A whole file replaces every line, including a hand edit outside any definition
        # (an added import) that the entity checks above cannot see.
        if file_named and fp.before is not None:
            plan_.overwritten[path] = fp.before
        elif tm_only is not None:
            etv_problems.append(path)
            to_name.append(path)
        elif not etv_problems:
            said = "now exists on disk" if p.file_base is None else "changed on disk"
            etv_problems.append(f"{path} ({said})")
            to_name.append(path)
    # Compute the merged text.
    new_text = current_text
    try:
        new_text = merged_text(view, check, path, current_text, live, allow_delete)
    except SpliceError as exc:
        check.gates.append(GateResult("A", False, str(exc)))
        return
    except UsageError as exc:
        check.gates.append(GateResult("A", False, str(exc)))
        return
    gone = {n for n in live if entity_key(path, n) in plan_.deleted}
    gate_a = gate_a_reason(path, current_text, new_text, live, p, allow_delete, gone)
    if conflicts and gate_a is None:
        earlier = sorted(
            {plan_.changed_by[k] for k in conflicts if k in plan_.changed_by}
            | (set(fp.proposals) if path in conflicts else set())
        )
        gate_a = (
            f"conflicts with {', '.join(earlier)}, accepted in this run, which changes "
            + ", ".join(conflicts)
            + " too: accept one of them, then ask again for the other change"
        )
    check.gates.append(GateResult("A", gate_a is None, gate_a or "pass"))
    already = new_text == current_text and (
        bool(etv_problems) or list(plan_.overwritten) != saved_before
    )
    if already and fp.after == fp.before and not only_this_change(view, p, path, live, fp):
        # The file is recorded from disk, not written: an edit of the user's elsewhere in it
        # would be recorded as the model's (and an undo of the accept would take it back).
        already = False
        etv_problems = [f"{path} (holds this change and edits of your own besides)"]
        to_name = []
    if already:
        # The text that differs from what the model saw is the model's own text: nothing of
        # the user's is replaced, so there is nothing for ETV (or --overwrite-stale) to keep.
        etv_problems = []
        for key in [k for k in plan_.overwritten if k not in saved_before]:
            del plan_.overwritten[key]
        check.notes.append(f"already applied: {path} holds this text; recorded, not written")
    if tm_only is not None and etv_problems and not in_run:
        ours = (
            f"proposal {', '.join(tm_only.proposals)}"
            if tm_only.proposals
            else "an earlier proposal"
        )
        check.gates.append(
            GateResult(
                "ETV",
                False,
                f"STALE: {path} changed since the model saw it only by tm's accept of {ours}"
                f" (episode {', '.join(tm_only.accepts)}), and {tm_only.reason}: pick one: keep"
                f" {ours} and ask again for this change, or `tm"
                f" accept {p.id} --overwrite-stale {shlex.quote(path)}` to write this"
                f" proposal's file as the model saw it, which takes back the lines of {ours}",
            )
        )
    elif etv_problems and not to_name:
        check.gates.append(
            GateResult(
                "ETV",
                False,
                "STALE: " + ", ".join(etv_problems) + f"; `tm adopt {shlex.quote(path)}` records"
                f" the file as yours, then `tm accept {p.id}` finds its change applied",
            )
        )
    elif etv_problems:
        # A whole file written over the disk also takes back what tm accepted into it since
        # the ask: said, or the advice would pass tm's accepted lines off as the user's text.
        taken_back = (
            accepted_since(repo, p)
            if whole and path in to_name and repo is not None and fp.before_oid != p.file_base
            else ()
        )
        check.gates.append(
            GateResult(
                "ETV",
                False,
                "STALE: " + ", ".join(etv_problems) + " changed since the model saw it; `tm adopt`"
                f" it, or `tm accept {p.id} "
                + " ".join(f"--overwrite-stale {shlex.quote(n)}" for n in dict.fromkeys(to_name))
                + "` to replace your text"
                + (
                    f" and the lines of proposal {', '.join(taken_back)}, which tm accepted into"
                    f" {path} since the model saw it (the file is kept in the vault)"
                    if taken_back
                    else " (it is kept in the vault)"
                ),
            )
        )
    else:
        check.gates.append(GateResult("ETV", True, "pass"))
    check.gates.append(
        GateResult(
            "B",
            True,
            f"accepted by the user, who placed it in {path} (--path)"
            if user_placed
            else "accepted by the user",
        )
    )
    if check.ok:
        fp.after = new_text
        fp.applied = fp.applied or already
        for e in p.entities:
            plan_.changed_by[entity_key(path, e.symbol)] = p.id
            if e.op == "delete" and allow_delete:
                plan_.deleted.add(entity_key(path, e.symbol))
        if whole:
            plan_.changed_by[path] = p.id


def unified_diff(fp: FilePlan) -> str:
    # Undecodable bytes shown as \xNN: replaced by U+FFFD, a change of them would be hidden.
    a = (fp.before or b"").decode("utf-8", "backslashreplace").splitlines(keepends=True)
    b = (fp.after or b"").decode("utf-8", "backslashreplace").splitlines(keepends=True)
    src = f"a/{fp.path}" if fp.before is not None else "/dev/null"
    dst = f"b/{fp.path}" if fp.after is not None else "/dev/null"
    # A last line without a line break is marked as git marks it, not glued to the next line
    # of the diff (`-b+b` where a line is added after a file's unterminated last line).
    return "".join(
        line + "\n\\ No newline at end of file\n" if line.splitlines() == [line] else line
        for line in difflib.unified_diff(a, b, src, dst)
    )


def apply(repo: Repo, plan_: Plan, ref: str | None = None, via: str | None = None) -> Committed:
    """Write every changed file atomically or none, then record one ledger episode on `ref`
    (the ledger the plan was made from; default the current branch's). A `git switch` before
    the episode is recorded rolls the files back (StaleError)."""
    ref = ref or repo.state_ref
    changed = [fp for fp in plan_.files.values() if fp.after != fp.before]
    applied = [
        fp for fp in plan_.files.values() if fp.applied and fp.proposals and fp.after == fp.before
    ]

    unchanged = partial(check_unchanged, repo, doing="accepting")

    for fp in changed + applied:
        unchanged(fp)  # cheap early check of every file before any rename
    edited = [fp.path for fp in changed if fp.before is not None and fp.after is not None]
    if edited:
        # Hand edits the proposals are written into are the user's: recorded as such first,
        # so that the accept's episode (and blame) holds only what the model changed.
        from tinymem.adopt import keep_hand_edits

        keep_hand_edits(repo, edited, "hand edits kept by tm accept", ref=ref)
    episode_id = new_episode_id()
    tip = repo.state_tip(ref)
    accepted = [c.proposal for c in plan_.checks if c.ok]

    def operation(view: StateView, writer: ObjectWriter) -> Draft:
        episode = Episode(
            kind="accept",
            summary="accepted " + ", ".join(p.id for p in accepted),
            id=episode_id,
        )
        edits: TreeEdits = {}
        changed_meta: dict[str, FileMeta | None] = {}  # what note anchors see after the accept
        cache = SymbolCache(repo.cache_dir)
        try:
            for fp in changed + applied:
                if fp.after == fp.before:  # applied already: nothing was written
                    unchanged(fp)  # what is recorded is what the gates saw, not newer text
                old = view.meta(fp.path)
                base_by_symbol = {
                    e.symbol: e.base for p in accepted if p.path == fp.path for e in p.entities
                }
                if fp.after is None:
                    changed_meta[fp.path] = None
                    if old is not None:
                        apply_update(
                            writer,
                            record_deletion(
                                old, episode=episode, reason="deleted by an accepted proposal"
                            ),
                            episode,
                            edits,
                        )
                    continue
                wf = as_written(repo, fp.path, fp.after)
                ex = extraction_for(cache, wf.path, wf.oid, wf.data, wf.kind)
                update = record_file(
                    writer,
                    old,
                    wf,
                    ex,
                    source=Source.MODEL,
                    episode=episode,
                    reason="accepted proposal " + ", ".join(fp.proposals),
                    new_from=State.PROPOSED,
                )
                for name, rec in update.meta.entities.items():
                    if rec.episode == episode.id and name in base_by_symbol:
                        update.meta.entities[name] = replace(rec, base=base_by_symbol[name])
                apply_update(writer, update, episode, edits)
                changed_meta[fp.path] = update.meta
            looked: set[str] = set()  # directories with no record of a file of their name
            for fp in changed + applied:
                if fp.after is not None:
                    end_displaced(view, writer, episode, edits, fp.path, looked)
        finally:
            cache.close()
        for p in accepted:
            edits[f"{PROPOSALS}/{p.id}"] = None
            episode.proposals[p.id] = None
        notes = _accepted_notes(repo, view, accepted, episode, changed_meta)
        attachments = {}
        for i, (_key, text) in enumerate(sorted(plan_.overwritten.items())):
            attachments[f"overwritten-{i}"] = text
        episode.details = {
            "accepted": [p.id for p in accepted],
            "gates": {c.proposal.id: [g.__dict__ for g in c.gates] for c in plan_.checks},
            "notes": {c.proposal.id: c.notes for c in plan_.checks if c.notes},
            "overwritten": {k: blob_id(t) for k, t in sorted(plan_.overwritten.items())},
        }
        if via is not None:
            episode.details["via"] = via
        draft = Draft(episode=episode, changes=edits, attachments=attachments)
        if notes:
            note_edits(repo, writer, episode, notes).include(draft)
        return draft

    def record() -> Committed:
        committed = commit_episode(repo, operation, ref=ref)
        assert committed is not None
        return committed

    changes = file_changes(repo, changed, doing="accepting")
    try:
        return write_all(repo, changes, episode=episode_id, tip=tip, record=record, ref=ref)
    except HeadMovedError as exc:
        raise StaleError(
            f"HEAD moved from branch {exc.started} to {exc.now_named} while tm accept was"
            f" writing (a `git switch`?): the accept was rolled back, the files it wrote have"
            f" their text back and its proposals are still pending on {exc.started}"
        ) from None


def _accepted_notes(
    repo: Repo,
    view: StateView,
    accepted: list[Proposal],
    episode: Episode,
    changed: dict[str, FileMeta | None],
) -> list[Note]:
    """The notes of the accepted note proposals, anchored to what is live once this accept's
    file records (`changed`) are in: a function the same accept changes or adds is anchored
    to its new text, never the old one (which would show the note as drifted at once)."""
    taken: set[str] = set()
    return [
        proposal_note(view, p, fresh_id(repo, view, taken), episode.time, episode.id, changed)
        for p in accepted
        if p.note is not None
    ]


@dataclass
class AcceptResult:
    plan: Plan
    committed: Committed | None


def accept(
    repo: Repo,
    refs: list[str],
    *,
    every: bool = False,
    overwrite_stale: set[str] | None = None,
    allow_delete: bool = False,
    placed: set[str] | None = None,
    via: str | None = None,
) -> AcceptResult:
    """`via`: what asked for the accept when not the command line (`tm mcp`'s client)."""
    ref = repo.state_ref  # the ledger this accept belongs to, whatever HEAD does meanwhile
    view = current(repo)
    chosen = select(view, refs, every)
    _known_overwrites(chosen, overwrite_stale or set())
    for path in sorted(placed or ()):
        if not any(confirmable(c) and c.path == path for c in chosen):
            raise UsageError(
                f"--path {path}: no proposal chosen here had its file inferred as {path};"
                " `tm diff` shows where each would go"
            )
    p = plan(
        repo,
        view,
        chosen,
        overwrite_stale=overwrite_stale,
        allow_delete=allow_delete,
        placed=placed,
    )
    if not any(c.ok for c in p.checks):
        return AcceptResult(p, None)
    return AcceptResult(p, apply(repo, p, ref, via))


def _known_overwrites(chosen: list[Proposal], names: set[str]) -> None:
    """A --overwrite-stale name no chosen proposal touches would be ignored without a word,
    and the user's text it was meant for left blocking: refuse it, naming what would do."""
    known: set[str] = set()
    for p in chosen:
        if p.path is None:
            continue
        known.add(p.path)
        known.update(entity_key(p.path, e.symbol) for e in p.entities)
    unknown = sorted(names - known)
    if unknown:
        names_ = ", ".join(unknown)
        some = ", ".join(sorted(k for k in known if "::" in k)[:5]) or "none"
        raise UsageError(
            f"--overwrite-stale {names_}: no proposal being accepted touches it; name an entity"
            f" (path::Symbol) or a file of these proposals (entities: {some})"
        )


def reject(
    repo: Repo,
    refs: list[str],
    *,
    every: bool = False,
    why: str | None = None,
    via: str | None = None,
) -> Committed:
    """Mark proposals rejected. `why`: each rejection is also remembered, in the same
    episode, as a `tried` note on what the proposal changed ("rejected: ...: why"), so the
    next prompt about those entities says what was rejected and why; `via` as for `accept`."""
    if why is not None:
        if not why.strip():
            raise UsageError("--why needs a reason: it was empty; nothing was rejected")
        why = check_text(why)
    ref = repo.state_ref  # the ledger whose proposals were chosen, whatever HEAD does next
    chosen_ids = [p.id for p in select(current(repo), refs, every)]

    def operation(view: StateView, writer: ObjectWriter) -> Draft:
        episode = Episode(kind="reject", summary="rejected " + ", ".join(chosen_ids))
        edits: TreeEdits = {}
        props = pending(view)
        notes: list[Note] = []
        taken: set[str] = set()
        for pid in chosen_ids:
            prop = props.get(pid)
            if prop is None:
                continue
            if why is not None:
                note_id = fresh_id(repo, view, taken)
                notes.append(rejection_note(view, prop, why, note_id, episode.time, episode.id))
            prop.status = "rejected"
            oid = store(writer, prop)
            edits[f"{PROPOSALS}/{pid}"] = (MODE_TREE, oid)
            episode.proposals[pid] = oid
        episode.details = {"rejected": chosen_ids}
        if why:
            episode.summary += f" (why: {why})"
            episode.details["why"] = why
        if via is not None:
            episode.details["via"] = via
        draft = Draft(episode=episode, changes=edits)
        if notes:
            note_edits(repo, writer, episode, notes).include(draft)
        return draft

    committed = commit_episode(repo, operation, ref=ref)
    assert committed is not None
    return committed
