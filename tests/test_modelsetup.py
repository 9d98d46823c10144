"""The commonest model set-up mistakes, told before any call with the fix, and an endpoint where
nothing listens told at once (before litellm is imported)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PY_APP, tm, write
from tests.modelserver import ModelServer, ScriptedReply


@pytest.fixture
def project(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name in ("TM_MODEL", "TM_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    write(repo, "app.py", PY_APP)
    assert tm(repo, "init").returncode == 0
    return repo


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ollama_tag_without_provider(project: Path, server: ModelServer) -> None:
    proc = tm(project, "ask", "fix it", "-m", "qwen2.5-coder:7b", "--api-base", server.url)
    assert proc.returncode == 2, proc.stderr
    assert "did you mean ollama_chat/qwen2.5-coder:7b?" in proc.stderr
    assert server.chat_requests == []


def test_local_openai_server_without_a_key(project: Path, server: ModelServer) -> None:
    proc = tm(project, "ask", "fix it", "-m", "openai/test", "--api-base", server.openai_base)
    assert proc.returncode == 2, proc.stderr
    assert (
        "a local OpenAI-compatible server needs any key: export OPENAI_API_KEY=none" in proc.stderr
    )
    assert server.chat_requests == []


def test_ollama_route_on_the_v1_path(project: Path, server: ModelServer) -> None:
    proc = tm(
        project, "ask", "fix it", "-m", "ollama_chat/qwen2.5-coder:7b",
        "--api-base", server.url + "/v1",
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "drop /v1 for ollama_chat/" in proc.stderr
    assert f"--api-base {server.url} " in proc.stderr
    assert "ollama pull" not in proc.stderr
    assert server.chat_requests == []


def test_a_bare_name_litellm_cannot_route(
    project: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    proc = tm(project, "ask", "fix it", "-m", "llama3", "--api-base", server.openai_base)
    assert proc.returncode == 2, proc.stderr
    assert "write it as provider/name" in proc.stderr
    assert "ollama_chat/llama3" in proc.stderr


@pytest.mark.parametrize(
    ("model", "base", "fix"),
    [
        ("qwen2.5-coder:7b", None, "--model ollama_chat/qwen2.5-coder:7b"),
        ("openai/test", "http://127.0.0.1:8080/v1", "export OPENAI_API_KEY=none"),
        ("ollama_chat/qwen2.5-coder:7b", "http://127.0.0.1:11434/v1", "--api-base http://127.0.0.1:11434"),
    ],
)  # fmt: skip
def test_doctor_without_model_reports_the_mistake(
    project: Path, model: str, base: str | None, fix: str
) -> None:
    env = {"TM_MODEL": model, **({"TM_API_BASE": base} if base else {})}
    proc = tm(project, "doctor", "--json", env=env)
    assert proc.returncode == 1, proc.stdout
    doc = json.loads(proc.stdout)
    problems = [c for c in doc["checks"] if c["status"] == "fail"]
    assert [p["check"] for p in problems] == ["model setup"]
    assert problems[0]["fix"].startswith(fix)


def test_nothing_listening_is_told_before_litellm_loads(project: Path) -> None:
    port = _free_port()
    code = f"""
import sys
from tinymem.errors import ModelUnreachableError
from tinymem.llm import call
try:
    call("openai/test", [{{"role": "user", "content": "hi"}}],
         api_base="http://127.0.0.1:{port}/v1", timeout=30, context=2048, max_reply_chars=100)
except ModelUnreachableError as exc:
    print(exc)
print("litellm" in sys.modules)
"""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"OPENAI_API_KEY": "sk-test", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    message, imported = proc.stdout.strip().splitlines()
    assert f"nothing listens at 127.0.0.1:{port}" in message
    assert imported == "False"


def test_ask_with_nothing_listening_is_unreachable(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    port = _free_port()
    base = f"http://127.0.0.1:{port}/v1"
    proc = tm(project, "ask", "fix it", "-m", "openai/test", "--api-base", base)
    assert proc.returncode == 6, proc.stderr
    assert f"nothing listens at 127.0.0.1:{port}" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_long_error_is_cut_between_words() -> None:
    from tinymem.llm import _translate

    text = " ".join(f"word{i}" for i in range(100))
    exc = _translate(RuntimeError(text), "openai/test", "http://127.0.0.1:1/v1", 5)
    message = str(exc)
    assert message.endswith(" …")
    last = message.removesuffix(" …").rsplit(" ", 1)[1]
    assert last in text.split()


def test_a_truncated_prompt_is_said_on_stderr(
    project: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    long = "fix fetch_user so that it returns v " + "with all the context below " * 300
    server.add(ScriptedReply(text="No change needed.", prompt_tokens=40))
    proc = tm(project, "ask", long, "-m", "openai/test", "--api-base", server.openai_base)
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if "truncated" in ln]
    assert "the endpoint counted 40 prompt tokens" in line
    assert "OLLAMA_CONTEXT_LENGTH" in line
    # A count near tm's estimate says nothing.
    server.add(ScriptedReply(text="No change needed."))
    proc = tm(project, "ask", long, "-m", "openai/test", "--api-base", server.openai_base)
    assert "truncated" not in proc.stderr


def test_behind_a_proxy_the_connect_check_stands_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    from tinymem.errors import ModelUnreachableError
    from tinymem.modelsetup import check_endpoint

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    base = f"http://10.255.255.1:{_free_port()}/v1"  # nothing is reachable there directly
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    check_endpoint("openai/test", base, base, 5)  # litellm's client would use the proxy
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    local = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(ModelUnreachableError):
        check_endpoint("openai/test", local, local, 5)
