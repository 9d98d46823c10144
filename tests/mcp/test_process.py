"""`tm mcp` as a process: two clients on one repository, `--no-accept`, the ledger read again
on every call (a `git switch` between two calls), nothing but protocol on stdout, and the
command without the SDK or with other commands (which must not import it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.conftest import tm
from tests.mcp.client import ROOT, Connected, connect, make_repo, run, tm_cli

SCAFFOLD = "scaffold.py"
FILES = {SCAFFOLD: "flask/src/flask/sansio/scaffold.py"}


@pytest.fixture
def made(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    return make_repo(tmp_path, FILES)


def _edit(n: int) -> str:
    """A new function per call: every proposal is distinct and passes the gates."""
    return f"```python\n# {SCAFFOLD}\ndef added_{n}(x: int) -> int:\n    return x + {n}\n```\n"


def test_two_clients_proposing_at_once_lose_no_episode(made: tuple[Path, dict[str, str]]) -> None:
    repo, env = made
    rounds = 6
    with (
        connect(repo, env, client="agent-one") as one,
        connect(repo, env, client="agent-two") as two,
    ):

        async def proposing(conn: Connected, first: int, out: list[dict[str, object]]) -> None:
            async def one(n: int) -> None:
                result = await conn.session.call_tool("tm_propose", {"text": _edit(n)})
                assert not result.is_error, result.content
                assert result.structured_content is not None
                out.append(result.structured_content)

            # All of a client's calls at once too: the server runs them in worker threads.
            async with anyio.create_task_group() as tg:
                for n in range(first, first + rounds):
                    tg.start_soon(one, n)

        answers: dict[str, list[dict[str, object]]] = {"one": [], "two": []}

        async def both() -> None:
            # Both sessions live on their own portals' loops; each proposes from its own.
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    anyio.to_thread.run_sync,
                    lambda: one.portal.call(proposing, one, 0, answers["one"]),
                )
                tg.start_soon(
                    anyio.to_thread.run_sync,
                    lambda: two.portal.call(proposing, two, 100, answers["two"]),
                )

        anyio.run(both)
        status = one.ok("tm_status")
    episodes = [a["episode"] for a in answers["one"] + answers["two"]]
    assert len(set(episodes)) == 2 * rounds
    log = json.loads(tm_cli(repo, env, "log", "--json"))
    asks = {e["episode"]: e["author"] for e in log if e["kind"] == "ask"}
    assert set(asks) == set(episodes)  # every episode is in the ledger: none was lost
    assert sorted(set(asks.values())) == ["mcp:agent-one 1.0", "mcp:agent-two 1.0"]
    ids = [p["id"] for a in answers["one"] + answers["two"] for p in a["proposals"]]  # type: ignore[attr-defined]
    assert len(ids) == 2 * rounds
    assert sorted(status["pending_proposals"]) == sorted(ids)


def test_no_accept_does_not_offer_accepting(
    made: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = made
    elsewhere = tmp_path / "elsewhere"  # as a client that starts servers in its own directory
    elsewhere.mkdir()
    with connect(elsewhere, env, "--no-accept", "--repo", str(repo)) as conn:
        names = {t.name for t in conn.tools()}
        assert "tm_accept" not in names
        assert {"tm_propose", "tm_reject", "tm_status"} <= names
        [prop] = conn.ok("tm_propose", {"text": _edit(1)})["proposals"]
        assert "tm_accept" in conn.error("tm_accept", {"ids": [prop["id"]]})
        before = (repo / SCAFFOLD).read_text()
    assert "added_1" not in before  # the person accepts, with `tm accept`
    tm_cli(repo, env, "accept", prop["id"])
    assert "def added_1(x: int) -> int:" in (repo / SCAFFOLD).read_text()


def test_every_call_reads_the_ledger_again_and_stdout_carries_only_protocol(
    made: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = made
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err, connect(repo, env, errlog=err) as conn:
        assert conn.ok("tm_status")["branch"] == "main"
        run(repo, env, "git", "switch", "-q", "-c", "side")
        # The next call follows HEAD to the new branch; starting its State Map is a notice
        # tm says on stderr, which must not reach the protocol's stdout.
        assert conn.ok("tm_status")["branch"] == "side"
        made_side = conn.ok("tm_propose", {"text": _edit(7)})
        conn.error("tm_show", {"episode": "0000000000"})
        stray = list(conn.stray)
    assert stray == []
    said = errlog.read_text()
    assert "tm: branch side had no State Map: started from main's" in said
    assert "Traceback" not in said
    side = json.loads(tm_cli(repo, env, "log", "--json", "-n", "1"))
    assert side[0]["episode"] == made_side["episode"]
    run(repo, env, "git", "switch", "-q", "main")
    main = json.loads(tm_cli(repo, env, "log", "--json"))
    assert made_side["episode"] not in {e["episode"] for e in main}


def test_without_the_sdk_tm_mcp_says_how_to_install_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "a.py").write_text("def f():\n    return 1\n")
    assert tm(repo, "init").returncode == 0
    for name in [m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "tinymem.mcp"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # what an environment without it imports
    result = tm(repo, "mcp")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "tm: tm mcp needs the MCP SDK, which is not installed; install it with"
        " `pip install 'tinymem[mcp]'` (or `pip install 'mcp>=2.3,<3'` in tm's environment)"
    ]


def test_other_commands_do_not_import_the_sdk() -> None:
    code = (
        "import sys; from tinymem import cli; cli._register();"
        " print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
