"""`tm diff | accept | reject`."""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING

import typer

from tinymem.commands import completers
from tinymem.commands.output import diff_markup, emit_json, escape, out, page, stdout_styled
from tinymem.errors import GateBlockedError

if TYPE_CHECKING:
    from tinymem.accept import AcceptResult


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_cmd)
    app.command("accept")(accept_cmd)
    app.command("reject")(reject_cmd)


def diff_cmd(
    ids: list[str] = typer.Argument(
        None,
        help="Proposal ids (default: every pending one).",
        autocompletion=completers.proposals,
        metavar="[IDS]...",
    ),
    stat: bool = typer.Option(False, "--stat", help="Only count changed lines per file."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Show the unified diff that accepting would write, with each proposal's gate results.

    The gates are run now (not as they stood when the model answered); nothing is written.
    """
    from tinymem.accept import select
    from tinymem.ledger import current
    from tinymem.proposalview import proposal_doc
    from tinymem.sync import open_synced

    repo = open_synced()
    view = current(repo)
    chosen = select(view, list(ids or []), every=not ids)
    docs = [proposal_doc(repo, view, p) for p in chosen]
    if as_json:
        emit_json({"proposals": docs})
        return
    page()
    # Decided after paging: `stdout_styled` knows the pager shows a terminal, where isatty()
    # would see the pager's pipe and drop the colours.
    styled = stdout_styled()
    if not docs:
        out().print("No pending proposals.")
        return
    con = out()
    for d in docs:
        ents = ", ".join(f"{e['op']} {e['symbol']}" for e in d["entities"])
        where = "(note)" if d["note"] else str(d["path"])
        con.print(f"[bold]proposal {d['id']}[/]  {escape(where)}  {escape(ents)}".rstrip())
        if d["blocked"]:
            con.print(f"  [red]blocked[/] {escape(d['blocked'])}")
            if not d["diff"]:
                continue
            con.print(
                f"  [yellow]preview[/] this is what `{escape(str(d['preview']))}` would write"
            )
        if d["note"]:
            asked = d["note"]
            on = ", ".join(asked["anchors"]) or "nothing (the reply changed no code)"
            con.print(f"  [yellow]remember[/] {asked['kind']}: {escape(asked['text'])}")
            con.print(f"  [yellow]anchored to[/] {escape(on)}")
        for note in d["notes"]:
            con.print(f"  [yellow]note[/] {escape(note)}")
        if stat:
            con.print(f"  +{d['added']} -{d['removed']}")
        elif styled:
            for line in diff_markup(d["diff"]):
                con.print(line)
        else:
            sys.stdout.write(d["diff"])


def accept_cmd(
    refs: list[str] = typer.Argument(
        None,
        help="Proposal ids or entities (path::Symbol).",
        autocompletion=completers.entities_and_proposals,
        metavar="[ID|ENTITY]...",
    ),
    every: bool = typer.Option(False, "--all", help="Every pending proposal."),
    overwrite_stale: list[str] = typer.Option(
        None,
        "--overwrite-stale",
        metavar="ENTITY|PATH",
        help="Replace this STALE entity's on-disk text, or a whole file's (by its path); your"
        " text is kept in the vault. Repeatable.",
    ),
    placed: list[str] = typer.Option(
        None,
        "--path",
        metavar="FILE",
        help="Confirm FILE as the place of a proposal whose reply named no file (tm inferred"
        " it; `tm diff` shows what it would write). Repeatable.",
    ),
    allow_delete: bool = typer.Option(
        False,
        "--allow-delete",
        help="Let a proposal that removes code delete it: a DELETE line, or a diff or"
        " SEARCH/REPLACE block that takes a definition out. Code a reply merely leaves out is"
        " never deleted.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print what was promoted, blocked and written as JSON."
    ),
) -> None:
    """Promote proposals: run the gates again now, then write every file or none.

    Exit 0 when everything asked for was promoted; exit 5 when a gate blocked any proposal
    (one line each says which gate and what to do). Blocked proposals stay pending and their
    files are untouched; the proposals that passed are promoted and written all the same (a
    file is written only when every proposal for it passes: the others for it are held back,
    pending, and `tm accept ID` applies one alone).
    """
    from tinymem.accept import accept
    from tinymem.sync import open_synced

    repo = open_synced()
    ref = repo.state_ref
    before = repo.state_tip(ref)
    try:
        result = accept(
            repo,
            list(refs or []),
            every=every,
            overwrite_stale=set(overwrite_stale or []),
            allow_delete=allow_delete,
            placed={repo.rel(f) for f in placed or []},
        )
        if as_json:
            _json_accept(result)
        else:
            _report_accept(result)
    except KeyboardInterrupt:
        # Once the ledger commit is made the accept is complete (files written, episode
        # recorded): an interrupt after it must not leave the user believing it was undone.
        from tinymem.writing.recovery import accept_recorded_since

        episode = accept_recorded_since(repo, ref, before)
        if episode is None:
            raise  # before the ledger commit: rolled back ("tm: interrupted")
        print(
            f"tm: interrupted after the accept was recorded (episode {episode}); its files"
            f" are written, `tm show {episode}` lists what it promoted",
            file=sys.stderr,
        )
        raise typer.Exit(130) from None


def _json_accept(result: AcceptResult) -> None:
    from tinymem.proposalview import accept_doc

    doc = accept_doc(result)
    emit_json(doc)
    if doc["blocked"]:
        raise GateBlockedError(f"{len(doc['blocked'])} proposal(s) blocked; they stay pending")


def _report_accept(result: AcceptResult) -> None:
    con = out()
    for c in result.plan.checks:
        gates = "  ".join(f"{g.gate}:{'pass' if g.ok else 'BLOCKED'}" for g in c.gates)
        if c.ok:
            where = c.proposal.path or ("(note)" if c.proposal.note else "?")
            con.print(f"promoted {c.proposal.id}  {escape(where)}  {gates}")
            for note in c.notes:
                con.print(f"  note: {escape(note)}")
    from tinymem.gitobjects import blob_id

    for key, text in sorted(result.plan.overwritten.items()):
        con.print(
            f"your text of {escape(key)} is kept in the vault; print it with:"
            f" git cat-file -p {blob_id(text)}"
        )
    if result.committed is not None:
        ep = result.committed.episode
        con.print(f"Episode {ep.id} (commit {result.committed.commit[:12]}).")
        written = sorted({c.proposal.path for c in result.plan.checks if c.ok and c.proposal.path})
        con.print(
            "Next: git diff to review what was written, then commit it: git commit "
            + " ".join(shlex.quote(p) for p in written)
        )
    blocked = [c for c in result.plan.checks if not c.ok]
    if blocked:
        from tinymem.acceptadvice import blocked_line

        for c in blocked:
            line = blocked_line(c)
            print(f"blocked {c.proposal.id} by gate {line}", file=sys.stderr)
        promoted = sum(1 for c in result.plan.checks if c.ok)
        raise GateBlockedError(
            f"{len(blocked)} proposal(s) blocked; they stay pending, their files untouched"
            + (f"; {promoted} other(s) promoted" if promoted else "; nothing was written")
        )


def reject_cmd(
    refs: list[str] = typer.Argument(
        None,
        help="Proposal ids or entities.",
        autocompletion=completers.entities_and_proposals,
        metavar="[ID|ENTITY]...",
    ),
    every: bool = typer.Option(False, "--all", help="Every pending proposal."),
    why: str = typer.Option(
        None,
        "--why",
        metavar="TEXT",
        help="Remember why: each rejection becomes a `tried` note on what the proposal"
        ' changed ("rejected: ...: TEXT"), shown to the model the next time a prompt is'
        " about that code.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what was rejected as JSON."),
) -> None:
    """Drop proposals from the pending set; their artifacts stay in the vault.

    With --why, the reason is kept as a `tried` note in the same episode (`tm note list
    --kind tried`), so the model is told what was rejected and why instead of proposing it
    again.
    """
    from tinymem.accept import reject, select
    from tinymem.ledger import current
    from tinymem.sync import open_synced

    repo = open_synced()
    chosen = [p.id for p in select(current(repo), list(refs or []), every)]
    committed = reject(repo, list(refs or []), every=every, why=why)
    notes = sorted(committed.episode.notes)
    if as_json:
        emit_json(
            {
                "episode": committed.episode.id,
                "commit": committed.commit,
                "rejected": chosen,
                "notes": notes,
            }
        )
        return
    out().print(f"{committed.episode.summary} (episode {committed.episode.id}).")
    if notes:
        out().print(f"Remembered as tried note(s) {', '.join(notes)}: `tm note list --kind tried`.")
