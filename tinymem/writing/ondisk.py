"""What a work-tree file holds right before tm writes it: the text every write's check (ETV,
and the re-hash right before each rename) compares with what the State Map or the plan says."""

from __future__ import annotations

from tinymem.errors import StaleError, UnsafePathError
from tinymem.repository import Repo
from tinymem.worktree import ThroughSymlinkError, read_file

__all__ = ["disk_text"]


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
    except OSError as exc:
        raise StaleError(f"{rel} cannot be read ({exc}); nothing was written") from exc
    return wf.data, wf.oid
