"""`tm hook run pre-commit`: the check and what it says on stderr.

The installed hook runs on every `git commit`, so `entry.main` comes here without the command
line (typer, rich and every command's module: about half of the hook's time); `tm hook run`
typed by hand goes through `commands/hooks.py` to the same `pre_commit`.
"""

from __future__ import annotations

import sys

from tinymem.errors import EXIT_CHECK_FAILED

__all__ = ["main", "pre_commit"]


def pre_commit() -> int:
    """Run the check; the exit code (1: the commit is refused)."""
    from tinymem.hook import check, render_refusal
    from tinymem.repository import open_repo

    report = check(open_repo())
    if report.refusals:
        print(render_refusal(report), file=sys.stderr)
        return EXIT_CHECK_FAILED
    for key, commit in report.moved_back:
        print(
            f"tinymem: {key} is the version HEAD holds: the branch moved back past"
            f" {commit[:12]}, which held a newer one (git reset, a rebase), so this is"
            " not a stale buffer.",
            file=sys.stderr,
        )
    for path in report.hand_edits:
        print(
            f"tinymem: {path} has hand edits the State Map has not recorded;"
            f" `tm adopt {path}` would record them.",
            file=sys.stderr,
        )
    return 0


def main() -> None:
    """What the installed hook runs: the check, ended as `cli.main` ends a command."""
    from tinymem.failures import exit_for

    try:
        code = pre_commit()
    except (KeyboardInterrupt, Exception) as exc:
        exit_for(exc)
    sys.exit(code)
