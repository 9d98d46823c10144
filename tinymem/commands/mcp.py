"""`tm mcp`."""

from __future__ import annotations

import typer

INSTALL_HINT = (
    "tm mcp needs the MCP SDK, which is not installed; install it with"
    " `pip install 'tinymem[mcp]'` (or `pip install 'mcp>=2.3,<3'` in tm's environment)"
)


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_cmd)


def mcp_cmd(
    where: str = typer.Option(
        None,
        "--repo",
        metavar="DIR",
        help="The repository to serve (default: the one holding the current directory), for"
        " clients that start servers elsewhere.",
    ),
    no_accept: bool = typer.Option(
        False,
        "--no-accept",
        help="Do not offer tm_accept: the agent proposes, the person accepts with tm accept.",
    ),
) -> None:
    """Serve tm's memory and gates as Model Context Protocol tools on stdin/stdout.

    For agents and editors that bring their own model (Claude Code, Cursor, Continue, Zed):
    register `tm mcp` as a stdio server (e.g. `claude mcp add tm -- tm mcp`) and the agent
    gets tm_context (the verified current text of what it is about to edit), tm_status,
    tm_state, tm_log, tm_blame, tm_show, tm_propose (its edits become gated proposals of one
    episode, the client named as their source in tm log), tm_accept, tm_reject, tm_notes and
    tm_note_write (project memory). Started
    by the client, in the repository (tm initialised); paths are relative to its root. The
    ledger is read again on every call, so other tm commands and git switch may run
    meanwhile. Stdout carries only the protocol; tm's notices go to stderr.
    """
    import os

    from tinymem.errors import UsageError
    from tinymem.ledger import current
    from tinymem.repository import open_repo
    from tinymem.treewatch import watch

    repo = open_repo(where)
    current(repo)  # refuse to start in a repository without tm
    try:
        from tinymem.mcp.server import build
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in ("mcp", "mcp_types"):
            raise
        raise UsageError(INSTALL_HINT) from None
    # Paths the tools take are the repository's; relative ones resolve from its root.
    os.chdir(repo.workdir)
    watch(repo.workdir)  # ETV then looks only at what changed since the last call
    build(repo.workdir, offer_accept=not no_accept).run("stdio")
