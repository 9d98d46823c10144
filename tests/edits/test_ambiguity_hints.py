"""An ambiguous member's hint, followed, resolves it (#12: `tm ask "… Cls.name …"` did not,
for Ruby's `initialize` in two classes, C++'s `delimiter`, Java's overloads of `success`).

Each case is a real reply against a real corpus file: it is blocked as ambiguous, then every
hint the reason gives is followed literally (the request it suggests, the class line it
names, the signature it quotes, a unified diff) and must change that one entity.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from tests.edits.realcorpus import CODE, Case, judge, make_repo
from tinymem.edits.alignment import plain
from tinymem.symbols import extract

RACK = "rack/lib/rack/response.rb"
CLI11 = "cli11/include/CLI/Option.hpp"
CORDOVA = "cordova-android/framework/src/org/apache/cordova/CallbackContext.java"

INITIALIZE = Case(
    "rb-initialize",
    RACK,
    "same name in nested classes",
    "initialize should freeze the headers",
    (),
    {"blocked": "ambiguous"},
    "```ruby path=lib/rack/response.rb\n"
    "def initialize(status, headers)\n"
    "  @status = status\n"
    "  @headers = headers.freeze\n"
    "end\n```\n",
)
DELIMITER = Case(
    "cpp-delimiter",
    CLI11,
    "same name in two classes",
    "delimiter should refuse a newline",
    (),
    {"blocked": "ambiguous"},
    "```cpp path=include/CLI/Option.hpp\n"
    "CRTP *delimiter(char value = '\\0') {\n"
    "    if(value == '\\n') {\n"
    '        throw IncorrectConstruction("a delimiter cannot be a newline");\n'
    "    }\n"
    "    delimiter_ = value;\n"
    "    return static_cast<CRTP *>(this);\n"
    "}\n```\n",
)
SUCCESS = Case(
    "java-success",
    CORDOVA,
    "overloads, signature changed",
    "success should say it succeeded",
    (),
    {"blocked": "ambiguous"},
    "```java path=framework/src/org/apache/cordova/CallbackContext.java\n"
    "    public void success(String message, boolean log) {\n"
    '        LOG.d(LOG_TAG, "success");\n'
    "        sendPluginResult(new PluginResult(PluginResult.Status.OK, message));\n"
    "    }\n```\n",
)
_ASK = re.compile(r'`tm ask "… (\S+) …"`')
_CLASS_LINES = re.compile(r"under its class line \(([^)]*)\)")
_SIGNATURES = re.compile(r"as the file has it \((.*?)\), or for")


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("hints")
    return {
        case.project: make_repo(base / case.project, [case.file])
        for case in (INITIALIZE, DELIMITER, SUCCESS)
    }


def _reason(repo: Path, case: Case) -> str:
    verdict = judge(repo, case)
    assert verdict.outcome == "blocked", (verdict.detail, verdict.reasons)
    (reason,) = verdict.reasons
    assert "is ambiguous" in reason and "; ask again " in reason, reason
    return reason


def _names(case: Case) -> list[str]:
    return [s.name for s in extract(case.path, (CODE / case.file).read_bytes()).symbols]


def _one(case: Case, suffix: str) -> str:
    (name,) = [n for n in _names(case) if plain(n) == suffix or plain(n).endswith("." + suffix)]
    return name


def _applied(repo: Path, case: Case, **change: object) -> None:
    verdict = judge(repo, replace(case, **change))  # type: ignore[arg-type]
    expect = change.get("expect", case.expect)
    assert isinstance(expect, dict)
    (name,) = expect["applied"]
    if verdict.outcome == "blocked" and name == "Rack.Response.initialize":
        # The hint decided the target; the block (two assignments) is then a fragment of
        # that 25-line constructor, which #24 blocks rather than write over its body.
        assert verdict.reasons == [verdict.reasons[0]], verdict.reasons
        assert verdict.reasons[0].startswith(f"A: elided: {name} is a fragment"), verdict.reasons
        return
    assert verdict.outcome == "applied", (change, verdict.detail, verdict.reasons)


@pytest.mark.parametrize("case", [INITIALIZE, DELIMITER], ids=["ruby", "cpp"])
def test_the_request_the_hint_suggests_resolves(case: Case, repos: dict[str, Path]) -> None:
    repo = repos[case.project]
    keys = _ASK.findall(_reason(repo, case))
    assert len(keys) == 2, keys
    for key in keys:
        # The request as the user would retype it, the model's block unchanged.
        _applied(
            repo,
            case,
            request=f"{key} should change",
            expect={"applied": {_one(case, key): "modify"}},
        )


def test_the_class_line_the_hint_names_resolves(repos: dict[str, Path]) -> None:
    repo = repos[INITIALIZE.project]
    (found,) = _CLASS_LINES.findall(_reason(repo, INITIALIZE))
    lines = re.findall(r"`([^`]+)`", found)
    assert lines == ["class Response", "class Raw"], lines
    body = INITIALIZE.reply.split("\n", 1)[1].rsplit("```", 1)[0]
    for line, owner in zip(lines, ["Rack.Response", "Rack.Response.Raw"], strict=True):
        reply = (
            f"```ruby path=lib/rack/response.rb\n{line}\n{textwrap.indent(body, '  ')}end\n```\n"
        )
        _applied(
            repo, INITIALIZE, reply=reply, expect={"applied": {f"{owner}.initialize": "modify"}}
        )


def test_the_signature_the_hint_quotes_resolves_an_overload(repos: dict[str, Path]) -> None:
    repo = repos[SUCCESS.project]
    reason = _reason(repo, SUCCESS)
    assert "CallbackContext.success …" not in reason  # `Cls.name` names all six
    (found,) = _SIGNATURES.findall(reason)
    signatures = re.findall(r"`([^`]+)`", found)
    assert signatures[:2] == [
        "public void success(JSONObject message)",
        "public void success(String message)",
    ]
    old = "public void success(String message, boolean log)"
    for signature, name in zip(
        signatures, ["CallbackContext.success", "CallbackContext.success#2"], strict=False
    ):
        reply = SUCCESS.reply.replace(old, signature)
        _applied(repo, SUCCESS, reply=reply, expect={"applied": {name: "modify"}})


def test_a_unified_diff_the_hint_offers_changes_an_overloads_signature(
    repos: dict[str, Path],
) -> None:
    repo = repos[SUCCESS.project]
    assert "or for the change as a unified diff" in _reason(repo, SUCCESS)
    diff = (
        "```diff\n"
        "--- a/framework/src/org/apache/cordova/CallbackContext.java\n"
        "+++ b/framework/src/org/apache/cordova/CallbackContext.java\n"
        "@@ -78,3 +78,3 @@\n"
        "-    public void success(String message) {\n"
        "+    public void success(String message, boolean log) {\n"
        "         sendPluginResult(new PluginResult(PluginResult.Status.OK, message));\n"
        "     }\n"
        "```\n"
    )
    _applied(repo, SUCCESS, reply=diff, expect={"applied": {"CallbackContext.success#2": "modify"}})
