"""`tm merge-ledger`: two copies of one branch's ledger (two people's) made one."""

from __future__ import annotations

import typer

from tinymem.commands.output import emit_json, escape, out, short


def register(app: typer.Typer) -> None:
    app.command("merge-ledger")(merge_ledger_cmd)


def merge_ledger_cmd(
    rev: str = typer.Argument(
        ..., metavar="REV", help="The other ledger's tip: FETCH_HEAD, a ref or a commit id."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what was done as JSON."),
) -> None:
    """Merge another copy of the current branch's ledger into it, proved by a replay.

    Fetch theirs first (git fetch origin refs/tinymem/heads/BRANCH), then
    `tm merge-ledger FETCH_HEAD`, then push (git push origin refs/tinymem/heads/BRANCH).
    A fast-forward when one contains the other; else a ledger commit with both as parents: a
    file only one side changed takes that side's records, a file both changed takes the side
    the work tree holds (or HEAD's committed merge of them), anything else is refused with
    nothing written. Every episode of both is kept; the result must pass `tm rebuild`.
    """
    from tinymem.branches.ledgermerge import merge_ledger
    from tinymem.sync import open_synced

    result = merge_ledger(open_synced(), rev)
    if as_json:
        emit_json(result.to_json())
        return
    con = out()
    if result.outcome == "up to date":
        con.print(f"Already up to date: {short(result.theirs)} is in this branch's ledger.")
        return
    if result.outcome == "fast-forward":
        con.print(
            f"Fast-forward to {short(result.theirs)}: {result.episodes} episode(s) added;"
            f" tm rebuild replayed {result.proved} episode(s) and agrees."
        )
        return
    for p in result.taken:
        con.print(f"took      {escape(p)}  [dim](their records)[/]")
    for p in result.resolved:
        con.print(f"resolved  {escape(p)}  [dim](both changed it: HEAD's merge of them)[/]")
    for p in result.kept:
        con.print(
            f"kept      {escape(p)}  [dim](both changed it; your work tree holds yours: after"
            " git pull, tm adopt --merged records the merge)[/]"
        )
    assert result.commit is not None
    con.print(
        f"Merged {result.episodes} episode(s) of {short(result.theirs)}: ledger commit"
        f" {short(result.commit)} with both as parents; tm rebuild replayed {result.proved}"
        " episode(s) and agrees."
    )
