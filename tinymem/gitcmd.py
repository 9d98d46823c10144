"""Running the git command line, for the questions git answers from its index faster than a
Python walk could. Imports nothing heavy: `tm status` calls it before pygit2 is loaded."""

from __future__ import annotations

import subprocess

# Seconds any one git command may take before tm stops waiting: a git stuck on a lock, a
# credential prompt or a dead network filesystem must end as an answer, not a wait for ever.
TIMEOUT = 60


def git_output(cwd: str, *args: str) -> bytes | None:
    """stdout of `git ARGS` run in `cwd` without taking optional locks (the user's index is
    never refreshed behind their back); None when git fails, cannot run or
    is still running after `TIMEOUT` seconds."""
    try:
        proc = subprocess.run(
            ["git", "--no-optional-locks", *args],
            cwd=cwd,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def repo_git_output(git_dir: str, workdir: str, *args: str) -> bytes | None:
    """`git_output` for this repository and work tree, named explicitly: GIT_DIR or
    GIT_WORK_TREE in the environment must not point git at another directory."""
    return git_output(workdir, f"--git-dir={git_dir}", f"--work-tree={workdir}", *args)
