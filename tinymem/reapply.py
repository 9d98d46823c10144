"""A diff or SEARCH/REPLACE proposal applied again to a file tm itself changed since the ask.

Such a proposal is recorded as the file the edit left (`block`), computed on the text the model
saw, and the edit as the reply wrote it (`edit`); one that changes lines outside every
definition (an import) is a whole-file proposal. Two
of them from one reply (two imports) could not both be taken: after the first, the second was
STALE, and `--overwrite-stale` wrote its ask-time file over the first. Its own edit, as the
reply wrote it, is what the model asked for: when every change of the file since the ask is
tm's (proposals accepted since, or earlier in the same `tm accept`), that edit is applied again,
with the same rules as at ask time (`edits/patches.py`: each SEARCH text or hunk matching
exactly once), to the text as it is now. A hand edit since, a change git brought, or an edit
that no longer applies leaves the proposal as it was (STALE, or a conflict in one run).

It is applied again only where a three-way merge would take it without asking: each SEARCH
text or hunk matches exactly once, as written, in the text the model saw and in the text now
(never the whitespace-blind fallback: a place found loosely is a guess, and after the file
changed it may be another place); the lines it matched at ask time, with the line boundary on
either side, neither overlap nor touch a region that changed since (adjacent counts, as in git's
merge); and it still changes the text without writing lines tm already wrote beside its place.
Otherwise tm's own accept changed the same lines: a correction of an edit and the edit, or one
edit given twice, look the same here, so the user picks one (`Refused`, which names them).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from tinymem.edits.patches import Patched, apply_edit
from tinymem.edits.reply import parse_reply
from tinymem.gitobjects import blob_id
from tinymem.ledger import history, response_attachment, view_at
from tinymem.proposalrecords import Proposal
from tinymem.repository import Repo
from tinymem.statemap import StateView

__all__ = ["Reapplied", "Refused", "accepted_since", "reapply", "rebase_edit"]

_LOOK_BACK = 200  # episodes walked back to the ask: further than that, not taken as tm's own


@dataclass(frozen=True)
class Reapplied:
    data: bytes  # the file with the proposal's edit applied to its current text
    accepts: tuple[str, ...]  # the accept episodes that changed the file since the ask


@dataclass(frozen=True)
class Refused:
    """Only tm changed the file since the ask, but its edit cannot be taken with those changes."""

    reason: str  # why, a clause: "its edit and tm's change since both change line 3 ..."
    accepts: tuple[str, ...]  # the accept episodes that changed the file since the ask
    proposals: tuple[str, ...]  # the proposals those episodes accepted


def reapply(
    repo: Repo, view: StateView, p: Proposal, disk_oid: str | None, text: bytes
) -> Reapplied | Refused | None:
    """`p`'s edit applied to `text` (the file as the disk holds it, `disk_oid`, with the
    proposals of this run that passed before it applied); Refused when only tm changed the
    file but the edit does not merge with those changes; None when the changes are not all
    tm's, or its edit is not known (module docstring)."""
    if p.format not in ("udiff", "search-replace") or p.kind != "whole-file":
        return None
    if p.path is None or p.file_base is None or p.block is None or disk_oid is None:
        return None
    accepts: tuple[str, ...] = ()
    taken: tuple[str, ...] = ()
    asked: str | None = None  # the ask's ledger commit, once looked for
    if disk_oid != p.file_base:
        if disk_oid != view.snapshot(p.path):
            return None  # a hand edit since: the user's text, not tm's
        walked = _since_ask(repo, p)
        if walked is None or not walked[1]:
            return None
        asked, accepts, taken = walked
    code = view.blob(p.edit).decode("utf-8", "replace") if p.edit is not None else None
    if code is None:
        # Recorded before proposals kept their edit: the ask's reply holds it.
        if asked is None:
            walked = _since_ask(repo, p)
            asked = None if walked is None else walked[0]
        code = None if asked is None else _own_edit(view_at(repo, asked), view, p)
    if code is None:
        return None
    merged = rebase_edit(p.format, code, view.blob(p.file_base), text, p.path)
    if isinstance(merged, str):
        return Refused(merged, accepts, taken)
    return Reapplied(merged, accepts)


