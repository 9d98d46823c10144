"""Reading files from the work tree the way git would store them (filters applied)."""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass

from tinymem.gitobjects import blob_id, read_blob
from tinymem.repository import Repo

# Larger files get a snapshot but no entities: parsing them would dominate every operation
# and no small model can take them in one prompt anyway.
MAX_ENTITY_BYTES = 1 << 20
_BINARY_PROBE = 8000  # git's own heuristic: a NUL byte in the first 8000 bytes


class NotAFileError(OSError):
    """The path exists but is a symlink, directory or special file."""


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


def read_regular(path: str) -> tuple[bytes, os.stat_result]:
    """The content and status of a regular file. Raises NotAFileError for a symlink,
    directory or special file, and OSError when it is missing or unreadable."""
    if not _NOFOLLOW:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            raise NotAFileError(f"{path} is a symlink")
    try:
        fd = os.open(path, _OPEN_FLAGS | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):  # EMLINK: BSD
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


def read_file(repo: Repo, rel: str) -> WorktreeFile:
    """Raises OSError (incl. NotAFileError) when the file is missing, unreadable or not regular."""
    full = repo.abspath(rel)
    raw, st = read_regular(full)
    executable = bool(st.st_mode & 0o100)
    raw_oid = blob_id(raw)
    if not repo.filters_possible:
        return WorktreeFile(rel, raw_oid, raw, executable)
    oid = str(repo.git.hashfile(full, as_path=rel))
    if oid == raw_oid:
        return WorktreeFile(rel, oid, raw, executable)
    # The common filter is CRLF -> LF; confirm it reproduces git's id before trusting it.
    lf = raw.replace(b"\r\n", b"\n")
    if blob_id(lf) == oid:
        return WorktreeFile(rel, oid, lf, executable)
    # Any other filter (ident, custom drivers): let libgit2 produce the blob.
    stored = repo.git.create_blob_fromworkdir(rel)
    return WorktreeFile(rel, str(stored), read_blob(repo.git, stored), executable)


def hash_file(repo: Repo, rel: str) -> str:
    """git's blob id for the work-tree file (filters applied), without keeping its content."""
    full = repo.abspath(rel)
    if not repo.filters_possible:
        with open(full, "rb") as f:
            return blob_id(f.read())
    return str(repo.git.hashfile(full, as_path=rel))
