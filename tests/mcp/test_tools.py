"""`tm mcp`'s tools called through the SDK's stdio client, on one server shared by the module
(each test works on its own file or entity of the repository, so their order is free)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.client import Connected, connect, make_repo, tm_cli

SCAFFOLD = "src/flask/sansio/scaffold.py"
APP = "src/flask/app.py"
FILES = {
    SCAFFOLD: "flask/src/flask/sansio/scaffold.py",
    APP: "flask/src/flask/app.py",
}
TOOLS = {
    "tm_context",
    "tm_status",
    "tm_state",
    "tm_log",
    "tm_blame",
    "tm_show",
    "tm_propose",
    "tm_accept",
    "tm_reject",
    "tm_notes",
    "tm_note_write",
}

REPR_EDIT = f"""Here is the change.

```python
# {SCAFFOLD}
    def __repr__(self) -> str:
        return f"<{{type(self).__name__}} {{self.name!r}} scaffold>"
```
"""


class Shared:
    def __init__(self, repo: Path, env: dict[str, str], conn: Connected) -> None:
        self.repo, self.env, self.conn = repo, env, conn

    def cli_json(self, *args: str) -> object:
        return json.loads(tm_cli(self.repo, self.env, *args, "--json"))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    repo, env = make_repo(tmp_path_factory.mktemp("mcp"), FILES)
    with connect(repo, env) as conn:
        yield Shared(repo, env, conn)
        assert conn.stray == [], "the server wrote something else than protocol on stdout"


def test_every_tool_is_listed_with_a_description_and_a_described_schema(shared: Shared) -> None:
    tools = {t.name: t for t in shared.conn.tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.input_schema["type"] == "object"
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    assert tools["tm_propose"].input_schema["required"] == ["text"]
    assert set(tools["tm_accept"].input_schema["properties"]) == {"ids", "allow_delete"}
    assert tools["tm_status"].annotations is not None
    assert tools["tm_status"].annotations.read_only_hint is True


def test_a_method_edit_proposed_on_a_real_file_then_accepted(shared: Shared) -> None:
    conn = shared.conn
    before = (shared.repo / SCAFFOLD).read_text()
    made = conn.ok("tm_propose", {"text": REPR_EDIT})
    assert made["refused"] == []
    [prop] = made["proposals"]
    assert prop["path"] == SCAFFOLD
    assert prop["entities"] == [{"symbol": "Scaffold.__repr__", "op": "modify"}]
    assert all(g["ok"] for g in prop["gates"]) and prop["blocked"] is None
    assert '+        return f"<{type(self).__name__} {self.name!r} scaffold>"' in prop["diff"]
    assert (shared.repo / SCAFFOLD).read_text() == before  # proposing writes nothing

    # One ask episode, whose source `tm log` names as the client of the handshake.
    [entry] = shared.cli_json("log", "-n", "1")  # type: ignore[misc]
    assert entry["episode"] == made["episode"] and entry["kind"] == "ask"
    assert entry["author"] == "mcp:test-agent 1.0"
    assert entry["proposals"] == [prop["id"]]
    shown = conn.ok("tm_show", {"episode": made["episode"]})
    assert shown["model"] == "mcp:test-agent 1.0"
    assert [p["id"] for p in shown["proposals"]] == [prop["id"]]
    assert conn.ok("tm_status")["pending_proposals"] == [prop["id"]]

    done = conn.ok("tm_accept", {"ids": [prop["id"]]})
    assert done["promoted"] == [prop["id"]] and done["blocked"] == []
    assert done["files"] == [SCAFFOLD]
    after = (shared.repo / SCAFFOLD).read_text()
    assert after == before.replace('{self.name!r}>"', '{self.name!r} scaffold>"', 1)
    accepted = shared.cli_json("show", done["episode"])
    assert accepted["kind"] == "accept"  # type: ignore[index]
    assert accepted["author"] == "mcp:test-agent 1.0"  # type: ignore[index]
    assert accepted["details"]["via"] == "mcp:test-agent 1.0"  # type: ignore[index]
    # The entity's truth is now the accepted text, and blame names where it came from.
    rows = conn.ok("tm_state", {"paths": [SCAFFOLD]})["entities"]
    [row] = [r for r in rows if r["symbol"] == "Scaffold.__repr__"]
    assert row["state"] == "AUTHORITATIVE" and not row["stale"]
    line = after.splitlines().index(
        '        return f"<{type(self).__name__} {self.name!r} scaffold>"'
    )
    blamed = conn.ok("tm_blame", {"path": SCAFFOLD, "lines": f"{line + 1},+1"})
    [only] = blamed["lines"]
    assert only["author"] == "mcp:test-agent 1.0"


def test_an_edit_of_a_stale_entity_is_blocked_and_accepting_it_writes_nothing(
    shared: Shared,
) -> None:
    conn = shared.conn
    path = shared.repo / APP
    hand = path.read_text().replace(
        'rv = {"app": self, "g": g}', 'rv = {"app": self, "g": g, "x": 1}'
    )
    path.write_text(hand)  # edited by hand: tm's record of make_shell_context is STALE now
    status = conn.ok("tm_status")
    stale = [e["entity"] for f in status["files"] for e in f["stale"]]
    assert f"{APP}::Flask.make_shell_context" in stale
    context = conn.ok("tm_context", {"query": "change Flask.make_shell_context"})
    assert "STATE NOTICE" in context and "Flask.make_shell_context" in context

    edit = f'''```python
# {APP}
    def make_shell_context(self) -> dict[str, t.Any]:
        """Returns the shell context for an interactive shell for this
        application.  This runs all the registered shell context
        processors.

        .. versionadded:: 0.11
        """
        rv = {{"app": self, "g": g, "version": 2}}
        for processor in self.shell_context_processors:
            rv.update(processor())
        return rv
```
'''
    made = conn.ok("tm_propose", {"text": edit})
    [prop] = made["proposals"]
    assert prop["blocked"] is not None
    etv = [g for g in prop["gates"] if g["gate"] == "ETV"]
    assert etv and not etv[0]["ok"]
    # The diff is what the named remedy would write over the hand edit, and says so.
    assert prop["preview"] == (
        f"tm accept {prop['id']} --overwrite-stale {APP}::Flask.make_shell_context"
    )
    assert '-        rv = {"app": self, "g": g, "x": 1}' in prop["diff"]
    done = conn.ok("tm_accept", {"ids": [prop["id"]]})
    assert done["promoted"] == [] and done["episode"] is None
    [blocked] = done["blocked"]
    assert blocked["id"] == prop["id"] and blocked["gate"] == "ETV"
    assert "tm adopt" in blocked["why"]
    assert path.read_text() == hand


@pytest.mark.parametrize(
    "where", ["../outside.py", "/tmp/tm-mcp-absolute.py", ".git/hooks/pre-commit"]
)
def test_a_hostile_path_is_refused_and_nothing_is_written(shared: Shared, where: str) -> None:
    edit = f"""```python
# {where}
import os
os.system("echo owned")
```
"""
    made = shared.conn.ok("tm_propose", {"text": edit})
    assert made["proposals"] == []
    [refused] = made["refused"]
    assert refused["reason"]
    assert not (shared.repo.parent / "outside.py").exists()
    assert not Path("/tmp/tm-mcp-absolute.py").exists()
    assert not (shared.repo / ".git" / "hooks" / "pre-commit").exists()


def test_reject_records_the_reason_and_the_client(shared: Shared) -> None:
    conn = shared.conn
    edit = f"""```python
# {APP}
def _make_timedelta(value: timedelta | int | None) -> timedelta | None:
    return None if value is None else timedelta(seconds=int(value))
```
"""
    [prop] = conn.ok("tm_propose", {"text": edit})["proposals"]
    done = conn.ok("tm_reject", {"ids": [prop["id"]], "why": "drops timedelta values"})
    assert done["rejected"] == [prop["id"]]
    shown = conn.ok("tm_show", {"episode": done["episode"]})
    assert shown["kind"] == "reject"
    assert shown["summary"] == f"rejected {prop['id']} (why: drops timedelta values)"
    assert shown["details"]["why"] == "drops timedelta values"
    assert shown["details"]["via"] == "mcp:test-agent 1.0"
    assert prop["id"] not in conn.ok("tm_status")["pending_proposals"]


def test_the_read_tools_answer_as_the_json_commands(shared: Shared) -> None:
    conn = shared.conn
    context = conn.ok("tm_context", {"query": "Scaffold._check_setup_finished", "budget": 3000})
    assert "def _check_setup_finished(self, f_name: str) -> None:" in context
    assert "[REQUEST]" not in context
    whole = conn.ok("tm_context", {"query": "what does this do", "paths": [SCAFFOLD]})
    assert SCAFFOLD in whole
    state = conn.ok("tm_state", {"paths": [SCAFFOLD]})
    assert {r["path"] for r in state["entities"]} == {SCAFFOLD}
    assert state == shared.cli_json("state", SCAFFOLD)
    log = conn.ok("tm_log", {"n": 50, "entity": f"{SCAFFOLD}::Scaffold.__init__"})
    assert [e["kind"] for e in log["episodes"]] == ["init"]
    assert conn.ok("tm_log", {"n": 1})["episodes"] == shared.cli_json("log", "-n", "1")
    blamed = conn.ok("tm_blame", {"path": SCAFFOLD, "lines": "1,3"})
    assert [ln["line"] for ln in blamed["lines"]] == [1, 2, 3]
    first = shared.cli_json("log")[-1]  # type: ignore[index]
    assert conn.ok("tm_show", {"episode": first["episode"]})["kind"] == "init"


def test_malformed_calls_are_tool_errors_and_the_server_keeps_serving(shared: Shared) -> None:
    conn = shared.conn
    # Arguments that do not fit the schema: one line naming each, not pydantic's report.
    assert conn.error("tm_log", {"n": "many"}) == (
        "Error executing tool tm_log: n: input should be a valid integer, unable to parse"
        " string as an integer"
    )
    assert conn.error("tm_blame", {}) == "Error executing tool tm_blame: path is required"
    assert conn.error("tm_accept", {"ids": "abcdef", "allow_delete": "perhaps"}) == (
        "Error executing tool tm_accept: ids: input should be a valid list; allow_delete:"
        " input should be a valid boolean, unable to interpret input"
    )
    assert "tm_nothing" in conn.error("tm_nothing", {})
    # tm's own refusals arrive as its one sentence.
    assert "no episode matches 'ffffffffffff'" in conn.error("tm_show", {"episode": "ffffffffffff"})
    assert "-L takes START,END" in conn.error("tm_blame", {"path": SCAFFOLD, "lines": "x"})
    assert "no pending proposal matches 'abcdef'" in conn.error("tm_accept", {"ids": ["abcdef"]})
    assert "ids is empty" in conn.error("tm_reject", {"ids": []})
    outside = conn.error("tm_blame", {"path": "../../etc/passwd"})
    assert "../../etc/passwd is outside the repository" in outside
    assert conn.ok("tm_status")["branch"] == "main"


def test_notes_written_by_the_client_are_read_back_and_drift_with_their_code(
    shared: Shared,
) -> None:
    conn = shared.conn
    target = f"{SCAFFOLD}::Scaffold.delete"
    # Other tests of this module share the repository (a `tm_reject` with a reason keeps a
    # `tried` note): only what this test writes is compared.
    before = {n["id"] for n in shared.cli_json("note", "list")["notes"]}  # type: ignore[index]
    wrote = conn.ok(
        "tm_note_write",
        {
            "kind": "constraint",
            "text": "delete routes must stay idempotent",
            "on": [target],
            "key": "delete-idempotent",
        },
    )
    note = wrote["note"]
    assert note["source"] == "mcp:test-agent 1.0" and note["drift"] == "current"
    assert [a["target"] for a in note["anchors"]] == [target]
    [entry] = shared.cli_json("log", "-n", "1")  # type: ignore[misc]
    assert entry["episode"] == wrote["episode"] == note["episode"]
    # The same key again updates that note; the CLI lists what the client wrote.
    again = conn.ok(
        "tm_note_write",
        {"kind": "decision", "text": "delete routes are idempotent", "key": "delete-idempotent"},
    )
    assert again["note"]["id"] == note["id"] and again["note"]["kind"] == "decision"
    listed = shared.cli_json("note", "list")["notes"]  # type: ignore[index]
    assert [n["id"] for n in listed if n["id"] not in before] == [note["id"]]
    conn.ok("tm_note_write", {"kind": "gotcha", "text": "static_folder may be None"})

    found = conn.ok("tm_notes", {"query": "idempotent routes"})["notes"]
    assert [n["id"] for n in found if n["id"] not in before] == [note["id"]]
    assert len([n for n in conn.ok("tm_notes")["notes"] if n["id"] not in before]) == 2
    on_file = conn.ok("tm_notes", {"on": SCAFFOLD})["notes"]
    assert [n for n in on_file if n["id"] not in before] == []  # the update dropped the anchor
    assert "unknown note kind 'wish'" in conn.error("tm_note_write", {"kind": "wish", "text": "x"})
    assert "a note needs text" in conn.error("tm_note_write", {"kind": "fact", "text": "  "})


def test_a_note_on_an_entity_drifts_when_an_accepted_proposal_changes_it(shared: Shared) -> None:
    conn = shared.conn
    target = f"{SCAFFOLD}::Scaffold.patch"
    note = conn.ok("tm_note_write", {"kind": "fact", "text": "patch is a shortcut", "on": [target]})
    assert conn.ok("tm_notes", {"on": target})["notes"][0]["drift"] == "current"
    edit = f"""```python
# {SCAFFOLD}
    @setupmethod
    def patch(self, rule: str, **options: t.Any) -> t.Callable[[T_route], T_route]:
        \"\"\"Shortcut for :meth:`route` with ``methods=["PATCH"]``.

        .. versionadded:: 2.0
        \"\"\"
        return self._method_route("PATCH", rule, dict(options))
```
"""
    [prop] = conn.ok("tm_propose", {"text": edit})["proposals"]
    assert prop["blocked"] is None, prop
    assert conn.ok("tm_accept", {"ids": [prop["id"]]})["promoted"] == [prop["id"]]
    [after] = conn.ok("tm_notes", {"on": target})["notes"]
    assert after["id"] == note["note"]["id"] and after["drift"] == "drifted"
