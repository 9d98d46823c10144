"""`tm init | status | adopt | state | rebuild`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from tinymem.commands.output import (
    emit_json,
    err,
    escape,
    out,
    page,
    short,
    stdout_styled,
    write_rows,
    write_table,
)
from tinymem.errors import EXIT_CHECK_FAILED

if TYPE_CHECKING:
    from tinymem.etv import EtvReport
    from tinymem.repository import Repo


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
    app.command("status")(status_cmd)
    app.command("adopt")(adopt_cmd)
    app.command("state")(state_cmd)
    app.command("rebuild")(rebuild_cmd)


def init_cmd(
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar, no summary."),
    as_json: bool = typer.Option(False, "--json", help="Print what was imported as JSON."),
) -> None:
    """Import the tracked files as the AUTHORITATIVE baseline (source: disk).

    State Maps are per branch: on a branch with none yet, when another branch has one, the
    branch starts from it (as any tm command would; one line says how). Idempotent: run it
    again to import tracked files the State Map does not know yet; files it already knows are
    left alone (use `tm adopt` to record your edits).
    """
    from tinymem.baseline import init
    from tinymem.sync import open_synced

    repo = open_synced()  # a branch with no ledger starts from another branch's first
    show_bar = not quiet and not as_json and err().is_terminal
    if show_bar:
        from rich.progress import Progress

        with Progress(console=err(), transient=True) as bar:
            task = bar.add_task("importing", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)  # called once per chunk of files

            result = init(repo, progress)
    else:
        result = init(repo)
    if as_json:
        c = result.committed
        emit_json(
            {
                "branch": repo.branch,
                "episode": c.episode.id if c else None,
                "commit": c.commit if c else None,
                "imported": result.imported,
                "already": result.already,
                "skipped": [{"path": p, "why": why} for p, why in result.skipped],
            }
        )
        return
    if quiet:
        return
    if result.committed is None:
        out().print(
            f"tm is already initialized on branch {repo.branch}: all {result.already} tracked"
            " files it can record are in its State Map."
        )
    else:
        out().print(
            f"Imported {len(result.imported)} tracked files as the baseline"
            f" (episode {result.committed.episode.id}, commit {short(result.committed.commit)})."
        )
    for path, why in result.skipped:
        err().print(f"skipped {escape(path)}: {why}")
    for line in _after_init(repo):
        out().print(escape(line))


def _after_init(repo: Repo) -> list[str]:
    """What is left to set up after init: the pre-commit hook, and a model of one's own."""
    from tinymem import config as cfg
    from tinymem.hook import installed

    steps: list[str] = []
    if installed(repo) != "current":
        steps.append("tm hook install (refuses commits that would overwrite newer truth)")
    model = cfg.resolve(repo.git)["model"]
    if model.source == "default":
        steps.append(
            f"tm config model NAME (now {model.value}, the default; `tm doctor --model`"
            " checks it answers)"
        )
    steps.append('tm ask "..." to ask the model')
    return ["Next: " + "; ".join(steps) + "."]


