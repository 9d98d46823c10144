"""Reading files from the work tree the way git would store them (filters applied)."""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tinymem.gitobjects import blob_id
from tinymem.repository import Repo

if TYPE_CHECKING:
    from pygit2.filter import FilterList

# Larger files get a snapshot but no entities: parsing them would dominate every operation
# and no small model can take them in one prompt anyway.
MAX_ENTITY_BYTES = 1 << 20
_BINARY_PROBE = 8000  # git's own heuristic: a NUL byte in the first 8000 bytes


class NotAFileError(OSError):
    """The path exists but is a symlink, directory or special file."""


class ThroughSymlinkError(NotAFileError):
    """A directory on the file's way is a symlink: what it leads to is not the work tree's
    (git itself sees the file as deleted), so its text must never enter the State Map."""

    def __init__(self, rel: str, link: str) -> None:
        super().__init__(f"{rel} is reached through a symlink ({link})")
        self.rel, self.link = rel, link

    @property
    def why(self) -> str:
        """The reason as status shows it beside the path."""
        return f"reached through the symlink {self.link}"


@dataclass(frozen=True)
class WorktreeFile:
    path: str
    oid: str  # blob id git would give this file (after filters)
    data: bytes  # the filtered content, i.e. the blob's bytes
    executable: bool

    @property
    def kind(self) -> str:
        return classify(self.data)


def worktree_form(raw: bytes | None, stored: bytes | None, new: bytes) -> bytes:
    """`new` (text as git stores it) in the line endings the work-tree file has. When git's
    filters turned the file's CRLF into the stored LF (`core.autocrlf`, `eol` attributes),
    `new` gets CRLF back, as a checkout would give it: writing it with LF would change every
    line of the file."""
    if raw is None or stored is None or raw == stored or b"\r\n" not in raw:
        return new
    if raw.replace(b"\r\n", b"\n") != stored:
        return new
    return _LONE_LF.sub(b"\r\n", new)


_LONE_LF = re.compile(rb"(?<!\r)\n")


def classify(data: bytes) -> str:
    if b"\x00" in data[:_BINARY_PROBE]:
        return "binary"
    if len(data) > MAX_ENTITY_BYTES:
        return "oversize"
    return "text"


# Opening with O_NOFOLLOW and asking the open file what it is takes one system call less than
# lstat-then-open, leaves no window for the path to change in between, and never blocks on a
# FIFO (O_NONBLOCK). Where the flags do not exist (Windows), lstat first.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = hasattr(os, "O_NOFOLLOW")


def read_regular(path: str, dir_fd: int | None = None) -> tuple[bytes, os.stat_result]:
    """The content and status of a regular file (`path` relative to `dir_fd` when given).
    Raises NotAFileError for a symlink, directory or special file, and OSError when it is
    missing or unreadable."""
    if not _NOFOLLOW:
        st = os.lstat(path, dir_fd=dir_fd)
        if stat.S_ISLNK(st.st_mode):
            raise NotAFileError(f"{path} is a symlink")
    try:
        fd = os.open(path, _OPEN_FLAGS | getattr(os, "O_BINARY", 0), dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and _is_link(path, dir_fd):  # EMLINK: BSD
            raise NotAFileError(f"{path} is a symlink") from exc
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotAFileError(f"{path} is not a regular file")
        chunks = [os.read(fd, st.st_size + 1)]  # one more byte: a file that grew is read on
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 20))
        return b"".join(chunks), st
    finally:
        os.close(fd)


