"""Which files of the work tree changed since ETV last looked, for a long-lived process.

Every prompt starts with ETV, and at 50,000 files its comparison of the whole work tree
(git's, or the stat cache's walk) is ~0.2–0.3 s: most of what `tm serve` added before the
model's first token (bench/README.md, issue 29). A server knows what it saw at its last
request; the kernel can tell it what was written since. So `tm serve` and `tm mcp` watch the
directories that hold the State Map's files (inotify) and ETV then looks only at:

- the files that drifted at its last look (STALE stays STALE until its file changes back);
- the files the kernel reported written, created, deleted or moved since that look;
- the files whose snapshot differs between the State Map it checked then and now (an accept,
  an adopt, a commit git brought in).

Anything this cannot describe file by file makes the next look a whole one, as without a
watch: a directory created, deleted, moved or changed in mode; the kernel's queue overflowed;
a watch lost; a change of State Map too large to list. What inotify does not report at all
(writes through a shared memory map, or by another machine on a network file system) is not
seen by this look; nothing is written on its strength: `tm accept` compares every target with
its disk text itself, right before each write.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import threading
import time
from collections.abc import Callable, Iterable

from tinymem import inotify

__all__ = ["TreeWatch", "stop_all", "watch", "watching"]

_DIR_MASK = (
    inotify.IN_MODIFY
    | inotify.IN_ATTRIB
    | inotify.IN_CLOSE_WRITE
    | inotify.IN_MOVED_FROM
    | inotify.IN_MOVED_TO
    | inotify.IN_CREATE
    | inotify.IN_DELETE
    | inotify.IN_DELETE_SELF
    | inotify.IN_MOVE_SELF
    | inotify.IN_ONLYDIR
    | inotify.IN_DONT_FOLLOW
)
_ATTRIBUTES = b".gitattributes"
# A whole look at least this often: what inotify does not report stays unseen no longer.
WHOLE_AFTER = 300.0
# What a list of changed files cannot describe: the next look is a whole one.
_WHOLE = (
    inotify.IN_DELETE_SELF
    | inotify.IN_MOVE_SELF
    | inotify.IN_UNMOUNT
    | inotify.IN_Q_OVERFLOW
    | inotify.IN_IGNORED
    | inotify.IN_ISDIR
)


class TreeWatch:
    """The kernel's account of one work tree's directories, and what ETV last concluded.

    `turn` serialises the looks (a server answers requests on several threads): each look
    reads the events queued so far and hands over what it found, so the next one starts
    where it ended. Events that arrive during a look stay queued for the next."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self.turn = threading.Lock()
        self._notify: inotify.Inotify | None = inotify.Inotify()
        self._dirs: dict[int, str] = {}  # watch descriptor -> directory, relative ("" the root)
        self._watched: set[str] = set()
        self._unwatched: set[str] = set()  # not watchable: through a symlink, not allowed...
        # Files looked at every time: in an unwatched directory, or with other hard links
        # (a write through another name is reported to that name's directory, if any).
        self._always: set[str] = set()
        self._root: tuple[int, int] | None = None  # the work tree's (device, inode)
        self._whole_at = 0.0  # monotonic time of the last whole look
        self._tree: str | None = None  # the files/ tree of the last look, None: look at all
        self._drifted: frozenset[str] = frozenset()

    @property
    def broken(self) -> bool:
        """Watching stopped for good (the per-user limit of watches, an unreadable queue):
        every look is a whole one."""
        return self._notify is None

    def cover(self, paths: Iterable[str]) -> None:
        """Watch the directory of each of these files and every directory above it, up to
        the work tree. A directory is watched only below a watched parent, so never through
        a symlink; the files of a directory that is not watched are looked at every time."""
        paths = list(paths)
        wanted: set[str] = set()
        for path in paths:
            d = posixpath.dirname(path)
            while d not in wanted and d not in self._watched and d not in self._unwatched:
                wanted.add(d)
                if not d:
                    break
                d = posixpath.dirname(d)
        for d in sorted(wanted, key=lambda d: (d.count("/"), d)):  # parents first
            if self._notify is None:
                return
            if d and posixpath.dirname(d) not in self._watched:
                self._unwatched.add(d)
                continue
            try:
                wd = self._notify.add_watch(os.path.join(self.workdir, d), _DIR_MASK)
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.ENOMEM, errno.EBADF):
                    self.close()  # out of watches: a partial watch would lie
                    return
                # Gone, a symlink (not followed), a loop, not allowed: its files are looked
                # at every time, and its parent reports when it comes back.
                self._unwatched.add(d)
                continue
            if wd in self._dirs:
                self._unwatched.add(d)  # the same directory by another name (a bind mount)
                continue
            self._dirs[wd] = d
            self._watched.add(d)
        if self._unwatched:
            self._always.update(p for p in paths if self._in_unwatched(p))

    def _in_unwatched(self, path: str) -> bool:
        d = posixpath.dirname(path)
        while True:
            if d in self._unwatched:
                return True
            if not d:
                return False
            d = posixpath.dirname(d)

    def changed(self) -> set[str] | None:
        """The paths (relative) the kernel reported since the last call, or None when the
        next look must be a whole one."""
        if self._notify is None:
            return None
        try:
            events = self._notify.read()
        except OSError:
            self.close()
            return None
        out: set[str] = set()
        for wd, mask, name in events:
            d = self._dirs.get(wd)
            if mask & _WHOLE or d is None or not name or name == _ATTRIBUTES:
                # A .gitattributes changes how git reads every file below it (line endings,
                # filters) with no file of them written.
                return None
            out.add(posixpath.join(d, os.fsdecode(name)))
        return out

    def rewatch(self, paths: Iterable[str]) -> None:
        """Before a whole look: every watch made again for the directories of `paths`. A
        directory moved away keeps its watch under its old name, so old watches are not
        trusted; what is written from here on is queued for the next look."""
        if self._notify is None:
            return
        self._notify.close()
        self._dirs.clear()
        self._watched.clear()
        self._unwatched.clear()
        self._always.clear()
        self._whole_at = time.monotonic()
        try:
            self._notify = inotify.Inotify()
            st = os.stat(self.workdir)
        except OSError:
            self.close()
            return
        self._root = (st.st_dev, st.st_ino)
        paths = list(paths)
        self.cover(paths)
        root = self.workdir + os.sep
        for p in paths:
            try:
                if os.lstat(root + p).st_nlink > 1:
                    self._always.add(p)
            except OSError:
                pass  # missing: a drifted file, looked at every time anyway

    def _same_root(self) -> bool:
        """Whether the work tree's path still names the directory watched (a parent of it
        moved away and another put in its place is not seen by any watch inside)."""
        try:
            st = os.stat(self.workdir)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._root

    def suspects(
        self, tree: str | None, moved: Callable[[str], list[str] | None]
    ) -> set[str] | None:
        """What a look at `tree` must check: the files that drifted at the last look, those
        written since, those always looked at, and, when the State Map moved, `moved(last
        tree)`: the files whose snapshot differs (None when that is not known). None: look at
        every file (also once `WHOLE_AFTER` seconds have passed since the last whole look,
        which bounds what the kernel does not report: a hard link made since, a write on
        another machine)."""
        events = self.changed()
        if events is None or self._tree is None or tree is None:
            return None
        if time.monotonic() - self._whole_at > WHOLE_AFTER or not self._same_root():
            return None
        if tree != self._tree:
            changed = moved(self._tree)
            if changed is None:
                return None
            self.cover(changed)  # a new file in a directory not watched yet
            events.update(changed)
        return events | self._drifted | self._always

    @property
    def last_tree(self) -> str | None:
        return self._tree

    def looked(self, tree: str | None, drifted: Iterable[str]) -> None:
        """Record a look's conclusion: at `tree`, every file but `drifted` matched."""
        self._tree = tree if self._notify is not None else None
        self._drifted = frozenset(drifted)

    def forget(self) -> None:
        """The next look is a whole one (a look failed half-way)."""
        self._tree = None

    def close(self) -> None:
        if self._notify is not None:
            self._notify.close()
        self._notify = None
        self._tree = None
        self._dirs.clear()
        self._watched.clear()
        self._unwatched.clear()
        self._always.clear()


