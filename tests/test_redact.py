"""Credentials in the endpoint URL and the API key in use never reach the ledger or stderr,
even when the endpoint echoes them in an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import PY_APP, Initialise, git, tm
from tests.modelserver import ModelServer, ScriptedReply
from tinymem.redact import redact, redact_url

KEY = "sk-live-0123456789abcdef"


def test_urls_lose_their_credentials() -> None:
    assert redact_url("https://user:sekret@host:8080/v1?x=1") == "https://***@host:8080/v1?x=1"
    assert redact_url("http://127.0.0.1:11434") == "http://127.0.0.1:11434"
    assert redact_url(None) is None
    url = "https://bob:pa55word@api.example.com/v1"
    said = redact(f"failed at {url} with pa55word", url)
    assert "pa55word" not in said and "bob" not in said


def test_the_ledger_and_stderr_hold_no_credential(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"app.py": PY_APP})
    # The endpoint echoes the key it was sent, as some proxies do.
    server.add(ScriptedReply(failure="server_error", status_message=f"bad key {KEY} for user"))
    base = server.openai_base.replace("http://", "http://alice:hunter22@")
    proc = tm(
        repo,
        "ask",
        "change fetch_user",
        "-m",
        "openai/test",
        "--api-base",
        base,
        env={"OPENAI_API_KEY": KEY},
    )
    assert proc.returncode != 0
    assert KEY not in proc.stderr and "hunter22" not in proc.stderr
    everything = git(repo, "log", "-p", "--all", "--format=%B", "refs/tinymem/heads/main")
    for name in ("episode/episode.json", "episode/messages.json"):
        everything += git(repo, "show", f"refs/tinymem/heads/main:{name}", check=False)
    assert KEY not in everything and "hunter22" not in everything
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert episode["details"]["api_base"].startswith("http://***@127.0.0.1")
    assert "***" in episode["details"]["error"]


def test_urls_lose_the_credentials_of_their_query(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert redact_url("http://h/v1?key=abc123&x=1") == "http://h/v1?key=***&x=1"
    assert (
        redact_url("https://h/v1?api-version=2024-02&api_key=abc&access_token=t#token=f")
        == "https://h/v1?api-version=2024-02&api_key=***&access_token=***#token=***"
    )
    assert redact_url("http://h/v1?sig=a%2Fb&se=2030") == "http://h/v1?sig=***&se=2030"
    # The key in use, under any name or anywhere in the URL.
    assert redact_url(f"http://h/v1?q={KEY}") == "http://h/v1?q=***"
    assert redact_url(f"http://h/{KEY}/v1") == "http://h/***/v1"
    assert redact_url("http://u:p4ss@[::1]:8080/v1") == "http://***@[::1]:8080/v1"
    said = redact(
        "the endpoint http://h/v1?token=t0ken42 said t0ken42", "http://h/v1?token=t0ken42"
    )
    assert "t0ken42" not in said


def test_a_key_in_the_api_base_query_reaches_neither_stderr_nor_the_ledger(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"app.py": PY_APP})
    server.add(ScriptedReply(failure="not_found"))
    base = f"{server.openai_base}?key={KEY}"
    env = {"OPENAI_API_KEY": KEY}
    proc = tm(repo, "ask", "z", "-m", "openai/test", "--api-base", base, env=env)
    assert proc.returncode == 7, proc.stderr
    assert KEY not in proc.stderr and "key=***" in proc.stderr
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert episode["details"]["api_base"] == f"{server.openai_base}?key=***"
    everything = git(repo, "log", "-p", "--all", "refs/tinymem/heads/main")
    assert KEY not in everything
    for argv in (("doctor",), ("doctor", "--json"), ("log", "--json"), ("show", "HEAD")):
        proc = tm(repo, *argv, env={**env, "TM_API_BASE": base})
        assert KEY not in proc.stdout + proc.stderr, argv
