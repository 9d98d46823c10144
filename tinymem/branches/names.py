"""The names of the ledger refs; plain strings, so the status fast path can use them before
pygit2 is imported (`gitsuspects.start`)."""

from __future__ import annotations

__all__ = ["HEADS_PREFIX", "LEGACY_REF", "branch_of_ref", "state_ref"]

# The namespace of the ledgers; `refs/tinymem/heads/main` is branch main's.
HEADS_PREFIX = "refs/tinymem/heads/"
# The one ledger ref of repositories initialised before State Maps were per branch.
LEGACY_REF = "refs/tinymem/state"


def state_ref(branch: str) -> str:
    return HEADS_PREFIX + branch


def branch_of_ref(ref: str) -> str | None:
    """`refs/tinymem/heads/x/y` -> `x/y`; None for any other ref."""
    return ref[len(HEADS_PREFIX) :] if ref.startswith(HEADS_PREFIX) else None
