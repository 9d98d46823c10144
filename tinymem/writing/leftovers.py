"""What interrupted work left in a repository, for `tm doctor`: a ledger ref lock, an accept
in progress or recovered, model replies the ledger could not take."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tinymem.notices import heard
from tinymem.reflock import STALE_AFTER, lock_age, ref_lock_path, writer_alive
from tinymem.repository import CACHE_DIRNAME, UNRECORDED, Repo
from tinymem.writing import journal

__all__ = ["Leftovers", "leftovers"]


@dataclass
class Leftovers:
    ref_lock: str | None = None  # path of a ref lock no live tm is using
    ref_lock_age: float = 0.0
    accept_running: bool = False
    recovered: list[str] = field(default_factory=list)  # what this process already did
    unrecorded: list[str] = field(default_factory=list)  # directories of saved replies


def leftovers(repo: Repo) -> Leftovers:
    found = Leftovers(recovered=[n for n in heard() if "interrupted tm accept" in n])
    age = lock_age(repo)
    if age is not None and age >= STALE_AFTER and not writer_alive(repo):
        found.ref_lock, found.ref_lock_age = ref_lock_path(repo), age
    if os.path.exists(journal.intent_path(repo)):
        found.accept_running = True  # open_repo recovers a dead one: this one is alive
    saved = os.path.join(repo.git.path, CACHE_DIRNAME, UNRECORDED)
    if os.path.isdir(saved):
        found.unrecorded = sorted(os.path.join(saved, d) for d in os.listdir(saved))
    return found
