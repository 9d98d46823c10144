"""What `tm ask` shows on real code: an overload's implementation, prose kept to a small share,
and only the budget the prompt needs. Each failed before the relevance index (a31d1aa)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import git, tm, write
from tests.hydration.test_ranking_real import ERRORS_RST, REALCODE


def _init(repo: Path) -> None:
    for project in ("requests", "flask"):
        shutil.copytree(REALCODE / project, repo / project)
    write(repo, "docs/errorhandling.rst", ERRORS_RST)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0


def _ask(repo: Path, prompt: str, budget: int) -> dict[str, Any]:
    proc = tm(repo, "ask", prompt, "--dry-run", "--json", "--budget", str(budget))
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def _hydrated(doc: dict[str, Any]) -> list[str]:
    return [h["entity"] for h in doc["hydrated"]]


def test_an_overload_is_shown_by_its_implementation_its_stubs_as_signatures(repo: Path) -> None:
    _init(repo)
    doc = _ask(repo, "make `LookupDict.get` return the default when the key is missing", 1200)
    hydrated = _hydrated(doc)
    base = "requests/src/requests/structures.py::LookupDict"
    assert f"{base}.get#3" in hydrated or base in hydrated
    user = doc["messages"][1]["content"]
    state = user[user.index("[CURRENT STATE") : user.index("[END STATE]")]
    assert "return self.__dict__.get(key, default)" in state
    if base not in hydrated:  # the stubs are not shown in full on their own
        assert f"{base}.get" not in hydrated and f"{base}.get#2" not in hydrated


def test_a_named_prompt_uses_only_the_budget_it_needs(repo: Path) -> None:
    _init(repo)
    doc = _ask(repo, "make `LookupDict.get` return the default when the key is missing", 8000)
    assert doc["tokens"] < 8000 // 2, doc["tokens"]


def test_prose_nobody_named_takes_a_small_share_of_the_budget(repo: Path) -> None:
    _init(repo)
    prompt = "when an unhandled exception happens during a request, log it before the 500 response"
    doc = _ask(repo, prompt, 8000)
    hydrated = _hydrated(doc)
    assert "flask/src/flask/app.py::Flask.handle_exception" in hydrated
    user = doc["messages"][1]["content"]
    prose = re.findall(r"```[^\n]* path=docs/errorhandling.rst\n(.*?)\n```", user, re.S)
    assert sum(len(p) for p in prose) // 4 <= 8000 // 10, prose
    # Named, it is shown.
    named = _ask(repo, "docs/errorhandling.rst: say that " + prompt, 8000)
    assert any(k.startswith("docs/errorhandling.rst") for k in _hydrated(named))
