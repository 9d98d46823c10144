"""A reply stopped mid-stream (Ctrl-C): a block the stream did not finish is never a proposal
(#24: the cut-off last block became `add @file` of an existing file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import PY_APP, git, tm, write
from tests.modelserver import ModelServer, ScriptedReply
from tinymem.edits.reply import parse_reply

FIRST = "```python path=app.py\ndef fetch_user(uid):\n    return {'id': uid, 'v': 2}\n```\n"
SECOND = "```python path=app.py\nclass Client:\n    def get(self, path):\n        return pa"


def test_an_unclosed_last_fence_of_an_interrupted_reply_is_no_block() -> None:
    text = f"First:\n\n{FIRST}\nThen the client:\n\n{SECOND}"
    assert len(parse_reply(text).blocks) == 2  # a reply that ran out of tokens: kept, gated
    (block,) = parse_reply(text, interrupted=True).blocks
    assert "fetch_user" in block.code


def test_unfenced_code_of_an_interrupted_reply_is_no_block() -> None:
    text = "def fetch_user(uid):\n    return {'id': uid, 'v': 2}\n\ndef other(x):\n    return"
    assert parse_reply(text).blocks
    assert parse_reply(text, interrupted=True).blocks == ()


def test_a_directive_cut_short_is_no_deletion() -> None:
    text = f"{FIRST}\nDELETE: app.py"  # the stream stopped inside `DELETE: app.py::Client`
    parsed = parse_reply(text, interrupted=True)
    assert parsed.deletes == ()
    assert len(parsed.blocks) == 1
    assert parse_reply(text + "\n", interrupted=True).deletes != ()


def test_ctrl_c_in_the_second_block_proposes_only_the_first(
    repo: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tinymem.ask import AskOptions, ask
    from tinymem.repository import open_repo

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    reply = f"First:\n\n{FIRST}\nThen the client:\n\n{SECOND}" + "x" * 200
    server.add(ScriptedReply(text=reply, chunk_size=16))
    seen: list[str] = []

    def on_text(piece: str) -> None:
        seen.append(piece)
        if "class Client" in "".join(seen):
            raise KeyboardInterrupt  # as Ctrl-C arrives inside the stream loop

    flags: dict[str, str | None] = {
        "model": "openai/test-coder",
        "apiBase": server.openai_base,
        "repair": "0",
    }
    result = ask(open_repo(str(repo)), AskOptions("change fetch_user", flags=flags), on_text)
    assert result.aborted
    assert result.outcome is not None
    assert [[e.symbol for e in p.entities] for p in result.outcome.proposals] == [["fetch_user"]]
