"""`tm completion SHELL`: the shell's completion script (generated files live in completions/)."""

from __future__ import annotations

from enum import StrEnum

import typer

COMPLETE_VAR = "_TM_COMPLETE"


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def register(app: typer.Typer) -> None:
    app.command("completion")(completion_cmd)


def completion_cmd(
    shell: Shell = typer.Argument(..., help="bash, zsh or fish.", metavar="SHELL"),
) -> None:
    """Print the completion script for SHELL. Install it with one of:

    \b
    bash: tm completion bash > ~/.local/share/bash-completion/completions/tm
    zsh:  tm completion zsh > "${fpath[1]}/_tm"
    fish: tm completion fish > ~/.config/fish/completions/tm.fish
    """
    typer.echo(script(shell.value), nl=False)


def script(shell: str) -> str:
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name="tm", complete_var=COMPLETE_VAR, shell=shell) + "\n"


def enable_if_completing() -> None:
    """Register Typer's completion protocol only when a shell is asking (keeps start-up light)."""
    import os

    if COMPLETE_VAR in os.environ:
        from typer._completion_classes import completion_init

        completion_init()
