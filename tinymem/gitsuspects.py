"""The first pass of ETV done by git itself: which files could differ from their snapshot.

git compares the work tree with its index in C with parallel lstat (core.preloadIndex) and
handles racily clean entries by content; a Python loop over 50,000 files cannot match that.
A file can differ from the State Map's snapshot only if
  - its index entry differs from the snapshot (`git diff-index --cached <files tree>`), or
  - its work-tree text differs from its index entry (`git diff-files`).
Everything else is fresh. Nothing is written: `--no-optional-locks` keeps git from
refreshing the user's index.

git skips entries marked assume-unchanged or skip-worktree, so then (and whenever git fails)
the answer is None and ETV falls back to its own stat cache: fail safe, only slower.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor

from tinymem.repository import Repo

_TIMEOUT = 60


def _git(repo: Repo, *args: str) -> bytes | None:
    try:
        proc = subprocess.run(
            ["git", "--no-optional-locks", *args],
            cwd=repo.workdir,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _names(out: bytes) -> set[str]:
    return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}


def suspects(repo: Repo, files_tree: str) -> set[str] | None:
    """Paths that may differ from their snapshot, or None when git cannot tell us."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        flags = pool.submit(_git, repo, "ls-files", "-v", "-z")
        cached = pool.submit(
            _git, repo, "diff-index", "--cached", "--no-renames", "--name-only", "-z", files_tree
        )
        worktree = pool.submit(_git, repo, "diff-files", "--name-only", "-z")
        tags, against_snapshot, against_index = flags.result(), cached.result(), worktree.result()
    if tags is None or against_snapshot is None or against_index is None:
        return None
    # `ls-files -v` tags assume-unchanged entries in lower case and skip-worktree with "S".
    for entry in tags.split(b"\0"):
        if entry and (entry[:1].islower() or entry[:1] == b"S"):
            return None
    return _names(against_snapshot) | _names(against_index)
