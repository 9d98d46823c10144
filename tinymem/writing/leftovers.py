"""What interrupted work left in a repository, for `tm doctor`: a ledger ref lock, an accept
in progress or recovered, model replies the ledger could not take, temporary files beside the
user's files."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tinymem.branches.refs import HEADS_PREFIX, LEGACY_REF, state_ref
from tinymem.gitcmd import repo_git_output
from tinymem.notices import heard
from tinymem.reflock import STALE_AFTER, lock_age, ref_lock_path, writer_alive
from tinymem.repository import CACHE_DIRNAME, UNRECORDED, Repo
from tinymem.writing import journal
from tinymem.writing.atomic import TEMP_GLOB

__all__ = ["Leftovers", "leftovers"]


@dataclass
class Leftovers:
    ref_lock: str | None = None  # path of a ref lock no live tm is using
    ref_lock_age: float = 0.0
    accept_running: bool = False
    recovered: list[str] = field(default_factory=list)  # what this process already did
    unrecorded: list[str] = field(default_factory=list)  # directories of saved replies
    # Temporary files of a work-tree write beside the user's files (`.git` on another file
    # system), left by a killed process: repository paths.
    strays: list[str] = field(default_factory=list)


def leftovers(repo: Repo) -> Leftovers:
    found = Leftovers(recovered=[n for n in heard() if "an interrupted tm " in n])
    for ref in [LEGACY_REF, *map(state_ref, _locked_branches(repo))]:
        age = lock_age(repo, ref)
        if age is not None and age >= STALE_AFTER and not writer_alive(repo):
            found.ref_lock, found.ref_lock_age = ref_lock_path(repo, ref), age
            break
    if os.path.exists(journal.intent_path(repo)):
        found.accept_running = True  # open_repo recovers a dead one: this one is alive
    saved = os.path.join(repo.git.path, CACHE_DIRNAME, UNRECORDED)
    if os.path.isdir(saved):
        found.unrecorded = sorted(os.path.join(saved, d) for d in os.listdir(saved))
    if not found.accept_running:  # a running write's own temporary file is no leftover
        found.strays = _strays(repo)
    return found


def _strays(repo: Repo) -> list[str]:
    # Ignored files too (no --exclude-standard): a `.*` ignore rule must not hide them.
    listed = repo_git_output(
        repo.git.path, repo.workdir, "ls-files", "--others", "-z", "--", f":(glob)**/{TEMP_GLOB}"
    )
    return sorted(os.fsdecode(p) for p in (listed or b"").split(b"\0") if p)


def _locked_branches(repo: Repo) -> list[str]:
    """Branches with a ref lock file under `refs/tinymem/heads/` (a ledger whose ref does not
    exist yet can be locked too, so the refs alone would not find them all)."""
    root = os.path.join(repo.common_dir, *HEADS_PREFIX.rstrip("/").split("/"))
    out = []
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            if name.endswith(".lock"):
                rel = os.path.relpath(os.path.join(dirpath, name[: -len(".lock")]), root)
                out.append(rel.replace(os.sep, "/"))
    return sorted(out)