_WATCHES: dict[str, TreeWatch] = {}
_REGISTRY = threading.Lock()


def _key(workdir: str) -> str:
    return os.path.realpath(workdir)


# File systems whose every write on this machine's files is made by this machine's kernel,
# which reports it. Not NFS, SMB, FUSE (sshfs, Docker Desktop's shares), 9p (WSL's /mnt/c),
# virtiofs: another machine (or the host) writes there unseen.
LOCAL_FILE_SYSTEMS = frozenset(
    "ext2 ext3 ext4 xfs btrfs tmpfs overlay zfs f2fs jfs reiserfs bcachefs nilfs2".split()  # noqa: SIM905
)


def file_system(path: str, mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """The type of the file system `path` is on (the mount whose point is its longest
    prefix, the last one mounted there), or None when that cannot be read."""
    real = os.path.realpath(path)
    best: tuple[int, str] | None = None
    try:
        with open(mountinfo, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if not sep or len(fields) < 5 or not rest:
            continue
        point = _unescape(fields[4])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= best[0]):
            best = (len(point), rest[0])
    return None if best is None else best[1]


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in octal (\\040)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def watch(workdir: str) -> TreeWatch | None:
    """Start watching `workdir` for this process (`tm serve`, `tm mcp`); None where inotify
    is not available or the work tree is not on a local file system: ETV then looks at every
    file, as a command does."""
    key = _key(workdir)
    with _REGISTRY:
        if key in _WATCHES:
            return _WATCHES[key]
        if file_system(workdir) not in LOCAL_FILE_SYSTEMS:
            return None
        try:
            w = TreeWatch(workdir)
        except OSError:
            return None
        _WATCHES[key] = w
        return w


def watching(workdir: str) -> TreeWatch | None:
    """This process's watch of `workdir`, if it started one (and it still works)."""
    if not _WATCHES:
        return None
    w = _WATCHES.get(_key(workdir))
    return None if w is None or w.broken else w


def stop_all() -> None:
    with _REGISTRY:
        for w in _WATCHES.values():
            w.close()
        _WATCHES.clear()