def status_cmd(
    paths: list[str] = typer.Argument(
        None, help="Limit to these files or directories.", metavar="[PATHS]..."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    check: bool = typer.Option(False, "--check", help="Exit 1 when anything is STALE."),
) -> None:
    """Show STALE entities and files (the work tree differs from the State Map)."""
    from tinymem.entry import take_early_probe

    # git's comparison of the whole tree, started by the console script before the imports
    # (None when it did not or could not: verify then asks git itself).
    probe = take_early_probe()
    from tinymem.etv import verify
    from tinymem.ledger import current, view_at
    from tinymem.sync import open_synced

    repo = open_synced()
    if probe is not None and not probe.serves(repo.git.path, repo.workdir):
        probe = None  # git found another repository than ours (GIT_DIR, say)
    if probe is not None and probe.commit != repo.state_tip():
        probe = None  # what git committed was recorded since: git compared the old State Map
    view = current(repo) if probe is None else view_at(repo, probe.commit)
    from tinymem.statelist import selection

    selected = selection(repo, paths)
    wanted = None if selected is None else [p for p in view.files() if selected(p)]
    report = verify(repo, view, wanted, probe)
    from tinymem.pendingids import pending_ids

    proposals = pending_ids(repo, view)
    from tinymem.statusview import drifted_notes, merged_drift, status_doc

    merged = merged_drift(repo, report)
    from tinymem.notes.drift import Drift

    # The whole tree was verified: the notes' drift reads that report; with PATHS, the notes'
    # own files are verified.
    drifted = drifted_notes(repo, view, report if selected is None else None)
    if as_json:
        emit_json(status_doc(repo, report, proposals, merged, drifted))
    else:
        styled = stdout_styled()
        rows = _status_rows(report, proposals, styled, repo.state_ref)
        if drifted:
            rows.append("")
        for n in drifted:
            gone = n.drift is Drift.ANCHOR_DELETED
            targets = ", ".join(a.anchor.target for a in n.anchors if a.drift is not Drift.CURRENT)
            rows.append(
                f"Note {n.note.id} ({n.note.kind}) was written for an older version of"
                f" {targets}"
                + (": what it is about was deleted (tm note show " if gone else " (tm note show ")
                + f"{n.note.id}; tm note confirm {n.note.id} if it still holds)."
            )
        if merged is not None:
            found, files = merged
            how = "the merge" if found.what == "merge commit" else "the rebase or pull"
            rows.append(
                f"{len(files)} of these file(s) are as {how} ({short(found.before)} →"
                f" {short(found.after)}) left them: tm adopt --merged records what git wrote."
            )
        write_rows(rows, styled)
    if check and not report.clean:
        raise typer.Exit(EXIT_CHECK_FAILED)


def _status_rows(report: EtvReport, proposals: list[str], styled: bool, ref: str) -> list[str]:
    def mark(text: str, style: str) -> str:
        return f"[{style}]{text}[/]" if styled else text

    def lit(text: str) -> str:
        return escape(text) if styled else text

    rows: list[str] = []
    if report.clean:
        rows.append(f"Clean: the work tree matches the State Map ({report.checked} files).")
    else:
        n = len(report.stale_keys())
        rows.append(
            f"{mark('STALE', 'bold red')}: {len(report.drift)} file(s) differ from the State"
            f" Map, {n} entit{'y' if n == 1 else 'ies'} STALE. STALE entities are not shown to"
            " the model and block its proposals."
        )
        for d in report.drift:
            rows += ["", f"  {mark(lit(d.path), 'bold')}  ({lit(d.why)})"]
            rows += [
                f"    STALE  {lit(e.symbol)}  {mark(lit(f'{e.kind}, {e.why}'), 'dim')}"
                for e in d.stale
            ]
            rows += [
                f"    new    {lit(s)}  {mark('not in the State Map', 'dim')}" for s in d.new_symbols
            ]
            if d.outside:
                rows.append(f"    {mark('text outside any entity changed too', 'dim')}")
        rows += [
            "",
            "To make your edits the truth: tm adopt PATH… (or tm adopt --all).",
            "To discard them: git checkout -- PATH restores the committed text;"
            f" git show {ref}:files/PATH > PATH restores the State Map's.",
        ]
    if proposals:
        rows += ["", f"{len(proposals)} pending proposal(s): tm diff to review them."]
    return rows


def adopt_cmd(
    paths: list[str] = typer.Argument(
        None, help="Files or directories to adopt.", metavar="[PATHS]..."
    ),
    all_stale: bool = typer.Option(False, "--all", help="Adopt every file that differs."),
    paste: str = typer.Option(
        None, "--path", metavar="PATH", help="Read the new content of PATH from stdin (paste)."
    ),
    merged: bool = typer.Option(
        False, "--merged", help="Adopt the files the last merge, pull or rebase changed."
    ),
    since: str = typer.Option(
        None, "--since", metavar="REV", help="With --merged: the commit the branch was at before."
    ),
    allow_empty: bool = typer.Option(
        False, "--allow-empty", help="With --path: accept empty stdin (empties the file)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what was recorded as JSON."),
) -> None:
    """Make your own edits the truth (the user write-head): AUTHORITATIVE at once.

    The working-tree text of each file supersedes whatever the State Map held; new files are
    added; files you deleted are TOMBSTONED (their artifacts stay in the vault). With --path,
    the text on stdin is written to PATH and recorded in one step. With --merged, the files a
    merge (HEAD against its first parent), a pull or a rebase (HEAD against ORIG_HEAD) changed,
    where the work tree still holds what git wrote; the commit is recorded as the evidence.
    """
    from tinymem.adopt import adopt, adopt_content
    from tinymem.errors import UsageError
    from tinymem.sync import open_synced

    repo = open_synced()
    if merged or since is not None:
        if paths or all_stale or paste is not None or not merged:
            raise UsageError("--merged takes no files, and --since goes with --merged")
        _adopt_merged(repo, since, as_json)
        return
    if paste is not None:
        if paths or all_stale:
            raise UsageError("--path takes the content from stdin; do not name other files")
        if sys.stdin.isatty():
            err().print("Paste the content, then Ctrl-D:")
        result = adopt_content(repo, paste, sys.stdin.buffer.read(), allow_empty=allow_empty)
    else:
        result = adopt(repo, list(paths or []), all_stale=all_stale)
    if as_json:
        emit_json(result.to_json())
        return
    con = out()
    if result.committed is None:
        if all_stale and not result.unchanged:
            con.print("Nothing to adopt: every file matches the State Map.")
        else:
            con.print("Nothing to adopt: the State Map already holds this text.")
        return
    ep = result.committed.episode
    _print_recorded(result.adopted, result.deleted)
    for k in result.tombstoned:
        con.print(f"  tombstoned {escape(k)}")
    if result.saved_disk_text:
        con.print(
            f"The previous work-tree text was saved in the vault as {short(result.saved_disk_text)}"
            f" (git cat-file -p {result.saved_disk_text})."
        )
    con.print(f"Episode {ep.id} (commit {short(result.committed.commit)}).")


def _print_recorded(adopted: list[str], deleted: list[str]) -> None:
    for p in adopted:
        out().print(f"adopted  {escape(p)}")
    for p in deleted:
        out().print(f"deleted  {escape(p)}  [dim](entities TOMBSTONED)[/]")


def _adopt_merged(repo: Repo, since: str | None, as_json: bool) -> None:
    from tinymem.branches.merged import adopt_merged

    result = adopt_merged(repo, since)
    found, taken, c = result.evidence, result.taken, result.committed
    if as_json:
        emit_json(result.to_json())
        return
    con = out()
    con.print(f"Changes from {short(found.before)} to {short(found.after)} ({found.what}):")
    _print_recorded(taken.taken, taken.deleted)
    for p in taken.left:
        con.print(f"left     {escape(p)}  [dim](differs from the commit on disk: still STALE)[/]")
    if c is None:
        con.print("Nothing to adopt: the State Map already holds what the merge left.")
    else:
        con.print(f"Episode {c.episode.id} (commit {short(c.commit)}).")


def state_cmd(
    paths: list[str] = typer.Argument(
        None, help="Limit to these files or directories.", metavar="[PATHS]..."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    every: bool = typer.Option(False, "--all", help="Include TOMBSTONED entities."),
) -> None:
    """List entities with state, confidence, artifact, last change and STALE flag."""
    from tinymem.statelist import selection, state_rows
    from tinymem.sync import open_synced

    repo = open_synced()
    rows = state_rows(repo, selection(repo, paths), every=every)
    if as_json:
        emit_json({"entities": rows})
        return
    page()
    if not rows:
        out().print("No entities.")
        return
    write_table(
        ["entity", "kind", "state", "confidence", "source", "artifact", "changed", ""],
        [
            [
                r["entity"],
                r["kind"],
                r["state"],
                r["confidence"],
                r["source"],
                short(r["artifact"]),
                r["time"][:16].replace("T", " "),
                ("STALE", "bold red") if r["stale"] else "",
            ]
            for r in rows
        ],
    )


def rebuild_cmd(
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Re-derive the State Map and the project notes from the ledger and prove both equal
    the stored ones.

    The State Map: replaying the current branch's episodes. The project notes
    (refs/tinymem/notes): folding the note records of the episodes, of any branch's ledger,
    that moved the ref. Exits 1 and prints each difference when either disagrees. Writes
    nothing.
    """
    from tinymem.notes.proof import prove_project_notes
    from tinymem.rebuild import rebuild
    from tinymem.sync import open_synced

    repo = open_synced()
    report = rebuild(repo)
    notes = prove_project_notes(repo)
    differences = report.differences + notes.differences
    ok = report.ok and notes.ok
    if as_json:
        emit_json(
            {
                "ok": ok,
                "episodes": report.episodes,
                "differences": differences,
                "project_notes": {
                    "ok": notes.ok,
                    "tip": notes.tip,
                    "episodes": notes.episodes,
                    "proven": notes.proven,
                },
            }
        )
    elif ok:
        said = (
            f"; {notes.episodes} note episode(s) reproduce the project notes"
            if notes.tip is not None
            else ""
        )
        out().print(
            f"OK: replaying {report.episodes} episode(s) reproduces the stored State Map"
            f" exactly{said}."
        )
    else:
        out().print(f"[bold red]MISMATCH[/]: {len(differences)} difference(s):")
        for line in differences:
            out().print(f"  {escape(line)}")
    if not ok:
        raise typer.Exit(EXIT_CHECK_FAILED)
