"""`tm log` and `tm show` on a scripted history with every episode kind.

The history (init, ask, accept, adopt, ask, accept, ask that failed, ask, reject, adopt of a
deletion) is built once per module through the real `tm`, the real loopback model server and a
real repository; tests only read it (the blame tests work on copies).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PY_APP, git, write
from tests.modelserver import ModelServer, ScriptedReply
from tinymem.ask import AskResult
from tinymem.repository import Repo

# Registers the audit commands on top of whatever cli.py registers (register is idempotent),
# so these tests run the real CLI whether or not cli.py wires them in yet.
_RUN = (
    "from tinymem.cli import app, main; from tinymem.commands import audit;"
    " audit.register(app); main()"
)


def tma(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env.setdefault("COLUMNS", "200")
    return subprocess.run(
        [sys.executable, "-c", _RUN, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=full_env,
        check=False,
    )


def clear_model_env(mp: pytest.MonkeyPatch) -> None:
    """The developer's TM_* settings and provider keys must not leak into expected output."""
    from tinymem.config import SETTINGS
    from tinymem.doctor import API_KEY_VARS

    for name in (*(s.env for s in SETTINGS), *API_KEY_VARS):
        mp.delenv(name, raising=False)


def tma_json(cwd: Path, *args: str) -> Any:
    proc = tma(cwd, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


UTIL = "def helper():\n    return 1\n"
UTIL_V2 = "def helper():\n    return 2\n"
FETCH_V2 = (
    'def fetch_user(uid, retries=3):\n    for _ in range(retries):\n        return {"id": uid}'
)
POST_V2 = (
    'class Client:\n    def post(self, path, body):\n        return {"path": path, "body": body}'
)
GET_V2 = "class Client:\n    def get(self, path):\n        return path.strip()"
MODEL = "openai/test-coder"


def isolated_env(mp: pytest.MonkeyPatch, home: Path) -> None:
    """The same isolation conftest gives each test, for a module-scoped history."""
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        mp.setenv(f"GIT_{who}_NAME", "Test User")
        mp.setenv(f"GIT_{who}_EMAIL", "test@example.com")
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"
    )


@dataclass
class History:
    repo: Path
    commits: list[str]  # oldest first
    episodes: list[str]  # oldest first
    proposals: list[str]  # in the order the asks made them
    requests: list[list[dict[str, str]]]  # messages the model server received, per chat call


def _ask(repo: Repo, server: ModelServer, prompt: str, reply: str | ScriptedReply) -> AskResult:
    from tinymem.ask import AskOptions, ask

    server.add(reply)
    # The history is about how the audit commands render episodes: one call per ask.
    flags: dict[str, str | None] = {
        "model": MODEL,
        "apiBase": server.openai_base,
        "repair": "0",
    }
    return ask(repo, AskOptions(prompt=prompt, flags=flags))


def _pid(result: AskResult) -> str:
    assert result.error is None and result.outcome is not None, result.error
    (proposal,) = result.outcome.proposals
    return proposal.id


def build_history(path: Path, mp: pytest.MonkeyPatch) -> History:
    """Drives the core in this process (one litellm import instead of one per `tm ask`)."""
    from tinymem.accept import accept, reject
    from tinymem.adopt import adopt
    from tinymem.baseline import init
    from tinymem.repository import open_repo

    mp.chdir(path)
    mp.setenv("OPENAI_API_KEY", "sk-test")
    write(path, "app.py", PY_APP)
    write(path, "util.py", UTIL)
    git(path, "add", ".")
    git(path, "commit", "-qm", "base")
    repo = open_repo(str(path))
    assert init(repo).committed is not None
    pids: list[str] = []
    with ModelServer() as server:
        pids.append(
            _pid(
                _ask(
                    repo,
                    server,
                    "add a retry to fetch_user",
                    f"```python path=app.py\n{FETCH_V2}\n```\n",
                )
            )
        )
        assert accept(repo, [pids[0]]).committed is not None
        write(path, "util.py", UTIL_V2)
        assert adopt(repo, ["util.py"]).committed is not None
        pids.append(
            _pid(
                _ask(
                    repo,
                    server,
                    "make Client.post return a dict",
                    f"```python path=app.py\n{POST_V2}\n```\n",
                )
            )
        )
        assert accept(repo, [pids[1]]).committed is not None
        failed = _ask(repo, server, "this one fails", ScriptedReply(failure="not_found"))
        assert failed.error is not None and failed.error.exit_code == 7
        pids.append(
            _pid(_ask(repo, server, "strip the path in get", f"```python\n{GET_V2}\n```\n"))
        )
        reject(repo, [pids[2]])
        requests = [r.body["messages"] for r in server.chat_requests]
    (path / "util.py").unlink()
    assert adopt(repo, ["util.py"]).committed is not None
    commits = git(path, "rev-list", "--reverse", "refs/tinymem/heads/main").split()
    episodes = [json.loads(git(path, "show", f"{c}:episode/episode.json"))["id"] for c in commits]
    return History(path, commits, episodes, pids, requests)


