"""The intent record of an accept in progress, `.git/tinymem/accept-intent.json`.

Written (and fsynced) before the first file is renamed, removed once the ledger commit is
made or the files are rolled back. It names every file with the blob of its text before and
after; both blobs are in the object database before the record is written, so whoever finds
the record (the next tm command, after a crash) can restore the files to either side. (Of
`.git/tinymem/`, this one file is not a cache that is safe to delete.) `accept.lock` beside
it is held (flock) by the process that owns the record: a record whose lock can be taken
belongs to a process that is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

from tinymem import flock
from tinymem.errors import CorruptStateError
from tinymem.ledger import now_iso
from tinymem.repository import CACHE_DIRNAME, INTENT_FILE, Repo

__all__ = ["IntendedFile", "Intent", "clear", "held", "intent_path", "read", "write"]

LOCK = "accept.lock"
WAIT = 30.0  # seconds an accept waits for another one to finish its writes


@dataclass
class IntendedFile:
    path: str
    before: str | None  # blob of the bytes on disk before (None: no such file)
    after: str | None  # blob of the bytes written (None: the file is removed)
    # Whether it was executable before, given back with `before` by a rollback (None: no such
    # file, or a record of an older tm: the mode it has is kept).
    executable: bool | None = None


@dataclass
class Intent:
    episode: str  # the ledger episode that records the accept once it is committed
    tip: str | None  # the ledger tip the accept started from
    tag: str  # names its temporary files
    files: list[IntendedFile]
    started: str = field(default_factory=now_iso)
    # The ledger ref the episode goes to (records written before State Maps were per branch
    # have none: the current branch's is read).
    ref: str | None = None
    # The command writing: "accept", "undo" (`tm undo`, written as an accept is), or "adopt"
    # (`tm adopt --path`, `POST /v1/user/code`, whose `before` is the user's own text the
    # paste replaces).
    kind: str = "accept"


def intent_path(repo: Repo) -> str:
    return os.path.join(repo.git.path, CACHE_DIRNAME, INTENT_FILE)


def write(repo: Repo, intent: Intent) -> None:
    path = intent_path(repo)
    tmp = path + ".tmp"
    data = json.dumps(asdict(intent), indent=1).encode() + b"\n"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    _fsync_dir(os.path.dirname(path))


def read(repo: Repo) -> Intent | None:
    try:
        with open(intent_path(repo), "rb") as f:
            raw = json.loads(f.read())
        files = [IntendedFile(**x) for x in raw.pop("files")]
        return Intent(files=files, **raw)
    except FileNotFoundError:
        return None
    except (ValueError, TypeError, KeyError) as exc:
        raise CorruptStateError(
            f"the record of an interrupted accept ({intent_path(repo)}) is unreadable ({exc});"
            " check the files it may have written with `git status`, then delete it"
        ) from exc


def clear(repo: Repo) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(intent_path(repo))
    _fsync_dir(os.path.dirname(intent_path(repo)))


@contextlib.contextmanager
def held(repo: Repo, *, wait: bool) -> Iterator[bool]:
    """Hold the accept lock; yields False when another live process holds it (`wait`
    False)."""
    busy = (
        f"another tm accept has been writing files for {WAIT:.0f} s (stopped with Ctrl-Z?);"
        " try again when it is done"
    )
    with flock.held(
        os.path.join(repo.cache_dir, LOCK), wait=WAIT if wait else 0.0, busy=busy
    ) as mine:
        yield mine


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
