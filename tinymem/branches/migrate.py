"""A repository initialised when tm kept one State Map (`refs/tinymem/state`) keeps its history:
that ledger becomes the State Map of the branch it is used on first."""

from __future__ import annotations

from tinymem.branches.refs import LEGACY_REF, branch_of_ref, ledger_refs
from tinymem.notices import emit
from tinymem.reflock import swap_ref, updating
from tinymem.repository import Repo

__all__ = ["migrate_legacy"]


def migrate_legacy(repo: Repo, ref: str) -> str | None:
    """Move the single ledger ref to `ref` (the current branch's); its tip, or None when there
    is nothing to move. Both ref updates are compare-and-swap: a concurrent migration wins
    once, and the single ref is removed only while it still points where it was read."""
    legacy = repo.git.references.get(LEGACY_REF)
    if legacy is None or ledger_refs(repo.git):
        # No single ref, or State Maps are per branch already (a single ref fetched from an
        # old clone is left for `tm doctor` to report).
        return None
    tip = str(legacy.target)
    with updating(repo):
        if not swap_ref(repo, ref, tip, None, "per-branch"):
            return repo.state_tip(ref)  # another tm moved it first
        swap_ref(repo, LEGACY_REF, None, tip, "per-branch")
    emit(
        f"this repository's State Map ({LEGACY_REF}) is now branch {branch_of_ref(ref)}'s"
        f" ({ref}); other branches start from it when first used"
    )
    return tip
