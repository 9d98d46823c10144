"""The next tm command after a crash mid-accept: finish it or roll it back, and say so."""

from __future__ import annotations

from tinymem.repository import Repo
from tinymem.writing import journal
from tinymem.writing.transaction import recorded, remove_leftovers, roll_back

__all__ = ["recover"]


def recover(repo: Repo) -> str | None:
    """One sentence on what was done about an interrupted accept, or None (there was none,
    or the accept is still running in another process)."""
    with journal.held(repo, wait=False) as mine:
        if not mine:
            return None
        intent = journal.read(repo)
        if intent is None:
            return None
        if recorded(repo, intent):
            remove_leftovers(repo, intent)
            journal.clear(repo)
            return (
                f"an interrupted tm accept had been recorded (episode {intent.episode});"
                " its leftover temporary files were removed"
            )
        done = roll_back(repo, intent)
        journal.clear(repo)
        message = (
            f"an interrupted tm accept (started {intent.started}) was rolled back:"
            f" {len(done.restored)} file(s) restored to their text before it"
        )
        if done.kept:
            message += (
                "; changed since, left as they are: " + ", ".join(done.kept) + " (`tm status`)"
            )
        return message + "; its proposals are still pending"
