"""`--accept` reads a reply as a whole (`tinymem/acceptreply.py`): a first attempt the reply
itself takes back is never written because only the first one passed, and an entity the reply
changes two ways is left to the user. Through the real loopback model server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import MODEL_ENV, Initialise, tm, tm_ask
from tests.modelserver import ModelServer

SRC = "import os\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"
FIRST = "```python\ndef f():\n    return 10\n```\n"
SECOND = "```python\ndef f():\n    return '10'\n```\n"
WAIT = "\nWait, that is wrong; f must return a string. Corrected version:\n\n"
# The correction names no file: tm infers a.py, and only the first attempt is CONFIRMED.
TAKEN_BACK = "In a.py:\n\n" + FIRST + WAIT + SECOND
# Both fences name a.py: two CONFIRMED proposals changing a.py::f differently.
GIVEN_TWICE = "a.py\n" + FIRST + WAIT + "a.py\n" + SECOND


def _ask(
    repo: Path, server: ModelServer, reply: str, *extra: str, prompt: str = "make f return ten"
) -> str:
    server.add(reply)
    proc = tm_ask(repo, server, prompt, "--repair", "0", "--accept", *extra)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _ids(repo: Path) -> list[str]:
    """The pending proposals, CONFIRMED ones first."""
    doc = json.loads(tm(repo, "diff", "--json").stdout)
    props = sorted(doc["proposals"], key=lambda p: (p["confidence"] != "CONFIRMED", p["id"]))
    return [p["id"] for p in props]


def test_a_first_attempt_the_reply_took_back_is_not_written(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC})
    out = _ask(repo, server, TAKEN_BACK)
    assert (repo / "a.py").read_text() == SRC
    first, second = _ids(repo)  # both still pending, the CONFIRMED first attempt first
    held = next(line for line in out.splitlines() if line.startswith(f"--accept: {first} "))
    assert "not promoted" in held and "held back" in held and second in held
    assert "INFERRED" in held and f"tm accept {first}" in held
    # The user can still take the first attempt, by name.
    assert tm(repo, "accept", first).returncode == 0
    assert "return 10\n" in (repo / "a.py").read_text()


def test_an_entity_the_reply_changes_two_ways_is_left_to_the_user(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC})
    doc = json.loads(_ask(repo, server, GIVEN_TWICE, "--json"))
    ids = [p["id"] for p in doc["proposals"]]
    assert len(ids) == 2 and all(p["confidence"] == "CONFIRMED" for p in doc["proposals"])
    assert doc["accepted"] == []
    assert sorted(doc["held"]) == sorted(ids)
    for why in doc["held"].values():
        assert "a.py::f 2 ways" in why and all(i in why for i in ids)
    assert (repo / "a.py").read_text() == SRC
    assert sorted(_ids(repo)) == sorted(ids)


def test_the_same_change_given_twice_is_written_once(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC})
    doc = json.loads(_ask(repo, server, "a.py\n" + FIRST + "\nAgain:\n\na.py\n" + FIRST, "--json"))
    assert doc["held"] == {} and len(doc["accepted"]) == 2
    assert (repo / "a.py").read_text() == SRC.replace("return 1\n", "return 10\n")


def test_a_sibling_left_out_holds_back_only_its_own_file(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC, "b.py": "def h():\n    return 3\n"})
    reply = TAKEN_BACK + "\nAnd in b.py:\n\n```python\ndef h():\n    return 30\n```\n"
    doc = json.loads(_ask(repo, server, reply, "--json", prompt="make f and h return tens"))
    by_path = {p["path"]: p["id"] for p in doc["proposals"] if p["confidence"] == "CONFIRMED"}
    assert doc["accepted"] == [by_path["b.py"]]
    assert list(doc["held"]) == [by_path["a.py"]]
    assert (repo / "a.py").read_text() == SRC
    assert "return 30" in (repo / "b.py").read_text()


def test_tm_serve_accept_holds_back_the_same_way(
    repo: Path, initialised: Initialise, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tinymem.serve.chat import ServeSettings, chat, trailer

    initialised({"a.py": SRC})
    for k, v in MODEL_ENV.items():
        monkeypatch.setenv(k, v)
    server.add(TAKEN_BACK)
    settings = ServeSettings(
        str(repo), {"model": "openai/test", "apiBase": server.openai_base}, accept=True
    )
    outcome = chat(settings, {"messages": [{"role": "user", "content": "make f return ten"}]})
    assert outcome.accepted == [] and len(outcome.held) == 1
    assert (repo / "a.py").read_text() == SRC
    assert "held back" in trailer(outcome)


# rev4 item 4: one block adds a helper, another changes f to call it. The add-only proposal is
# never `hydrated` (nothing it changes was shown), so it held back f, and nothing was written;
# before that, f alone was written calling an undefined `_clamp`.
HELPER = "a.py\n```python\ndef _clamp(x):\n    return max(0, x)\n```\n"
USES_IT = "a.py\n```python\ndef f():\n    return _clamp(-1) + 1\n```\n"
HELPER_AND_USE = "I'll add a helper and use it.\n\n" + HELPER + "\n" + USES_IT


def test_a_helper_added_beside_a_change_that_calls_it_is_written_with_it(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC})
    doc = json.loads(_ask(repo, server, HELPER_AND_USE, "--json", prompt="clamp in f"))
    ids = [p["id"] for p in doc["proposals"]]
    assert len(ids) == 2 and doc["held"] == {}
    assert sorted(doc["accepted"]) == sorted(ids)
    written = (repo / "a.py").read_text()
    assert "return _clamp(-1) + 1\n" in written and "def _clamp(x):\n" in written
    scope: dict[str, object] = {}
    exec(compile(written, "a.py", "exec"), scope)  # the file runs: f finds its helper
    assert scope["f"]() == 1  # type: ignore[operator]
    assert _ids(repo) == []


def test_a_helper_added_alone_stays_for_the_user(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC})
    doc = json.loads(_ask(repo, server, HELPER, "--json", prompt="add a clamp helper"))
    assert doc["accepted"] == [] and doc["held"] == {}
    assert (repo / "a.py").read_text() == SRC
    assert len(_ids(repo)) == 1


def test_a_helper_added_twice_differently_holds_the_change_that_calls_it(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC})
    other = HELPER.replace("max(0, x)", "min(max(0, x), 9)")
    doc = json.loads(
        _ask(
            repo,
            server,
            HELPER + "\nOr:\n\n" + other + "\n" + USES_IT,
            "--json",
            prompt="clamp in f",
        )
    )
    assert doc["accepted"] == [] and len(doc["held"]) == 3
    adds = [p["id"] for p in doc["proposals"] if p["id"] in doc["held"]][:2]
    assert any("a.py::_clamp 2 ways" in doc["held"][i] for i in adds)
    assert (repo / "a.py").read_text() == SRC


def test_a_helper_goes_only_with_a_change_that_is_written(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # The change of f is taken back by the reply (an INFERRED correction): f is held, and the
    # helper it came with with it.
    initialised({"a.py": SRC})
    doc = json.loads(_ask(repo, server, HELPER + "\n" + TAKEN_BACK, "--json"))
    assert doc["accepted"] == []
    helper = next(p["id"] for p in doc["proposals"] if "_clamp" in json.dumps(p["entities"]))
    assert "held back too" in doc["held"][helper]
    assert (repo / "a.py").read_text() == SRC


def test_tm_serve_accept_writes_a_helper_with_its_caller(
    repo: Path, initialised: Initialise, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tinymem.serve.chat import ServeSettings, chat

    initialised({"a.py": SRC})
    for k, v in MODEL_ENV.items():
        monkeypatch.setenv(k, v)
    server.add(HELPER_AND_USE)
    settings = ServeSettings(
        str(repo), {"model": "openai/test", "apiBase": server.openai_base}, accept=True
    )
    outcome = chat(settings, {"messages": [{"role": "user", "content": "clamp in f"}]})
    assert len(outcome.accepted) == 2 and outcome.held == {}
    assert "def _clamp(x):" in (repo / "a.py").read_text()
