"""What a work-tree file holds right before tm writes it: the text every write's check (ETV,
and the re-hash right before each rename) compares with what the State Map or the plan says."""

from __future__ import annotations

from tinymem.errors import StaleError, UnsafePathError
from tinymem.gitobjects import blob_id
from tinymem.repository import Repo
from tinymem.worktree import NotAFileError, ThroughSymlinkError, WorktreeFile, read_file
from tinymem.writing.safedir import is_directory

__all__ = ["as_written", "disk_text"]


def disk_text(repo: Repo, rel: str) -> tuple[bytes | None, str | None]:
    """(the text of work-tree file `rel` as git stores it, its blob id); (None, None) when
    there is no such file. A file that cannot be read, or is reached through a symlinked
    directory, refuses the write (nothing was written yet)."""
    try:
        wf = read_file(repo, rel)
    except FileNotFoundError:
        return None, None
    except ThroughSymlinkError as exc:  # a directory became a symlink since it was planned
        raise UnsafePathError(
            f"{exc}: tm writes inside the work tree only; nothing was written"
        ) from exc
    except NotAFileError as exc:
        if is_directory(repo.workdir, rel):
            # No file there (a file turned into a directory of its name): a write refuses
            # it unless its transaction emptied it (`transaction._make_room`).
            return None, None
        raise StaleError(f"{rel} cannot be read ({exc}); nothing was written") from exc
    except OSError as exc:
        raise StaleError(f"{rel} cannot be read ({exc}); nothing was written") from exc
    return wf.data, wf.oid


def as_written(repo: Repo, rel: str, data: bytes) -> WorktreeFile:
    """Work-tree file `rel` as tm wrote it (`data`, as git stores it), with the mode it has:
    what an episode records. Never its text read again after the rename: an editor may have
    saved since, and that save is the user's hand edit (STALE), not the written text."""
    try:
        executable = read_file(repo, rel).executable
    except OSError:
        executable = False
    return WorktreeFile(rel, blob_id(data), data, executable)
