"""`tm hook install | uninstall | run`."""

from __future__ import annotations

import typer

from tinymem.commands.output import out

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
    from tinymem.commands.hookrun import pre_commit
    from tinymem.errors import UsageError

    if name != "pre-commit":
        raise UsageError(f"unknown hook {name!r}; tinymem provides pre-commit")
    code = pre_commit()
    if code:
        raise typer.Exit(code)
