"""The MCP server of `tm mcp`, on the official SDK's `MCPServer` (stdio): one tool per core
call of `tools.py`, each with a description written for the model that will read it. The only
module that imports the SDK, and only `tm mcp` imports it.

The SDK runs these synchronous tools in worker threads; each call opens its own repository
(a pygit2 repository is not shared between threads). A `TinymemError` becomes a tool error
carrying tm's one sentence, and the server keeps serving. While it serves, the SDK points
file descriptor 1 at stderr and talks on a private copy of it, so nothing but the protocol
reaches stdout: not a stray print, not a notice, not a git child's output.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import Field, ValidationError

from tinymem import __version__
from tinymem.errors import TinymemError
from tinymem.mcp import notes, tools
from tinymem.notes.model import KINDS

__all__ = ["ACCEPT_TOOL", "TmServer", "argument_errors", "build", "client_source"]

ACCEPT_TOOL = "tm_accept"
T = TypeVar("T")

INSTRUCTIONS = (
    "tm keeps the verified truth of this repository's code in git (a State Map per branch and"
    " a ledger of every change). Before editing, call tm_context with what you are about to"
    " change. Instead of writing files, give your edits to tm_propose: tm checks them against"
    " what is on disk (edits to code changed since tm recorded it are blocked) and returns the"
    " diff each would write; then tm_accept writes them, or the person does with `tm accept`."
)

# What the client sends is at most this much of its name and version, printable.
SOURCE_MAX = 80


def client_source(ctx: Context | None) -> str:
    """`mcp:NAME VERSION` from the client's info of the initialize handshake: the source
    `tm log` names for what the client proposed, accepted or rejected."""
    info = None
    if ctx is not None:
        params = ctx.session.client_params
        info = None if params is None else params.client_info
    if info is None:
        return "mcp:client"
    raw = f"{info.name} {info.version or ''}".strip()
    clean = "".join(ch if unicodedata.category(ch)[0] not in "CZ" else " " for ch in raw)
    return "mcp:" + (" ".join(clean.split())[:SOURCE_MAX] or "client")


def _tm(call: Callable[[], T]) -> T:
    try:
        return call()
    except TinymemError as exc:
        raise ToolError(str(exc)) from None


def argument_errors(exc: ValidationError) -> str:
    """Arguments that do not fit a tool's schema, in one line (pydantic's report spans
    several, with a link per error)."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            parts.append(f"{where} is required")
        else:
            msg = str(err["msg"])
            parts.append(f"{where}: {msg[:1].lower()}{msg[1:]}")
    return "; ".join(parts)


class TmServer(MCPServer[Any]):
    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(
                    f"Error executing tool {name}: {argument_errors(exc.__cause__)}"
                ) from exc.__cause__
            raise


_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)

Paths = Annotated[
    list[str] | None,
    Field(description="Files or directories, relative to the repository root."),
]


