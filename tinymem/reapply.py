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
"""

from __future__ import annotations

from dataclasses import dataclass

from tinymem.edits.patches import apply_edit
from tinymem.edits.reply import parse_reply
from tinymem.gitobjects import blob_id
from tinymem.ledger import history, response_attachment, view_at
from tinymem.proposalrecords import Proposal
from tinymem.repository import Repo
from tinymem.statemap import StateView

__all__ = ["Reapplied", "reapply"]

_LOOK_BACK = 200  # episodes walked back to the ask: further than that, not taken as tm's own


@dataclass(frozen=True)
class Reapplied:
    data: bytes  # the file with the proposal's edit applied to its current text
    accepts: tuple[str, ...]  # the accept episodes that changed the file since the ask


def reapply(
    repo: Repo, view: StateView, p: Proposal, disk_oid: str | None, text: bytes
) -> Reapplied | None:
    """`p`'s edit applied to `text` (the file as the disk holds it, `disk_oid`, with the
    proposals of this run that passed before it applied), or None (module docstring)."""
    if p.format not in ("udiff", "search-replace") or p.kind != "whole-file":
        return None
    if p.path is None or p.file_base is None or p.block is None or disk_oid is None:
        return None
    accepts: tuple[str, ...] = ()
    asked: str | None = None  # the ask's ledger commit, once looked for
    if disk_oid != p.file_base:
        if disk_oid != view.snapshot(p.path):
            return None  # a hand edit since: the user's text, not tm's
        walked = _since_ask(repo, p)
        if walked is None or not walked[1]:
            return None
        asked, accepts = walked
    code = view.blob(p.edit).decode("utf-8", "replace") if p.edit is not None else None
    if code is None:
        # Recorded before proposals kept their edit: the ask's reply holds it.
        if asked is None:
            walked = _since_ask(repo, p)
            asked = None if walked is None else walked[0]
        code = None if asked is None else _own_edit(view_at(repo, asked), view, p)
    if code is None:
        return None
    patched = apply_edit(p.format, code, text, p.path)
    if patched.problem is not None or patched.data is None:
        return None
    return Reapplied(patched.data, accepts)


def _since_ask(repo: Repo, p: Proposal) -> tuple[str, tuple[str, ...]] | None:
    """The ledger commit of `p`'s ask and the accept episodes that changed `p.path` after
    it, newest first; None when another kind of episode changed it (an adopt, a change git
    brought, an undo) or the ask is not found near the tip."""
    assert p.path is not None
    found: list[str] = []
    for number, (commit, episode) in enumerate(history(repo)):
        if episode.id == p.episode:
            return commit, tuple(found)
        if number >= _LOOK_BACK:
            return None
        if p.path in episode.files:
            if episode.kind != "accept":
                return None
            found.append(episode.id)
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
