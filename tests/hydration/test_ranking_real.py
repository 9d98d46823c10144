"""Ranking on real code (tests/data/realcode): overloads, tests, prose and common names.

Each of these failed on the ranking before the relevance index (a31d1aa)."""

from __future__ import annotations

from pathlib import Path

from tinymem.hydration.relevance import Doc, rank
from tinymem.symbols import extract

REALCODE = Path(__file__).resolve().parents[1] / "data" / "realcode"
STRUCTURES = "requests/src/requests/structures.py"
SESSIONS = "requests/src/requests/sessions.py"
FLASK_APP = "flask/src/flask/app.py"

# A test module of the kind that sits beside requests: it calls the code it tests, so its
# words are the code's words.
TEST_STRUCTURES = """\
from requests.structures import CaseInsensitiveDict


def test_case_insensitive_dict_setitem_keeps_the_last_key_casing():
    d = CaseInsensitiveDict()
    d["Accept"] = "a"
    d["ACCEPT"] = "b"
    assert list(d) == ["ACCEPT"]
    assert d["accept"] == "b"


def test_case_insensitive_dict_lower_items():
    d = CaseInsensitiveDict({"Accept": "a"})
    assert list(d.lower_items()) == [("accept", "a")]
"""

# Prose of the kind a docs/ tree holds: every word of an error-handling request is in it.
ERRORS_RST = (
    """\
Handling Application Errors
===========================

When an unhandled exception happens during a request, Flask logs the exception and returns
a 500 Internal Server Error response. The exception is passed to ``handle_exception``, which
looks up an error handler registered for 500 and calls it; when there is none, the response
is a generic InternalServerError. In debug mode the exception is re-raised instead, so the
debugger shows it. Logging uses ``app.logger``: configure it before the app handles a
request, or the exception is logged with the default handler.

Unhandled exceptions
--------------------

An exception that no handler catches during the request is an unhandled exception. The
500 response is built by ``handle_exception``; log the exception there, or register an
error handler for 500 that logs it before returning the response.
"""
    * 8
)


def _docs(*files: str, extra: dict[str, str] | None = None) -> list[Doc]:
    out: list[Doc] = []
    for name in files:
        data = (REALCODE / name).read_bytes()
        for s in extract(name, data).symbols:
            text = data[s.start : s.end].decode()
            out.append(Doc(f"{name}::{s.name}", name, s.name, text))
    for name, text in (extra or {}).items():
        symbols = extract(name, text.encode()).symbols
        if not symbols:
            out.append(Doc(f"{name}::@file", name, "@file", text))
        for s in symbols:
            body = text.encode()[s.start : s.end].decode()
            out.append(Doc(f"{name}::{s.name}", name, s.name, body))
    return out


def _best(scores: dict[str, float]) -> str:
    return max(scores, key=lambda k: (scores[k], k))


def test_an_overload_set_ranks_its_implementation_first() -> None:
    docs = _docs(STRUCTURES, SESSIONS)
    scores = rank(docs, "make `LookupDict.get` return the default when the key is missing")
    implementation = f"{STRUCTURES}::LookupDict.get#3"
    assert _best(scores) == implementation
    for stub in ("LookupDict.get", "LookupDict.get#2"):
        assert scores[f"{STRUCTURES}::{stub}"] < scores[implementation] / 4


def test_tests_rank_below_the_code_they_test_unless_the_prompt_is_about_tests() -> None:
    docs = _docs(STRUCTURES, extra={"tests/test_structures.py": TEST_STRUCTURES})
    code = f"{STRUCTURES}::CaseInsensitiveDict.__setitem__"
    test = "tests/test_structures.py::test_case_insensitive_dict_setitem_keeps_the_last_key_casing"
    scores = rank(docs, "the case insensitive dict setitem should keep the casing of the last key")
    assert scores[code] > scores[test]
    about_tests = rank(
        docs, "add a test that the case insensitive dict setitem keeps the last key casing"
    )
    assert _best(about_tests) == test


def test_prose_nobody_named_ranks_below_the_code() -> None:
    docs = _docs(FLASK_APP, extra={"docs/errorhandling.rst": ERRORS_RST})
    prompt = "when an unhandled exception happens during a request, log it before the 500 response"
    scores = rank(docs, prompt)
    assert _best(scores) == f"{FLASK_APP}::Flask.handle_exception"
    named = rank(docs, "docs/errorhandling.rst: say that " + prompt)
    assert _best(named) == "docs/errorhandling.rst::@file"


def test_a_name_whose_word_runs_through_the_file_is_weak_evidence() -> None:
    # "session" is in nearly every entity of sessions.py; `mount` is in one.
    docs = _docs(SESSIONS)
    scores = rank(docs, "the session should mount an adapter under the longest prefix first")
    assert _best(scores) == f"{SESSIONS}::Session.mount"
    assert scores[f"{SESSIONS}::session"] < scores[f"{SESSIONS}::Session.mount"] / 2
