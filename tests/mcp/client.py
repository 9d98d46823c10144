"""`tm mcp` as a real process, driven by the MCP SDK's own stdio client.

A test talks to a server through `Connected`: the session lives on an event loop in a
blocking portal's thread, so a server can be shared by the tests of a module while each test
stays synchronous. Every line the server writes on stdout must be protocol: the client's
message handler records anything else (the SDK hands it an Exception for a line that is no
JSON-RPC message)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import mcp_types as types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
REALCODE = ROOT / "tests" / "data" / "realcode"


def isolated_env(home: Path) -> dict[str, str]:
    """The environment of every process here: no developer git configuration, tm's source."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test User",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test User",
        "GIT_COMMITTER_EMAIL": "test@example.com",
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "PYTHONPYCACHEPREFIX": os.path.join(tempfile.gettempdir(), f"tinymem-tests-{os.getuid()}"),
    }


def run(cwd: Path, env: dict[str, str], *argv: str) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed: {proc.stderr}")
    return proc.stdout


def tm_cli(cwd: Path, env: dict[str, str], *args: str) -> str:
    return run(cwd, env, sys.executable, "-m", "tinymem", *args)


def make_repo(where: Path, files: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """A git repository holding `files` (repository path -> path under tests/data/realcode),
    committed and with tm initialised; and the environment to run tm in it."""
    home = where / "home"
    home.mkdir(parents=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Test User\n\temail = test@example.com\n")
    env = isolated_env(home)
    repo = where / "work"
    repo.mkdir()
    run(repo, env, "git", "init", "-q", "-b", "main")
    for rel, source in files.items():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((REALCODE / source).read_bytes())
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "real code")
    tm_cli(repo, env, "init")
    return repo, env


@dataclass
class Connected:
    portal: BlockingPortal
    session: ClientSession
    stray: list[Exception] = field(default_factory=list)  # stdout lines that were no protocol

    def tools(self) -> list[types.Tool]:
        return self.portal.call(self.session.list_tools).tools

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        return self.portal.call(self.session.call_tool, name, arguments or {})

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """The tool's answer (its JSON text parsed, or the text), failing on a tool error."""
        result = self.call(name, arguments)
        text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
        assert not result.is_error, f"{name} failed: {text}"
        try:
            return json.loads(text)
        except ValueError:
            return text

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        result = self.call(name, arguments)
        text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
        assert result.is_error, f"{name} did not fail: {text}"
        return text


@asynccontextmanager
async def _session(
    repo: Path,
    env: dict[str, str],
    args: list[str],
    client: str,
    errlog: TextIO,
    stray: list[Exception],
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tinymem", "mcp", *args], cwd=repo, env=env
    )

    async def handler(message: Any) -> None:
        if isinstance(message, Exception):
            stray.append(message)

    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(
            read,
            write,
            client_info=types.Implementation(name=client, version="1.0"),
            message_handler=handler,
        ) as session,
    ):
        await session.initialize()
        yield session


@contextmanager
def connect(
    repo: Path,
    env: dict[str, str],
    *args: str,
    client: str = "test-agent",
    errlog: TextIO | None = None,
) -> Iterator[Connected]:
    with open(os.devnull, "w") as devnull, start_blocking_portal() as portal:
        stray: list[Exception] = []
        cm = _session(repo, env, list(args), client, errlog or devnull, stray)
        with portal.wrap_async_context_manager(cm) as session:
            yield Connected(portal, session, stray)
