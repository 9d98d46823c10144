"""`tm hook install | uninstall | run`."""

from __future__ import annotations

import sys

import typer

from tinymem.commands.output import out
from tinymem.errors import EXIT_CHECK_FAILED

hook_app = typer.Typer(
    help="The git pre-commit hook that refuses stale overwrites.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(hook_app, name="hook")


@hook_app.command("install")
def install_cmd(
    force: bool = typer.Option(
        False, "--force", help="Replace an existing hook (it is backed up) instead of chaining it."
    ),
) -> None:
    """Install the pre-commit hook (honours core.hooksPath; chains an existing hook)."""
    from tinymem.hook import install
    from tinymem.repository import open_repo

    out().print(install(open_repo(), force=force))


@hook_app.command("uninstall")
def uninstall_cmd() -> None:
    """Remove tinymem's hook and restore a hook it had chained."""
    from tinymem.hook import uninstall
    from tinymem.repository import open_repo

    out().print(uninstall(open_repo()))


@hook_app.command("run")
def run_cmd(
    name: str = typer.Argument(..., help="The hook to run: pre-commit.", metavar="NAME"),
) -> None:
    """Run a hook's check now (what the installed script calls). Exit 1 refuses the commit."""
    from tinymem.errors import UsageError
    from tinymem.hook import check, render_refusal
    from tinymem.repository import open_repo

    if name != "pre-commit":
        raise UsageError(f"unknown hook {name!r}; tinymem provides pre-commit")
    report = check(open_repo())
    if report.refusals:
        print(render_refusal(report), file=sys.stderr)
        raise typer.Exit(EXIT_CHECK_FAILED)
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
