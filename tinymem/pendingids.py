"""The ids of the pending proposals, for `tm status`, without reading every record each time.

Whether a proposal is pending is in its record (`status`), and a record read for each one on
every status grew with the proposals kept (34.8 s at 10,000). But an entry of `proposals/` is
named by the id of its tree, which holds the record: the same entry id always means the same
answer. So the answers are kept in `.git/tinymem/pending` (a derived cache, safe to delete),
with the `proposals/` tree they were listed for: an unchanged tree is answered from the cache
alone, a changed one by listing it (git's own listing, names and ids) and reading only the
records of entries not seen before.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import tempfile

import pygit2

from tinymem.gitobjects import read_tree
from tinymem.proposalrecords import Proposal
from tinymem.repository import Repo
from tinymem.statemap import PROPOSALS, StateView, proposal_record

__all__ = ["pending_ids"]

_FILE = "pending"
_VERSION = 1


def pending_ids(repo: Repo, view: StateView) -> list[str]:
    """The pending proposals' ids, sorted (as `sorted(proposalrecords.pending(view))`)."""
    tree_id = view.subtree(PROPOSALS)
    if tree_id is None:
        return []
    path = os.path.join(repo.cache_dir, _FILE)
    known_tree, ids, known = _load(path)
    if known_tree == tree_id:
        return ids
    answers: dict[bytes, bool] = {}
    pending: list[str] = []
    for entry in read_tree(repo.git, tree_id):
        raw = entry.id.raw
        waiting = known.get(raw)
        if waiting is None:
            waiting = _is_pending(repo.git, str(entry.id))
        answers[raw] = waiting
        if waiting:
            pending.append(entry.name or "")
    pending.sort()
    _save(path, tree_id, pending, answers)
    return pending


def _is_pending(git: pygit2.Repository, oid: str) -> bool:
    return Proposal.from_bytes(proposal_record(git, oid)).status == "pending"


def _load(path: str) -> tuple[str | None, list[str], dict[bytes, bool]]:
    try:
        with open(path, "rb") as f:
            version, tree, ids, answers = marshal.load(f)
        if version == _VERSION:
            return tree, ids, answers
    except (OSError, EOFError, ValueError, TypeError):
        pass  # missing, older or garbage: an empty cache
    return None, [], {}


def _save(path: str, tree: str, ids: list[str], answers: dict[bytes, bool]) -> None:
    # Whole or not at all (two tm processes may save at once: either file is right).
    with contextlib.suppress(OSError):
        fd, tmp = tempfile.mkstemp(prefix=_FILE + ".", dir=os.path.dirname(path))
        try:
            with os.fdopen(fd, "wb") as f:
                marshal.dump((_VERSION, tree, ids, answers), f)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
