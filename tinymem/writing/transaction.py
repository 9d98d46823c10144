"""Several work-tree files written all or nothing, then recorded.

Under the accept lock: the files' current bytes are read (every path checked as it will be
written), both sides of every file go to the object database, the intent record is written,
then the files are renamed into place one by one and the caller's `record` commits the ledger
episode. Any failure before that commit (an editor saving a file, a lost race, Ctrl-C) rolls
back from what is on disk: a file holding the new text gets its old text back, whichever file
the interruption came at, and a file someone else changed meanwhile is left as it is.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

import pygit2

from tinymem.branches.names import LEGACY_REF, state_ref
from tinymem.branches.refs import ledger_refs
from tinymem.errors import UnsafePathError
from tinymem.gitobjects import ObjectWriter, blob_id, read_blob
from tinymem.repository import Repo
from tinymem.writing import journal
from tinymem.writing.atomic import TMP_DIRNAME, is_temp_of, remove_file, write_atomic
from tinymem.writing.journal import IntendedFile, Intent
from tinymem.writing.safedir import is_directory, open_parent, remove_empty_dirs

__all__ = [
    "Change",
    "Rollback",
    "read_raw",
    "recorded",
    "remove_leftovers",
    "remove_strays",
    "roll_back",
    "write_all",
]

T = TypeVar("T")


@dataclass
class Change:
    path: str
    after: bytes | None  # None: remove the file
    unchanged: Callable[[], None]  # raises when the file changed since it was planned
    executable: bool | None = None  # the mode to give it (None: the file's own, kept)


@dataclass
class Rollback:
    restored: list[str]
    kept: list[str]  # changed by someone else since: left as they are
    # Of `kept`, the files whose old text could not come back because something of the other
    # kind took their place (a file where they need a directory, a directory where they were a
    # file: the user's, left as it is), each with the blob of that text.
    in_the_way: dict[str, str] = field(default_factory=dict)


def read_raw(repo: Repo, rel: str) -> bytes | None:
    """The bytes of work-tree file `rel` (None: it does not exist), read through the same
    checks as a write (no symlink, no `.git/`, no submodule)."""
    return _read(repo, rel)[0]


def _read(repo: Repo, rel: str) -> tuple[bytes | None, bool | None]:
    """`read_raw`, and whether the file is executable (None: it does not exist)."""
    try:
        parent, name = open_parent(repo.workdir, rel, create=False)
    except FileNotFoundError:
        return None, None
    except UnsafePathError:
        if is_directory(repo.workdir, rel):
            return None, None  # no file there: a write refuses unless it makes room (`_make_room`)
        raise
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=parent)
    except FileNotFoundError:
        return None, None
    finally:
        os.close(parent)
    with os.fdopen(fd, "rb") as f:
        return f.read(), bool(os.fstat(f.fileno()).st_mode & 0o100)


def write_all(
    repo: Repo,
    changes: list[Change],
    *,
    episode: str,
    tip: str | None,
    record: Callable[[], T],
    kind: str = "accept",
    ref: str | None = None,
) -> T:
    """Write every change or none, then `record` (the ledger commit to `ref`, default the
    current branch's); see the module doc. `kind` names the command in the intent record
    (what recovery tells the user)."""
    # Removals first: a file may take the place of a directory whose files go (`tm undo` of
    # an episode where a file and a directory of one name changed places), or the reverse.
    changes = sorted(changes, key=lambda c: c.after is not None)
    with journal.held(repo, wait=True):
        writer = ObjectWriter(repo.git)
        files = []
        for c in changes:
            before, executable = _read(repo, c.path)
            files.append(
                IntendedFile(
                    c.path,
                    None if before is None else writer.blob(before),
                    None if c.after is None else writer.blob(c.after),
                    executable,
                )
            )
        writer.flush()  # both sides durable before the record that names them
        intent = Intent(
            episode=episode,
            tip=tip,
            tag=f"tm-{episode}",
            files=files,
            ref=ref or repo.state_ref,
            kind=kind,
        )
        journal.write(repo, intent)
        # Under the accept lock no other tm is writing: a temporary file beside a target is
        # a killed process's (of an older tm, whose names recovery did not know).
        remove_strays(repo, [c.path for c in changes])
        try:
            for c in changes:
                if c.after is None:
                    remove_file(repo, c.path, check=c.unchanged)
                else:
                    _make_room(repo, c.path, [f.path for f in files if f.after is None])
                    write_atomic(
                        repo,
                        c.path,
                        c.after,
                        tag=intent.tag,
                        check=c.unchanged,
                        executable=c.executable,
                    )
            result = record()
        except BaseException:
            if not recorded(repo, intent):
                roll_back(repo, intent)
            journal.clear(repo)
            raise
        journal.clear(repo)
        return result


def recorded(repo: Repo, intent: Intent, *, depth: int = 200) -> bool:
    """Whether the ledger holds the intent's episode (committed after `intent.tip`).

    A record written before State Maps were per branch names no ref: its ledger may still be
    the single `refs/tinymem/state` (recovery runs before the move to the branch's ref)."""
    if intent.ref:
        refs = [intent.ref]
    else:
        # Whichever branch took the single ref over (another worktree's, maybe), and never
        # HEAD's: this runs in `open_repo`, where a detached HEAD must not stop recovery.
        refs = [LEGACY_REF, *(state_ref(b) for b in ledger_refs(repo.git))]
    return any(_holds(repo, repo.state_tip(ref), intent, depth) for ref in refs)


def _holds(repo: Repo, tip: str | None, intent: Intent, depth: int) -> bool:
    marker = f"Tinymem-Episode: {intent.episode}\n"
    for _ in range(depth):
        if tip is None or tip == intent.tip:
            return False
        commit = repo.git[tip]
        assert isinstance(commit, pygit2.Commit)
        if marker in commit.message:
            return True
        tip = str(commit.parent_ids[0]) if commit.parent_ids else None
    return False


def _disk_id(repo: Repo, rel: str) -> str | None:
    try:
        data = read_raw(repo, rel)
    except (OSError, UnsafePathError):  # a symlink on its way: not tm's text, kept
        return "unreadable"
    return None if data is None else blob_id(data)


def roll_back(repo: Repo, intent: Intent) -> Rollback:
    """Give every file of `intent` that holds the new text its old text (and mode) back."""
    done = Rollback([], [])
    remove_leftovers(repo, intent)
    # In the reverse order of the writes (removals came first): a directory of files the
    # write created goes before a removed file of its name comes back.
    created = [f.path for f in intent.files if f.before is None and f.after is not None]
    for f in reversed(intent.files):
        now = _disk_id(repo, f.path)
        if now == f.before or f.before == f.after:
            continue
        if now != f.after:
            done.kept.append(f.path)
            continue
        # Re-hashed right before the rename, as every write is: an editor saving since the
        # read above is the user's text, kept.
        check = partial(_still_holds, repo, f.path, f.after)
        try:
            if f.before is None:
                remove_file(repo, f.path, check=check)
            else:
                before = read_blob(repo.git, f.before)
                _make_room(repo, f.path, created)
                tag = intent.tag + "-undo"
                write_atomic(repo, f.path, before, tag=tag, check=check, executable=f.executable)
        except _ChangedMeanwhile:
            done.kept.append(f.path)
            continue
        except UnsafePathError:
            # Its place holds the other kind now (the user saved a file `lib` where `lib/x.py`
            # comes back, or a file below a directory `lib` where the file comes back): kept
            # as the user left it, and the old text named, never an error on every command.
            done.kept.append(f.path)
            if f.before is not None:
                done.in_the_way[f.path] = f.before
            continue
        done.restored.append(f.path)
    return done


def _make_room(repo: Repo, rel: str, removed: list[str]) -> None:
    """Before a file is written at `rel`: when this transaction removed files below a
    directory of that name, the directories they left empty go, as git's checkout does."""
    if any(p.startswith(rel + "/") for p in removed):
        remove_empty_dirs(repo.workdir, rel)


class _ChangedMeanwhile(Exception):
    pass


def _still_holds(repo: Repo, rel: str, blob: str | None) -> None:
    if _disk_id(repo, rel) != blob:
        raise _ChangedMeanwhile


def remove_leftovers(repo: Repo, intent: Intent) -> None:
    """The temporary files of `intent`, wherever a crash left them."""
    remove_strays(repo, [f.path for f in intent.files])
    tmp_dir = os.path.join(repo.cache_dir, TMP_DIRNAME)
    with contextlib.suppress(OSError):
        for leftover in os.listdir(tmp_dir):
            if leftover.startswith(intent.tag + "-"):
                os.unlink(os.path.join(tmp_dir, leftover))


def remove_strays(repo: Repo, paths: list[str]) -> None:
    """Every temporary file beside `paths` (`.git` on another file system), whichever
    operation left it: called only where no other tm can be writing (the accept lock held)."""
    if os.listdir not in os.supports_fd:  # pragma: no cover - not POSIX
        return
    tracked: pygit2.Index | frozenset[str] | None = None
    for rel in paths:
        head, _, name = rel.rpartition("/")
        # A directory at `rel` is refused by open_parent: no temporary file of a file there.
        with contextlib.suppress(OSError, UnsafePathError):
            parent, _ = open_parent(repo.workdir, rel, create=False)
            try:
                for entry in os.listdir(parent):
                    if not is_temp_of(entry, name):
                        continue
                    # Only what tm could have left: a plain file (never a link or a
                    # directory) that git does not track (a committed file is the user's).
                    try:
                        st = os.stat(entry, dir_fd=parent, follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    if tracked is None:
                        tracked = _tracked(repo)
                    if (f"{head}/{entry}" if head else entry) in tracked:
                        continue
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry, dir_fd=parent)
            finally:
                os.close(parent)


class _Everything(frozenset[str]):
    def __contains__(self, item: object) -> bool:
        return True


def _tracked(repo: Repo) -> pygit2.Index | frozenset[str]:
    try:
        index: pygit2.Index = repo.git.index
    except (pygit2.GitError, OSError):
        return _Everything()  # an unreadable index: no file can be shown to be tm's
    return index
