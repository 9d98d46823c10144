"""The next tm command after a crash mid-accept: finish it or roll it back, and say so."""

from __future__ import annotations

from tinymem.repository import Repo
from tinymem.writing import journal
from tinymem.writing.transaction import Rollback, recorded, remove_leftovers, roll_back

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
        if intent.kind == "adopt":
            return _adopt(repo, intent)
        command = "tm undo" if intent.kind == "undo" else "tm accept"
        if recorded(repo, intent):
            remove_leftovers(repo, intent)
            journal.clear(repo)
            return (
                f"an interrupted {command} had been recorded (episode {intent.episode});"
                " its leftover temporary files were removed"
            )
        done = roll_back(repo, intent)
        journal.clear(repo)
        message = (
            f"an interrupted {command} (started {intent.started}) was rolled back:"
            f" {len(done.restored)} file(s) restored to their text before it"
        )
        if done.kept:
            message += (
                "; changed since, left as they are: " + ", ".join(done.kept) + " (`tm status`)"
            )
        message += _in_the_way(done)
        if intent.kind == "undo":
            return message + "; the episode it was undoing is as it was (`tm undo` again)"
        return message + "; its proposals are still pending"


def _adopt(repo: Repo, intent: journal.Intent) -> str:
    """An interrupted paste (`tm adopt --path`, `POST /v1/user/code`): rolled back unless
    recorded, and the text it replaced named either way (the user's own, maybe adopted
    nowhere): its blob went to the object database before the file was touched."""
    replaced = [f for f in intent.files if f.before is not None and f.before != f.after]
    named = "; ".join(
        f"the text it replaced in {f.path} is kept as {f.before} (git cat-file -p {f.before})"
        for f in replaced
    )
    if recorded(repo, intent):
        remove_leftovers(repo, intent)
        journal.clear(repo)
        message = f"an interrupted tm adopt --path had been recorded (episode {intent.episode})"
        return message + (f"; {named}" if named else "")
    done = roll_back(repo, intent)
    journal.clear(repo)
    message = f"an interrupted tm adopt --path (started {intent.started}) was rolled back"
    if done.restored:
        message += ": " + ", ".join(done.restored) + " hold(s) their text before the paste again"
    if done.kept:
        message += "; changed since, left as they are: " + ", ".join(done.kept)
    return message + (f"; {named}" if named else "") + "; paste again to adopt it"


def _in_the_way(done: Rollback) -> str:
    """The files whose old text could not come back (a file or directory of the other kind
    in their place), each with the blob that holds that text."""
    return "".join(
        f"; {path} could not get its text back (a file or directory is in its place):"
        f" it is kept as {blob} (git cat-file -p {blob})"
        for path, blob in sorted(done.in_the_way.items())
    )


def accept_recorded_since(repo: Repo, ref: str, tip: str | None, *, depth: int = 20) -> str | None:
    """The id of the accept episode the ledger `ref` recorded after `tip`, or None: what an
    interrupted `tm accept` asks to learn whether it got as far as its ledger commit (accepts
    run one at a time, under the accept lock)."""
    import pygit2

    from tinymem.ledger import message_trailer

    at = repo.state_tip(ref)
    for _ in range(depth):
        if at is None or at == tip:
            return None
        commit = repo.git[at]
        if not isinstance(commit, pygit2.Commit):
            return None
        if commit.message.startswith("tm accept:"):
            return message_trailer(commit.message, "Tinymem-Episode")
        parents = commit.parent_ids
        at = str(parents[0]) if parents else None
    return None