def build(workdir: str, *, offer_accept: bool = True) -> MCPServer[Any]:
    server = TmServer(
        "tm",
        title="tinymem",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )

    @server.tool(annotations=_READ)
    def tm_context(
        query: Annotated[
            str,
            Field(
                description="What you are about to change, naming its functions, classes or files."
            ),
        ],
        paths: Annotated[
            list[str] | None, Field(description="Files to include whole, from the root.")
        ] = None,
        budget: Annotated[
            int | None, Field(description="Tokens to fill (default: tm's configured budget).")
        ] = None,
    ) -> str:
        """The current, verified text of the code a request is about, as tm would show a
        model: the most relevant definitions in full, others by signature, recent episodes,
        and a STATE NOTICE naming what was changed on disk since tm recorded it (STALE: not
        shown, edits to it are blocked until the person adopts it). Read-only."""
        return _tm(lambda: tools.context(workdir, query, paths or [], budget))

    @server.tool(annotations=_READ)
    def tm_status() -> dict[str, Any]:
        """What differs between the work tree and tm's recorded truth (STALE files and
        entities, edited outside tm) and which proposals are pending."""
        return _tm(lambda: tools.status(workdir))

    @server.tool(annotations=_READ)
    def tm_state(paths: Paths = None) -> dict[str, Any]:
        """Every entity tm records (function, method, class, ...) with its state
        (AUTHORITATIVE, PROPOSED, ...), confidence, last episode and whether it is STALE."""
        return _tm(lambda: tools.state(workdir, paths or []))

    @server.tool(annotations=_READ)
    def tm_log(
        n: Annotated[int | None, Field(description="At most this many (default 20).")] = None,
        entity: Annotated[
            str | None,
            Field(description="Only episodes touching this file or entity (path::Symbol)."),
        ] = None,
    ) -> dict[str, Any]:
        """The ledger, newest first: every ask, proposal, accept, reject and adopt, with who
        or which model was behind it and what it changed or why it was blocked."""
        return _tm(lambda: tools.log(workdir, n, entity))

    @server.tool(annotations=_READ)
    def tm_blame(
        path: Annotated[str, Field(description="A file, relative to the repository root.")],
        lines: Annotated[
            str | None, Field(description="START,END or START,+COUNT (1-based); default all.")
        ] = None,
    ) -> dict[str, Any]:
        """Who wrote each line of a file: the episode, and the model or person behind it;
        lines changed on disk since tm recorded them are marked STALE."""
        return _tm(lambda: tools.blame(workdir, path, lines))

    @server.tool(annotations=_READ)
    def tm_show(
        episode: Annotated[str, Field(description="An episode id (or its start) from tm_log.")],
    ) -> dict[str, Any]:
        """Everything one episode recorded: its proposals with their diffs and gate results,
        the messages sent to a model, its outcome."""
        return _tm(lambda: tools.show(workdir, episode))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def tm_propose(
        text: Annotated[
            str,
            Field(
                description="Your edits as you would write them in a reply: fenced code blocks"
                " naming their file (whole functions, methods or classes, or a whole file),"
                " unified diffs, SEARCH/REPLACE blocks, or `DELETE path::Symbol` lines."
            ),
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        """Hand tm your edits instead of writing files. Nothing is written: each edit becomes
        a pending proposal, checked by tm's gates against what is on disk now. Returns each
        proposal's id, file, entities, gate results (a blocked one says why and what to do)
        and the unified diff accepting it would write (for a blocked one, what the command in
        `preview` would write, when it has one); blocks whose path tm refuses are listed
        under `refused`. Then tm_accept the ids, or fix the blocked ones and propose again."""
        source = client_source(ctx)
        return _tm(lambda: tools.propose(workdir, text, source))

    if offer_accept:

        @server.tool(
            name=ACCEPT_TOOL,
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True),
        )
        def tm_accept(
            ids: Annotated[list[str], Field(description="Proposal ids from tm_propose.")],
            ctx: Context,
            allow_delete: Annotated[
                bool,
                Field(
                    description="Let a proposal that removes a definition (a DELETE line, or a"
                    " diff taking one out) delete it."
                ),
            ] = False,
        ) -> dict[str, Any]:
            """Write pending proposals to the work tree: every gate is run again now, and a
            file is written only when each of its proposals passes. Blocked proposals stay
            pending, their files untouched, with the reason under `blocked`."""
            source = client_source(ctx)
            return _tm(lambda: tools.accept(workdir, ids, allow_delete, source))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def tm_reject(
        ids: Annotated[list[str], Field(description="Proposal ids to drop.")],
        ctx: Context,
        why: Annotated[str | None, Field(description="Why, recorded in the ledger.")] = None,
    ) -> dict[str, Any]:
        """Drop pending proposals; their text stays in tm's vault."""
        source = client_source(ctx)
        return _tm(lambda: tools.reject(workdir, ids, why, source))

    @server.tool(annotations=_READ)
    def tm_notes(
        query: Annotated[
            str | None, Field(description="Words to look for; notes sharing most come first.")
        ] = None,
        on: Annotated[
            str | None,
            Field(description="Only notes about this file or entity (path::Symbol)."),
        ] = None,
    ) -> dict[str, Any]:
        """The project's memory: decisions, constraints, gotchas, dead ends tried, facts and
        plans that people and agents wrote down, each with what it is about; `drift` says
        when that code changed since the note was written (read it with care)."""
        return _tm(lambda: notes.notes(workdir, query, on))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def tm_note_write(
        kind: Annotated[
            str,
            Field(
                description="decision, constraint, gotcha, tried (a dead end and why), fact,"
                " plan or note.",
                json_schema_extra={"enum": list(KINDS)},
            ),
        ],
        text: Annotated[str, Field(description="What to remember, for whoever works here next.")],
        ctx: Context,
        on: Annotated[
            list[str] | None,
            Field(description="Files or entities (path::Symbol) the note is about."),
        ] = None,
        key: Annotated[
            str | None,
            Field(description="A name for the note: writing the same key again updates it."),
        ] = None,
    ) -> dict[str, Any]:
        """Remember something for the project (shared by every branch), recorded in the ledger
        with you as its source: a decision and why, a constraint, a gotcha, an approach that
        failed. Anchored with `on`, it is flagged when that code changes."""
        source = client_source(ctx)
        return _tm(lambda: notes.note_write(workdir, kind, text, on or [], key, source))

    return server