def _is_link(path: str, dir_fd: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_AT = os.open in os.supports_dir_fd and _NOFOLLOW


def symlinked_dir(workdir: str, rel: str, memo: dict[str, bool] | None = None) -> str | None:
    """The first directory on `rel`'s way that is a symlink (repository path), else None.
    `memo` keeps what was learnt per directory across the calls of one pass."""
    parts = rel.split("/")[:-1]
    for i in range(len(parts)):
        prefix = "/".join(parts[: i + 1])
        linked = memo.get(prefix) if memo is not None else None
        if linked is None:
            linked = os.path.islink(os.path.join(workdir, prefix))
            if memo is not None:
                memo[prefix] = linked
        if linked:
            return prefix
    return None


def read_in_tree(workdir: str, rel: str) -> tuple[bytes, os.stat_result]:
    """`read_regular` for work-tree file `rel`, its directories opened one at a time without
    following a symlink (the rule `writing/safedir.py` keeps for writes): a directory replaced
    by a symlink to elsewhere must not pass that place's files off as the work tree's.
    Raises ThroughSymlinkError then."""
    parts = rel.split("/")
    if not _AT:
        # No openat: the same rule checked by name (a race remains; only on such systems).
        link = symlinked_dir(workdir, rel)
        if link is not None:
            raise ThroughSymlinkError(rel, link)
        return read_regular(os.path.join(workdir, *parts))
    fd = os.open(workdir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for i, name in enumerate(parts[:-1]):
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR) and _is_link(name, fd):
                    raise ThroughSymlinkError(rel, "/".join(parts[: i + 1])) from exc
                if exc.errno == errno.ENOTDIR:
                    # A file where the path has a directory: there is no file at `rel`
                    # (a directory git or the user turned into a file of its name, #29).
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", rel) from exc
                raise
            os.close(fd)
            fd = child
        return read_regular(parts[-1], dir_fd=fd)
    finally:
        os.close(fd)


def read_file(repo: Repo, rel: str) -> WorktreeFile:
    """Raises OSError (incl. NotAFileError, ThroughSymlinkError) when the file is missing,
    unreadable, not regular or reached through a symlinked directory."""
    raw, st = read_in_tree(repo.workdir, rel)
    executable = bool(st.st_mode & 0o100)
    return WorktreeFile(rel, *_stored(repo, rel, raw), executable)


def _stored(repo: Repo, rel: str, raw: bytes) -> tuple[str, bytes]:
    """(blob id, blob bytes) of `raw` as git would store it at `rel`. git's filters are
    applied to the bytes already read, never by reading the path again: that path may have
    changed, or lead through a symlink, since."""
    if not repo.filters_possible:
        return blob_id(raw), raw
    from pygit2.enums import FilterMode

    filters = repo.git.load_filter_list(rel, FilterMode.CLEAN)
    if filters is None:
        return blob_id(raw), raw
    data = _apply(filters, raw)
    return blob_id(data), data


def _apply(filters: FilterList, raw: bytes) -> bytes:
    """`raw` through libgit2's clean filters, every byte of the result kept. pygit2's own
    `apply_to_buffer` reads the result as a C string, so it ends at the first NUL byte: a PNG
    under autocrlf or text=auto came back as its first 8 bytes, was stored as text and then
    overwritten by a text proposal. So the call is made here with the buffer's length."""
    try:
        from pygit2.errors import check_error
        from pygit2.ffi import C, ffi

        pointer = filters._pointer
        apply_to_buffer = C.git_filter_list_apply_to_buffer
        dispose = C.git_buf_dispose
    except (ImportError, AttributeError):  # a pygit2 without these: its own call, guarded
        return _guarded(raw, filters.apply_to_buffer(raw))
    buf = ffi.new("git_buf *")
    check_error(apply_to_buffer(buf, pointer, raw, len(raw)))
    try:
        return bytes(ffi.buffer(buf.ptr, buf.size)) if buf.size else b""
    finally:
        dispose(buf)


def _guarded(raw: bytes, data: bytes) -> bytes:
    """A result that may have been cut at a NUL byte (pygit2's `apply_to_buffer`). git's
    line-ending filters never convert binary content (a NUL in its first 8000 bytes), so for
    such content the raw bytes are what git stores; otherwise a result with no NUL where the
    raw bytes have one was cut, and the raw bytes are the safer guess (never shorter)."""
    if b"\x00" in raw and b"\x00" not in data:
        return raw
    return data


def stored_id(repo: Repo, rel: str, raw: bytes) -> str:
    """git's blob id for bytes `raw` stored at `rel` (filters applied)."""
    return _stored(repo, rel, raw)[0]


def hash_file(repo: Repo, rel: str) -> str:
    """git's blob id for the work-tree file (filters applied), without keeping its content."""
    raw, _ = read_in_tree(repo.workdir, rel)
    return _stored(repo, rel, raw)[0]
