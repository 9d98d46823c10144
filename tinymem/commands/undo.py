"""`tm undo [EPISODE]`: take back what an accept, adopt or undo episode wrote."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer

from tinymem.commands import completers
from tinymem.commands.output import diff_markup, emit_json, escape, out, stdout_styled

if TYPE_CHECKING:
    from tinymem.undo import UndoResult


def register(app: typer.Typer) -> None:
    app.command("undo")(undo_cmd)


def undo_cmd(
    episode: str = typer.Argument(
        None,
        help="Episode id or ledger commit id, as tm log prints them (a prefix is enough);"
        " default: the branch's latest accept not undone.",
        autocompletion=completers.episodes,
        metavar="[EPISODE]",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Undo even files changed since the episode (by a later one or by hand); their"
        " current text is kept in the vault first, and the undo names where.",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the diff it would write; write and record nothing."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what was undone as JSON."),
) -> None:
    """Give every file an accept (or adopt) episode changed its text from before it back:
    files it created are removed, files it deleted come back. Written all or nothing, like
    an accept, and recorded as an `undo` episode; undoing an undo redoes.

    Refused (exit 12), naming the entities, when any file changed since the episode: a later
    episode recorded other text, or you edited it. --force undoes it all the same and keeps
    the current text in the vault (`tm show` of the undo prints `git cat-file -p` for it).
    Exit 2 for an episode of another branch, one that wrote no file, or one already undone.
    Run `git diff` afterwards: the undone change shows as an ordinary modification.
    """
    from tinymem.sync import open_synced
    from tinymem.undo import undo

    repo = open_synced()
    result = undo(repo, episode, force=force, dry_run=dry_run)
    if as_json:
        emit_json(_doc(result))
        return
    _report(result)


def _diffs(result: UndoResult) -> list[str]:
    from tinymem.accept import unified_diff

    return [unified_diff(fp) for fp in result.plan.files if fp.after != fp.before]


def _action(before: bytes | None, after: bytes | None) -> str:
    if after is None:
        return "removed"
    return "recreated" if before is None else "restored"


def _doc(result: UndoResult) -> dict[str, Any]:
    from tinymem.gitobjects import blob_id

    p = result.plan
    c = result.committed
    return {
        "dry_run": c is None,
        "episode": c.episode.id if c else None,
        "commit": c.commit if c else None,
        "undid": p.target.id,
        "undid_kind": p.target.kind,
        "files": [
            {"path": fp.path, "action": _action(fp.before, fp.after)}
            for fp in p.files
            if fp.after != fp.before
        ],
        "changed_since": p.changed,
        "kept": {path: blob_id(text) for path, text in sorted(p.kept.items())},
        "diff": "".join(_diffs(result)),
    }


def _report(result: UndoResult) -> None:
    from tinymem.gitobjects import blob_id

    p = result.plan
    con = out()
    if result.committed is None:
        styled = stdout_styled()
        for diff in _diffs(result):
            if styled:
                for line in diff_markup(diff):
                    con.print(line)
            else:
                sys.stdout.write(diff)
        con.print(
            f"Dry run: undoing {p.target.kind} {p.target.id} would write the above; nothing"
            " was written."
        )
        return
    for fp in p.files:
        if fp.after != fp.before:
            con.print(f"{_action(fp.before, fp.after)}  {escape(fp.path)}")
    for path, text in sorted(p.kept.items()):
        con.print(
            f"your text of {escape(path)} is kept in the vault; print it with:"
            f" git cat-file -p {blob_id(text)}"
        )
    ep = result.committed.episode
    con.print(
        f"Undid {p.target.kind} {p.target.id}: episode {ep.id} (commit"
        f" {result.committed.commit[:12]}); `tm undo {ep.id}` redoes it."
    )
    con.print("Next: git diff to review, then commit it.")
