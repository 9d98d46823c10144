"""What `tm ask` shows the model, on a real repository (`tm ask --dry-run --json`)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from tests.conftest import git, tm, write
from tinymem.symbols import analyze

METHODS = "".join(
    f"    def m{i}(self, value):\n"
    f'        """Method {i}."""\n'
    + "".join(f"        value = value + {i * 10 + k}\n" for k in range(8))
    + "        return value\n\n"
    for i in range(40)
)
APP = f"class Big:\n    LIMIT = 3\n\n{METHODS}\ndef helper():\n    return Big()\n"


def _state(repo: Path, prompt: str, budget: int) -> tuple[str, list[str]]:
    proc = tm(repo, "ask", prompt, "--dry-run", "--json", "--budget", str(budget))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    user = doc["messages"][1]["content"]
    state = user[user.index("[CURRENT STATE") : user.index("[END STATE]")]
    return state, [h["entity"] for h in doc["hydrated"]]


def _init(repo: Path) -> None:
    write(repo, "app.py", APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0


def test_naming_a_method_of_a_large_class_shows_it_under_the_header_not_the_class(
    repo: Path,
) -> None:
    _init(repo)
    state, hydrated = _state(repo, "make Big.m7 return early", 2000)
    assert "app.py::Big.m7" in hydrated and "app.py::Big" not in hydrated
    assert state.count("class Big:") == 1
    assert state.count("value = value + 70\n") == 1  # m7's text, once
    assert "LIMIT = 3" not in state  # the class body itself is not shown
    fence = re.search(r"```python path=app.py\n(.*?)\n```", state, re.S)
    assert fence is not None
    # Copyable: with the `⋮` lines removed, the excerpt parses.
    text = "\n".join(line for line in fence.group(1).split("\n") if line.strip() != "⋮")
    assert analyze("python", textwrap.dedent(text).encode()).clean


def test_a_class_that_fits_easily_is_shown_whole_and_its_members_not_again(repo: Path) -> None:
    _init(repo)
    state, hydrated = _state(repo, "make Big.m7 return early", 60000)
    assert "app.py::Big" in hydrated and "app.py::Big.m7" not in hydrated
    assert state.count("value = value + 70\n") == 1


def test_no_entity_text_appears_twice_whatever_the_budget(repo: Path) -> None:
    _init(repo)
    for budget in (900, 3000, 9000, 30000):
        state, _ = _state(repo, "Big m3 m7 helper value", budget)
        for i in range(40):
            assert state.count(f"value = value + {i * 10}\n") <= 1, (budget, i)
