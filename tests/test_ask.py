"""`tm ask` end to end: real litellm, a real loopback model server, a real repository."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from subprocess import PIPE, Popen

import pytest

from tests.conftest import MODEL_ENV, PY_APP, Initialise, ask_argv, git, tm, tm_ask, write
from tests.modelserver import ModelServer, ScriptedReply

REPLY = """Here is the retry:

```python path=app.py
STATE = "refs/tinymem/heads/main"


def fetch_user(uid, retries=3):
    for _ in range(retries):
        return {"id": uid}
```
"""


APP = {"app.py": PY_APP}


def test_ask_openai_streams_records_and_proposes(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    server.add(REPLY)
    proc = tm_ask(repo, server, "add a retry to fetch_user")
    assert proc.returncode == 0, proc.stderr
    assert "for _ in range(retries)" in proc.stdout  # streamed to the terminal
    assert "modify fetch_user" in proc.stdout
    sent = server.chat_requests[0].body["messages"]
    assert "app.py::fetch_user" in sent[1]["content"]  # hydrated with its key
    assert "add a retry to fetch_user" in sent[1]["content"]
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert episode["kind"] == "ask"
    stored = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/messages.json"))
    assert stored == sent  # the exact messages sent are kept
    assert git(repo, "show", "refs/tinymem/heads/main:episode/response.txt") == REPLY
    (pid,) = episode["proposals"]
    prop = json.loads(git(repo, "show", f"refs/tinymem/heads/main:proposals/{pid}/proposal.json"))
    assert prop["confidence"] == "CONFIRMED"
    assert prop["gates"]["A"] == "pass" and prop["gates"]["ETV"] == "pass"
    assert prop["hydrated"] is True
    assert any(t["to"] == "PROPOSED" for t in episode["transitions"])
    # Nothing in the work tree changed: proposals are not truth.
    assert (repo / "app.py").read_text() == PY_APP
    assert tm(repo, "rebuild").returncode == 0


def test_ask_ollama_passes_context_size(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    server.add(REPLY)
    proc = tm(
        repo,
        "ask",
        "retry fetch_user",
        "-m",
        "ollama_chat/qwen2.5-coder:7b",
        "--api-base",
        server.url,
    )
    assert proc.returncode == 0, proc.stderr
    body = server.chat_requests[0].body
    assert body["options"]["num_ctx"] == 8192


def test_dry_run_sends_nothing_and_is_deterministic(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    a = tm(repo, "ask", "fix Client.get", "--dry-run", "--api-base", server.url)
    b = tm(repo, "ask", "fix Client.get", "--dry-run", "--api-base", server.url)
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    assert "tokens (estimate)" in a.stdout
    assert server.requests == []
    assert git(repo, "rev-list", "--count", "refs/tinymem/heads/main").strip() == "1"


def test_stale_entity_is_excluded_and_blocks(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    write(repo, "app.py", PY_APP.replace('{"id": uid}', '{"id": uid, "hand": 1}'))
    server.add(REPLY)
    proc = tm_ask(repo, server, "retry fetch_user", "--json")
    assert proc.returncode == 0, proc.stderr
    sent = server.chat_requests[0].body["messages"][1]["content"]
    assert "STATE NOTICE" in sent and "app.py::fetch_user" in sent
    assert '"hand": 1' not in sent  # the model never sees stale code
    doc = json.loads(proc.stdout)
    assert doc["proposals"][0]["blocked"].startswith("ETV: STALE")


@pytest.mark.parametrize(
    "reply,code,needle",
    [
        (ScriptedReply(failure="not_found"), 7, "does not know the model"),
        (ScriptedReply(failure="server_error"), 6, "127.0.0.1"),
    ],
)
def test_model_failures_are_one_sentence_and_recorded(
    repo: Path,
    initialised: Initialise,
    server: ModelServer,
    reply: ScriptedReply,
    code: int,
    needle: str,
) -> None:
    initialised(APP, commit=False)
    server.add(reply)
    proc = tm_ask(repo, server, "x")
    assert proc.returncode == code, proc.stderr
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert episode["outcome"] == "failed"


def test_unreachable_endpoint(repo: Path, initialised: Initialise) -> None:
    initialised(APP, commit=False)
    proc = tm(
        repo,
        "ask",
        "x",
        "-m",
        "openai/test",
        "--api-base",
        "http://127.0.0.1:9/v1",
        "--timeout",
        "5",
        env={"OPENAI_API_KEY": "sk-test"},
    )
    assert proc.returncode == 6, proc.stderr
    assert "127.0.0.1:9" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_unsafe_paths_never_become_proposals(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    server.add(
        "```sh path=.git/hooks/pre-commit\nrm -rf /\n```\n\n```python path=../evil.py\nx=1\n```\n"
    )
    proc = tm_ask(repo, server, "x", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["proposals"] == []
    assert len(doc["refused"]) == 2


def _spawn_ask(repo: Path, server: ModelServer, prompt: str, *extra: str) -> Popen[str]:
    """`tm ask` as a running process, for tests that act while the model is talking."""
    return Popen(
        [sys.executable, "-m", "tinymem", *ask_argv(server, prompt, *extra)],
        cwd=repo,
        stdout=PIPE,
        stderr=PIPE,
        text=True,
        env={**os.environ, **MODEL_ENV},
    )


def test_accept_flag_applies_hydrated_proposals(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    server.add(REPLY)
    proc = tm_ask(repo, server, "add a retry to fetch_user", "--accept", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["accepted"] == [doc["proposals"][0]["id"]]
    assert "retries=3" in (repo / "app.py").read_text()
    assert tm(repo, "status", "--check").returncode == 0


def test_timeout_empty_and_oversized_replies(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    server.add(ScriptedReply(text="late", delay=5))
    proc = tm_ask(repo, server, "x", "--timeout", "1")
    assert proc.returncode == 8, proc.stderr
    assert "did not answer within 1 s" in proc.stderr
    server.add(ScriptedReply(text=""))
    proc = tm_ask(repo, server, "x")
    assert proc.returncode == 9 and "empty reply" in proc.stderr
    server.add("y" * 5000)
    proc = tm_ask(repo, server, "x", env={"TM_MAX_REPLY": "1000"})
    assert proc.returncode == 9 and "passed 1000 characters" in proc.stderr
    outcomes = [
        json.loads(git(repo, "show", f"refs/tinymem/heads/main~{n}:episode/episode.json"))[
            "outcome"
        ]
        for n in range(3)
    ]
    assert outcomes == ["failed", "failed", "failed"]


def test_file_edited_while_the_model_talks_blocks(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    import time

    initialised(APP, commit=False)
    server.add(ScriptedReply(text=REPLY, chunk_size=8, chunk_delay=0.1))
    proc = _spawn_ask(repo, server, "retry fetch_user", "--json")
    deadline = time.monotonic() + 60
    while not server.chat_requests and time.monotonic() < deadline:
        time.sleep(0.05)
    write(repo, "app.py", PY_APP.replace('{"id": uid}', '{"id": uid, "mid": 1}'))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    doc = json.loads(out)
    assert doc["proposals"][0]["blocked"].startswith("ETV: STALE")


def test_ctrl_c_records_an_aborted_episode(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    import signal

    initialised(APP, commit=False)
    server.add(ScriptedReply(text="x" * 400, chunk_size=4, chunk_delay=0.1))
    proc = _spawn_ask(repo, server, "x")
    assert proc.stdout is not None
    proc.stdout.read(8)  # the stream has started
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert episode["outcome"] == "aborted"
    partial = git(repo, "show", "refs/tinymem/heads/main:episode/response.txt")
    assert 0 < len(partial) < 400


def test_a_method_inside_a_hydrated_class_counts_as_hydrated() -> None:
    from tinymem.edits.gates import was_hydrated as _was_hydrated

    hydrated = {"app.py::Client": "aaa"}
    assert _was_hydrated("app.py", "Client.post", "bbb", hydrated)
    assert not _was_hydrated("app.py", "fetch_user", "ccc", hydrated)
    assert _was_hydrated("app.py", "fetch_user", "ccc", {"app.py::fetch_user": "ccc"})
    assert not _was_hydrated("app.py", "fetch_user", "ccc", {"app.py::fetch_user": "old"})


def test_a_reply_limit_above_the_ceiling_is_refused_before_the_call(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, commit=False)
    proc = tm_ask(repo, server, "x", env={"TM_MAX_REPLY": "50000000"})
    assert proc.returncode == 2
    assert "ceiling" in proc.stderr and "Traceback" not in proc.stderr
    assert server.requests == []  # refused before anything was sent
