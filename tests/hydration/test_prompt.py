"""The fixed parts of a prompt say each thing once (#27: an 800-token prompt spent half its
budget on them): the system prompt's rules, the recent window, the signature map, the state
section."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, tm, write
from tinymem.hydration.hydrate import _said
from tinymem.hydration.prompt import recent_window, system_prompt
from tinymem.ledger import Episode, Transition
from tinymem.records import State


def test_the_system_prompt_keeps_every_rule_and_says_each_once() -> None:
    text = system_prompt()
    for rule in (
        "the CURRENT STATE below is the only truth about the code",
        "```python path=src/app.py",
        "COMPLETE, first line to last",
        "inside its class lines as shown (⋮ marks lines left out)",
        "Several symbols of one file may share a block. Do not repeat unchanged symbols.",
        "A new file: give the whole file in one block with its path.",
        '"... rest of the code unchanged" or "existing code here"',
        "what a block leaves out is kept unchanged, never deleted",
        "`DELETE: src/app.py::parse_args` (a function or class)",
        "`DELETE: src/app.py::Parser.parse` (a method)",
        "`DELETE: src/app.py` (the whole file)",
        "one line per deletion, with the real repository path",
        "Only use paths inside the repository. Do not edit entities listed in a STATE NOTICE.",
        "A unified diff or a SEARCH/REPLACE block is accepted too",
        "`DECISION: text`, `CONSTRAINT: text`, `GOTCHA: text` or `TRIED: text`",
        "(or `NOTE: kind: text`); kept if the user accepts it",
        "Keep prose short.",
    ):
        assert rule in text, rule
    # Said once: the placeholders rule was rule 4 and again the end of rule 5, complete
    # definitions rule 2 and again rule 5.
    assert text.count("rest of the code unchanged") == 1
    assert "complete definitions" not in text
    assert text.count("outside any code block") == 2  # DELETE lines and NOTE lines
    # One line a rule: no wrapped continuation lines.
    assert not [line for line in text.splitlines() if line.startswith(" ")]


def _ask(summary: str, *proposals: str, outcome: str = "") -> Episode:
    n = len(proposals)
    return Episode(
        kind="ask",
        summary=summary,
        outcome=outcome or f"{n} proposal(s), 0 blocked",
        proposals=dict.fromkeys(proposals, "0" * 40),
    )


def _accept(*proposals: str, changed: tuple[str, ...] = (), notes: int = 0) -> Episode:
    return Episode(
        kind="accept",
        summary="accepted " + ", ".join(proposals),
        proposals=dict.fromkeys(proposals, "0" * 40),
        transitions=[
            Transition(key, State.PROPOSED, State.AUTHORITATIVE, "0" * 40, "accepted")
            for key in changed
        ],
        notes={f"n{i}": {"scope": "project", "record": "0" * 40} for i in range(notes)},
    )


def _reject(*proposals: str, why: str | None = None) -> Episode:
    ep = Episode(kind="reject", summary="rejected " + ", ".join(proposals))
    ep.proposals = dict.fromkeys(proposals, "0" * 40)
    ep.details = {"rejected": list(proposals), **({"why": why} if why else {})}
    return ep


def _window(*newest_first: Episode) -> list[str]:
    text = recent_window([(f"c{i}", ep) for i, ep in enumerate(newest_first)])
    lines = text.rstrip("\n").splitlines()
    assert lines[0] == "[RECENT EPISODES: context only, not truth]"
    assert lines[-1] == "[END RECENT]"
    return lines[1:-1]


def test_an_accept_is_said_on_the_line_of_the_ask_it_answered_without_proposal_ids() -> None:
    ask = _ask("Tidy up parse_args.", "aa11bb", "cc22dd")
    accept = _accept("aa11bb", "cc22dd", changed=("cli.py::parse_args", "cli.py::Run.go"), notes=1)
    # The request named parse_args: only what it did not name is named again.
    assert _window(accept, ask) == ["- ask: Tidy up parse_args. → accepted Run.go, with a note"]
    joined = "\n".join(_window(accept, ask))
    assert "aa11bb" not in joined and "(ok)" not in joined and "proposal(s)" not in joined


def test_verdicts_come_in_order_and_a_reason_is_kept() -> None:
    ask = _ask("Make Client.get faster.", "p1", "p2")
    accept = _accept("p1", changed=("app.py::Client.get",))
    reject = _reject("p2", why="the cache is per process")
    assert _window(reject, accept, ask) == [
        "- ask: Make Client.get faster. → accepted → rejected, because the cache is per process"
    ]


def test_what_the_window_cannot_pair_stands_on_its_own_line() -> None:
    # The ask is older than the window's four episodes; the other accept took proposals of
    # two asks; a blocked outcome and a whole file say what they are.
    older = _ask("Add a retry to fetch.", "p1")
    newer = _ask("Rename helpers.", "p2", outcome="1 proposal(s), 1 blocked")
    both = _accept("p1", "p2", changed=("util.py::helper",))
    whole = _accept("p9", changed=("README.md::@file",))
    lines = _window(whole, both, newer, _reject("p3"), older)
    assert lines == [
        "- accept: accepted README.md",
        "- accept: accepted helper",
        "- ask: Rename helpers. (1 proposal(s), 1 blocked)",
        "- reject: rejected",
    ]


def test_a_signature_that_only_repeats_the_name_is_left_out_and_no_empty_state(
    repo: Path,
) -> None:
    params = "".join(f"    arg{i}: int = {i},\n" for i in range(3))
    body = "".join(f"    total = total + arg0 * {i}\n" for i in range(400))
    write(
        repo,
        "calc.py",
        f"def accumulate(\n{params}) -> int:\n    total = 0\n{body}    return total\n\n\n"
        "def small(x: int) -> int:\n    return accumulate(x) + 1\n",
    )
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    proc = tm(repo, "ask", "--dry-run", "--json", "--budget", "800", "make accumulate faster")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    user = doc["messages"][1]["content"]
    assert doc["hydrated"] == []  # too large for 800 tokens
    # `def accumulate(` said nothing its name does not; nothing shown: no empty section.
    assert "calc.py: accumulate\n" in user
    assert "[CURRENT STATE" not in user and "[END STATE]" not in user
    assert user.startswith("[OTHER ENTITIES: signatures only]\n")
    # A signature with more than the name keeps it; a keyword alone or the name alone does not.
    assert _said("Client.get", "def get(self, path: str) -> str:") == (
        " — def get(self, path: str) -> str:"
    )
    assert _said("Session", "class Session(SessionRedirectMixin):") != ""
    assert _said("Session", "class Session:") == ""
    assert _said("Client.get", "async def get(") == ""
    assert _said("parse#2", "def parse(") == ""  # an overload's second definition