@contextmanager
def libgit2_config_home(home: Path) -> Iterator[None]:
    """libgit2 fixed its config search path when pygit2 was imported: point it at `home`."""
    import pygit2
    from pygit2.enums import ConfigLevel

    levels = {
        ConfigLevel.GLOBAL: str(home),
        ConfigLevel.XDG: str(home / ".config" / "git"),
        ConfigLevel.SYSTEM: str(home / "etc"),
    }
    saved = {level: pygit2.settings.search_path[level] for level in levels}
    try:
        for level, where in levels.items():
            pygit2.settings.search_path[level] = where
        yield
    finally:
        for level, where in saved.items():
            pygit2.settings.search_path[level] = where


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[History]:
    home = tmp_path_factory.mktemp("home")
    with (
        pytest.MonkeyPatch.context() as mp,
        libgit2_config_home(home),
        warnings.catch_warnings(),
    ):
        # litellm is imported and run in this process here; its pydantic models warn on
        # import and on use, which says nothing about tm.
        warnings.simplefilter("ignore")
        isolated_env(mp, home)
        clear_model_env(mp)
        repo = tmp_path_factory.mktemp("history") / "work"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        history = build_history(repo, mp)
    yield history


def normalize(doc: Any, h: History) -> Any:
    """Replace commit, episode and proposal ids by C1/E1/P1 (oldest first), times by T."""
    names = {c: f"C{i + 1}" for i, c in enumerate(h.commits)}
    names.update({e: f"E{i + 1}" for i, e in enumerate(h.episodes)})
    names.update({p: f"P{i + 1}" for i, p in enumerate(h.proposals)})

    def fix(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, str):
            if value in names:
                return names[value]
            if re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", value):
                return "T"
            for raw, name in names.items():
                value = value.replace(raw, name)
        return value

    return fix(doc)


# ------------------------------------------------------------------------------- tm log


def _entry(**fields: Any) -> dict[str, Any]:
    base = {
        "commit": None,
        "episode": None,
        "branch": "main",
        "time": "T",
        "kind": None,
        "who": "Test User <test@example.com>",
        "author": None,
        "model": None,
        "summary": None,
        "prompt_summary": None,
        "outcome": "ok",
        "error": None,
        "blocked": [],
        "entities_changed": 0,
        "entities_proposed": 0,
        "files": [],
        "proposals": [],
        "undid": None,
        "undone_by": None,
    }
    base.update(fields)
    return base