def rebase_edit(fmt: str, code: str, base: bytes, text: bytes, path: str) -> bytes | str:
    """The edit `code`, written against `base`, applied to `text` (`base` as changed since),
    or why it is not: the rules of the module docstring."""
    then = apply_edit(fmt, code, base, path, exact=True)
    if then.problem is not None or then.data is None:
        return (
            "its edit matched the text the model saw only with leading whitespace set aside,"
            " so where it belongs in the file as it is now is a guess"
        )
    old = base.splitlines(keepends=True)
    changed = [
        (i1, i2)
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(
            None, old, text.splitlines(keepends=True), autojunk=False
        ).get_opcodes()
        if tag != "equal"
    ]
    for lo, hi in _regions(len(old), then):
        if any(lo <= i2 and i1 <= hi for i1, i2 in changed):
            return (
                f"its edit and tm's change since both change line{'s' if hi - lo > 1 else ''}"
                f" {_lines(lo, hi)} of the text the model saw, or lines right beside each other"
            )
    now = apply_edit(fmt, code, text, path, exact=True)
    if now.problem is not None or now.data is None:
        return f"its edit no longer applies to the file as it is now ({now.problem})"
    if now.data == text:
        return "its edit changes nothing in the file as it is now"
    if _written_beside(base, then, text, now):
        return "the lines its edit adds are already beside its place, written by tm's change since"
    return now.data


def _lines(lo: int, hi: int) -> str:
    return f"{lo + 1}" if hi - lo <= 1 else f"{lo + 1}-{hi}"


def _regions(size: int, done: Patched) -> list[tuple[int, int]]:
    """The line ranges [lo, hi) of the text an edit was applied to (`size` lines) that each of
    its steps (`done.places`) matched; a later step's match on lines an earlier one wrote
    stands for the whole range that one matched."""
    spans = [(i, i + 1) for i in range(size)]
    out: list[tuple[int, int]] = []
    for at, matched, wrote in done.places:
        covered = spans[at : at + matched]
        lo, hi = min(s[0] for s in covered), max(s[1] for s in covered)
        out.append((lo, hi))
        spans[at : at + matched] = [(lo, hi)] * wrote
    return out


def _written_beside(base: bytes, then: Patched, text: bytes, now: Patched) -> bool:
    """Whether a run of lines the edit adds stands right beside its place in `text` more often
    than it stood beside it in `base` (the same lines, written there since by tm)."""
    before, after = base.splitlines(keepends=True), text.splitlines(keepends=True)
    result = (then.data or b"").splitlines(keepends=True)
    added = [
        result[j1:j2]
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(
            None, before, result, autojunk=False
        ).get_opcodes()
        if tag in ("insert", "replace")
    ]
    for run in added:
        width = len(run)
        if width == 0 or not b"".join(run).strip():
            continue
        for (at0, m0, _), (at1, m1, _) in zip(then.places, now.places, strict=True):
            if _count(after[max(0, at1 - width) : at1 + m1 + width], run) > _count(
                before[max(0, at0 - width) : at0 + m0 + width], run
            ):
                return True
    return False


def _count(lines: list[bytes], run: list[bytes]) -> int:
    size = len(run)
    return sum(lines[i : i + size] == run for i in range(len(lines) - size + 1))


def _since_ask(repo: Repo, p: Proposal) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """The ledger commit of `p`'s ask, the accept episodes that changed `p.path` after it,
    newest first, and the proposals they accepted; None when another kind of episode changed
    it (an adopt, a change git brought, an undo) or the ask is not found near the tip."""
    assert p.path is not None
    found: list[str] = []
    taken: list[str] = []
    for number, (commit, episode) in enumerate(history(repo)):
        if episode.id == p.episode:
            return commit, tuple(found), tuple(taken)
        if number >= _LOOK_BACK:
            return None
        if p.path in episode.files:
            if episode.kind != "accept":
                return None
            found.append(episode.id)
            taken.extend(x for x in episode.proposals if x != p.id)
    return None


def _own_edit(asked: StateView, view: StateView, p: Proposal) -> str | None:
    """The diff or SEARCH/REPLACE block of the reply that made `p` (the ask's State Map is
    `asked`): the one of its round's reply that, applied to the text the model saw, gives
    `p.block`."""
    assert p.path is not None and p.file_base is not None
    raw = asked.episode_blob(response_attachment(p.round))
    if raw is None:
        return None
    base = view.blob(p.file_base)
    for block in parse_reply(raw.decode("utf-8", "replace")).blocks:
        if block.format != p.format:
            continue
        made = apply_edit(block.format, block.code, base, p.path).data
        if made is not None and blob_id(made) == p.block:
            return block.code
    return None


def accepted_since(repo: Repo, p: Proposal) -> tuple[str, ...]:
    """The proposals tm accepted into `p.path` since `p`'s ask, whatever else changed it too
    (a hand edit adopted): the lines `--overwrite-stale` of `p` would take back with the
    user's. Empty when the ask is not found near the tip."""
    if p.path is None:
        return ()
    taken: list[str] = []
    for number, (_, episode) in enumerate(history(repo)):
        if episode.id == p.episode:
            return tuple(taken)
        if number >= _LOOK_BACK:
            return ()
        if p.path in episode.files and episode.kind == "accept":
            taken.extend(x for x in episode.proposals if x != p.id and x not in taken)
    return ()
