"""An accept that writes a file where the State Map holds live files of the other kind (a
file turned into a directory of its name, or the reverse): checked before, recorded after."""

from __future__ import annotations

from tinymem.acceptplan import GateResult, Plan
from tinymem.displacing import live_displaced, regular_file
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import Episode
from tinymem.repository import Repo
from tinymem.statemap import StateView
from tinymem.transitions import TreeEdits, apply_update, record_deletion


def check_displaced(repo: Repo, view: StateView, plan_: Plan) -> None:
    """A file written where the State Map holds live files of the other kind (a file `lib`
    that the user turned into a directory, then `lib/new.py` proposed; or `lib/` removed, then
    a file `lib`): as `tm adopt` does, those the work tree holds no regular file of are
    recorded deleted by the accept (`end_displaced`), and their records leave the State Map.
    One the work tree still holds as a file blocks at gate A: tm never removes it (#29)."""
    looked: set[str] = set()  # directories with no record of a file of their name
    for path, fp in plan_.files.items():
        if fp.after is None or not fp.proposals:
            continue
        checks = [c for c in plan_.checks if c.proposal.path == path and c.ok]
        for other in live_displaced(view, path, looked):
            with_it = plan_.files.get(other)
            if with_it is not None and with_it.proposals and with_it.after is None:
                continue  # this accept deletes it
            if with_it is not None and with_it.proposals:
                why = f"{path} and {other} cannot both be files; accept one of them"
            elif regular_file(repo.abspath(other)):
                why = (
                    f"the work tree still holds the tracked file {other} where {path} would go;"
                    f" tm does not remove it: remove it and accept again (or run `tm adopt"
                    f" {other}` first, which records its deletion)"
                )
            else:
                for c in checks:
                    c.notes.append(
                        f"{other} is no longer a file in the work tree ({path} takes its"
                        " place): recorded deleted"
                    )
                continue
            for c in checks:
                c.gates.append(GateResult("A", False, why))
            break


def end_displaced(
    view: StateView,
    writer: ObjectWriter,
    episode: Episode,
    edits: TreeEdits,
    path: str,
    looked: set[str],
) -> None:
    """The live files of the other kind that `path`, written, takes the place of: gone from
    the work tree (`check_displaced` checked it), recorded deleted before they leave (#29)."""
    # Those this accept deleted already are left out.
    for other in live_displaced(view, path, looked, episode.files):
        old = view.meta(other)
        assert old is not None
        reason = f"gone from the work tree: {path} took its place"
        apply_update(writer, record_deletion(old, episode=episode, reason=reason), episode, edits)