def expected_log() -> list[dict[str, Any]]:
    return [
        _entry(
            commit="C10",
            episode="E10",
            kind="adopt",
            author="user",
            summary="deleted util.py",
            entities_changed=1,
            files=["util.py"],
        ),
        _entry(
            commit="C9",
            episode="E9",
            kind="reject",
            author="user",
            summary="rejected P3",
            proposals=["P3"],
        ),
        _entry(
            commit="C8",
            episode="E8",
            kind="ask",
            author=MODEL,
            model=MODEL,
            summary="strip the path in get",
            prompt_summary="strip the path in get",
            # No file named: correlation finds Client.get, which is never enough to promote.
            outcome="1 proposal(s), 1 blocked",
            blocked=[
                {
                    "proposal": "P3",
                    "reason": "A: INFERRED: file inferred by correlation with app.py::Client.get"
                    " (score 0.62)",
                }
            ],
            entities_proposed=1,
            proposals=["P3"],
        ),
        _entry(
            commit="C7",
            episode="E7",
            kind="ask",
            author=MODEL,
            model=MODEL,
            summary="this one fails",
            prompt_summary="this one fails",
            outcome="failed",
            error=(
                f"the endpoint {{base}} does not know the model {MODEL}; pull or load it"
                " (e.g. `ollama pull`), or choose another with --model"
            ),
        ),
        _entry(
            commit="C6",
            episode="E6",
            kind="accept",
            author=MODEL,
            model=MODEL,
            summary="accepted P2",
            prompt_summary="make Client.post return a dict",
            entities_changed=2,  # Client.post and the class Client that contains it
            files=["app.py"],
            proposals=["P2"],
        ),
        _entry(
            commit="C5",
            episode="E5",
            kind="ask",
            author=MODEL,
            model=MODEL,
            summary="make Client.post return a dict",
            prompt_summary="make Client.post return a dict",
            outcome="1 proposal(s), 0 blocked",
            entities_proposed=1,
            proposals=["P2"],
        ),
        _entry(
            commit="C4",
            episode="E4",
            kind="adopt",
            author="user",
            summary="adopted util.py",
            entities_changed=1,
            files=["util.py"],
        ),
        _entry(
            commit="C3",
            episode="E3",
            kind="accept",
            author=MODEL,
            model=MODEL,
            summary="accepted P1",
            prompt_summary="add a retry to fetch_user",
            entities_changed=1,
            files=["app.py"],
            proposals=["P1"],
        ),
        _entry(
            commit="C2",
            episode="E2",
            kind="ask",
            author=MODEL,
            model=MODEL,
            summary="add a retry to fetch_user",
            prompt_summary="add a retry to fetch_user",
            outcome="1 proposal(s), 0 blocked",
            entities_proposed=1,
            proposals=["P1"],
        ),
        _entry(
            commit="C1",
            episode="E1",
            kind="init",
            author="import",
            summary="imported 2 tracked files",
            entities_changed=5,
            files=["app.py", "util.py"],
        ),
    ]


def test_log_json_is_exact(history: History) -> None:
    doc = normalize(tma_json(history.repo, "log"), history)
    assert len(doc) == 10
    failed = doc[3]
    base = re.search(r"the endpoint (\S+) does not know", failed["error"] or "")
    assert base is not None, failed
    expected = expected_log()
    expected[3]["error"] = expected[3]["error"].replace("{base}", base.group(1))
    assert doc == expected


def test_log_filters_by_path_entity_kind_and_count(history: History) -> None:
    def kinds(*args: str) -> list[str]:
        return [
            e["kind"] + ":" + e["episode"]
            for e in normalize(tma_json(history.repo, "log", *args), history)
        ]

    # util.py: imported, adopted, deleted.
    assert kinds("util.py") == ["adopt:E10", "adopt:E4", "init:E1"]
    # One entity: its import, the ask that proposed it and the accept that promoted it.
    assert kinds("app.py::fetch_user") == ["accept:E3", "ask:E2", "init:E1"]
    assert kinds("app.py::Client.post") == ["accept:E6", "ask:E5", "init:E1"]
    # The rejected proposal was a model guess at Client.get (correlation, no file named).
    assert kinds("app.py::Client.get") == ["reject:E9", "ask:E8", "init:E1"]
    assert kinds("--kind", "accept") == ["accept:E6", "accept:E3"]
    assert kinds("-n", "2") == ["adopt:E10", "reject:E9"]
    assert kinds("app.py", "--kind", "ask", "-n", "1") == ["ask:E8"]
    assert kinds("nothing.py") == []
    # From a subdirectory, paths are relative to it like git's.
    sub = history.repo / "sub"
    sub.mkdir(exist_ok=True)
    proc = tma(sub, "log", "../util.py", "--json")
    assert [e["episode"] for e in json.loads(proc.stdout)] == [
        history.episodes[9],
        history.episodes[3],
        history.episodes[0],
    ]
    assert tma(history.repo, "log", "../outside.py").returncode == 11


def test_log_text_is_one_line_per_episode(history: History) -> None:
    proc = tma(history.repo, "log")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 10
    short = {c[:12]: i for i, c in enumerate(history.commits)}
    fields = [line.split("\t") for line in lines]
    assert [short[f[1]] for f in fields] == list(range(9, -1, -1))
    assert [f[0] for f in fields] == list(reversed(history.episodes))
    by_kind = {f[3]: line for f, line in zip(fields, lines, strict=True)}
    assert "import" in by_kind["init"] and "[5 changed]" in by_kind["init"]
    accept = lines[4]
    assert MODEL in accept and "promoted" in accept and "[2 changed]" in accept
    assert '("make Client.post return a dict")' in accept
    failed = next(line for line in lines if "this one fails" in line)
    assert "failed: the endpoint" in failed


# ------------------------------------------------------------------------------ tm show


def test_show_accept_has_gates_diff_and_origin(history: History) -> None:
    h = history
    raw = tma_json(h.repo, "show", h.episodes[2])
    doc = normalize(raw, h)
    assert doc["commit"] == "C3" and doc["parent"] == "C2" and doc["episode"] == "E3"
    assert doc["kind"] == "accept" and doc["model"] == MODEL
    assert doc["prompt_summary"] == "add a retry to fetch_user"
    (prop,) = doc["proposals"]
    assert prop["id"] == "P1" and prop["change"] == "resolved" and prop["from_episode"] == "E2"
    assert prop["status"] == "accepted"
    assert prop["gates"] == {
        "A": "pass",
        "ETV": "pass",
        "B": "eligible for --accept (targets hydrated)",
    }
    assert [g["gate"] for g in prop["gates_now"]] == ["A", "ETV", "B"]
    assert all(g["ok"] for g in prop["gates_now"])
    assert prop["diff"] == (
        "--- a/app.py::fetch_user\n"
        "+++ b/app.py::fetch_user\n"
        "@@ -1,2 +1,3 @@\n"
        "-def fetch_user(uid):\n"
        '-    return {"id": uid}\n'
        "\\ No newline at end of file\n"
        "+def fetch_user(uid, retries=3):\n"
        "+    for _ in range(retries):\n"
        '+        return {"id": uid}\n'
        "\\ No newline at end of file\n"
    )
    moves = [(t["entity"], t["from"], t["to"]) for t in doc["transitions"]]
    assert moves == [
        ("app.py::fetch_user", "AUTHORITATIVE", "SUPERSEDED"),
        ("app.py::fetch_user", "PROPOSED", "AUTHORITATIVE"),
    ]
    assert doc["attachments"] == ["episode.json"]
    # The same episode by a commit-id prefix.
    assert tma_json(h.repo, "show", h.commits[2][:10]) == raw


def test_show_ask_json_is_exact(history: History) -> None:
    h = history
    doc = normalize(tma_json(h.repo, "show", h.episodes[4]), h)
    details = doc.pop("details")
    hydrated = doc.pop("hydrated")
    assert doc.pop("notes") == []  # an ask writes no notes
    tokens = doc.pop("tokens")
    timings = doc.pop("timings")
    (prop,) = doc["proposals"]
    artifact = prop["entities"][0]["artifact"]
    base = prop["entities"][0]["base"]
    # Whether the target counts as hydrated is proposals.py's rule; show must reproduce it.
    stored = json.loads(
        git(h.repo, "show", f"{h.commits[4]}:proposals/{h.proposals[1]}/proposal.json")
    )
    assert doc == {
        "commit": "C5",
        "parent": "C4",
        "episode": "E5",
        "kind": "ask",
        "time": "T",
        "who": "Test User <test@example.com>",
        "author": MODEL,
        "model": MODEL,
        "api_base": details["api_base"],
        "summary": "make Client.post return a dict",
        "prompt_summary": "make Client.post return a dict",
        "outcome": "1 proposal(s), 0 blocked",
        "error": None,
        "files": [],
        "transitions": [
            {
                "entity": "app.py::Client.post",
                "from": None,
                "to": "PROPOSED",
                "artifact": artifact,
                "reason": f"proposed by {MODEL} (P2)",
            }
        ],
        "proposals": [
            {
                "id": "P2",
                "change": "recorded",
                "record": prop["record"],
                "missing": False,
                "from_episode": "E5",
                "path": "app.py",
                "kind": "symbols",
                "status": "pending",
                "confidence": "CONFIRMED",
                "reason": None,
                "hydrated": stored["hydrated"],
                "elisions": [],
                "entities": [
                    {"symbol": "Client.post", "op": "modify", "artifact": artifact, "base": base}
                ],
                "gates": {"A": "pass", "ETV": "pass", "B": stored["gates"]["B"]},
                "blocked": None,
                "round": 0,
                "repairs": None,
                "superseded_by": [],
                "gates_now": None,
                "diff": (
                    "--- a/app.py::Client.post\n"
                    "+++ b/app.py::Client.post\n"
                    "@@ -1,2 +1,2 @@\n"
                    " def post(self, path, body):\n"
                    "-        return (path, body)\n"
                    "\\ No newline at end of file\n"
                    '+        return {"path": path, "body": body}\n'
                    "\\ No newline at end of file\n"
                ),
            }
        ],
        "refused": [],
        "undid": None,
        "undone_by": None,
        "attachments": ["episode.json", "messages.json", "prompt.txt", "response.txt"],
    }
    assert details["model"] == MODEL
    shown = {x["entity"] for x in hydrated}
    # The request names Client.post: its class is shown; fetch_user, which an earlier episode
    # changed but the request does not mention, falls below hydration's relevance cut-off (#29).
    assert "app.py::Client" in shown and "app.py::fetch_user" not in shown
    assert isinstance(tokens["prompt"], int) and tokens["prompt"] > 0
    assert isinstance(tokens["completion"], int) and tokens["completion"] > 0
    assert isinstance(tokens["prompt_estimate"], int) and isinstance(tokens["budget"], int)
    assert isinstance(timings["seconds"], float) and timings["seconds"] >= 0
    assert set(timings) == {"seconds", "first_token_seconds"}


def test_show_prints_the_exact_messages_response_and_prompt(history: History) -> None:
    h = history
    ask = h.episodes[1]
    proc = tma(h.repo, "show", ask, "--messages")
    assert proc.returncode == 0, proc.stderr
    stored = git(h.repo, "show", f"{h.commits[1]}:episode/messages.json")
    assert proc.stdout == stored  # byte for byte
    assert json.loads(proc.stdout) == h.requests[0]  # exactly what the server received
    resp = tma(h.repo, "show", ask, "--response")
    assert resp.stdout == f"```python path=app.py\n{FETCH_V2}\n```\n"
    assert tma(h.repo, "show", ask, "--prompt").stdout == "add a retry to fetch_user"
    # A failed call still stored what was sent; an adopt never called a model.
    failed = tma(h.repo, "show", h.episodes[6], "--messages")
    assert json.loads(failed.stdout) == h.requests[2]
    adopt = tma(h.repo, "show", h.episodes[3], "--messages")
    assert adopt.returncode == 2
    assert "has no messages.json" in adopt.stderr and len(adopt.stderr.splitlines()) == 1


def test_show_text_and_errors(history: History) -> None:
    h = history
    proc = tma(h.repo, "show", h.episodes[4])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"episode {h.episodes[4]}" in out
    assert f"model      {MODEL} at" in out
    assert "gate A  pass" in out
    assert '+        return {"path": path, "body": body}' in out
    assert "app.py::Client.post  — → PROPOSED" in out
    deleted = tma(h.repo, "show", h.episodes[9]).stdout
    assert "util.py  deleted" in deleted
    assert "util.py::helper  AUTHORITATIVE → TOMBSTONED" in deleted
    for args, code in [
        (["show", "zzzz"], 2),
        (["show", h.episodes[0], "--messages", "--json"], 2),
        (["show", ""], 2),
    ]:
        proc = tma(h.repo, *args)
        assert proc.returncode == code, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_log_before_init_says_run_init(repo: Path) -> None:
    proc = tma(repo, "log")
    assert proc.returncode == 3
    assert "tm init" in proc.stderr


# ---------------------------------------------------------------------- docs/formats.md

FORMATS = Path(__file__).resolve().parent.parent / "docs" / "formats.md"


def _section(title: str) -> str:
    text = FORMATS.read_text()
    start = text.index(title)
    end = text.find("\n## ", start + 1)
    nxt = text.find("\n### ", start + 1)
    ends = [e for e in (end, nxt) if e != -1]
    return text[start : min(ends)] if ends else text[start:]


def test_formats_doc_lists_every_exit_code() -> None:
    from tinymem.errors import EXIT_CODES

    rows = re.findall(r"^\| (\d+) \| (.+) \|$", _section("## Exit codes"), re.M)
    assert [(int(code), text) for code, text in rows] == list(EXIT_CODES)


def test_formats_doc_lists_every_log_key(history: History) -> None:
    documented = re.findall(r"^\| `(\w+)` \|", _section("### `tm log --json`"), re.M)
    (entry, *_) = tma_json(history.repo, "log", "-n", "1")
    assert documented == [*entry, "branches"]
    (every, *_) = tma_json(history.repo, "log", "-n", "1", "--all-branches")
    assert documented == list(every)
