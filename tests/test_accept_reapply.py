"""Two diff or SEARCH/REPLACE proposals of one reply that change lines outside every
definition (imports): each is a whole-file proposal computed on the text the model saw. After
tm accepts one, the other's own edit is applied again to the file as it is now; a hand edit
since is never written over without `--overwrite-stale`, and `tm diff` shows what that would
write (audit D6)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Initialise, tm, tm_ask, write
from tests.modelserver import ModelServer

SRC = "import os\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"


def _sr(search: str, replace: str) -> str:
    return f"a.py\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


TWO_IMPORTS = (
    _sr("import os\n", "import os\nimport re\n")
    + "\nAlso:\n\n"
    + _sr("import os\n", "import os\nimport sys\n")
)


def _ask(repo: Path, server: ModelServer, reply: str) -> list[str]:
    server.add(reply)
    proc = tm_ask(repo, server, "add the imports", "--json", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    return [str(p["id"]) for p in json.loads(proc.stdout)["proposals"]]


def test_the_second_import_is_applied_to_the_file_the_first_accept_left(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC})
    first, second = _ask(repo, server, TWO_IMPORTS)
    assert tm(repo, "accept", first).returncode == 0
    shown = tm(repo, "diff", second)
    assert " import os\n+import sys\n import re\n" in shown.stdout, shown.stdout
    assert "blocked" not in shown.stdout
    accepted = tm(repo, "accept", second)
    assert accepted.returncode == 0, accepted.stderr
    assert (repo / "a.py").read_text() == SRC.replace(
        "import os\n", "import os\nimport sys\nimport re\n"
    )
    assert tm(repo, "status", "--check").returncode == 0


def test_both_in_one_run_are_applied_one_after_the_other(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC})
    _ask(repo, server, TWO_IMPORTS)
    accepted = tm(repo, "accept", "--all")
    assert accepted.returncode == 0, accepted.stderr
    text = (repo / "a.py").read_text()
    assert "import re\n" in text and "import sys\n" in text
    assert text.replace("import re\n", "").replace("import sys\n", "") == SRC


def test_a_definition_changed_earlier_in_the_run_is_not_written_back(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # The whole-file proposal (an import) came after the one changing f: its ask-time file
    # wrote `return 1` back over f, both promoted.
    initialised({"a.py": SRC})
    reply = (
        _sr("import os\n", "import os\nimport re\n")
        + "\n```python\n# a.py\ndef f():\n    return 10\n```\n"
    )
    _ask(repo, server, reply)
    assert tm(repo, "accept", "--all").returncode == 0
    assert (repo / "a.py").read_text() == SRC.replace(
        "import os\n", "import os\nimport re\n"
    ).replace("return 1\n", "return 10\n")


def test_a_hand_edit_since_blocks_and_diff_shows_what_overwriting_writes(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC})
    (only,) = _ask(repo, server, _sr("import os\n", "import os\nimport re\n"))
    edited = SRC.replace("return 2", "return 222")
    write(repo, "a.py", edited)
    blocked = tm(repo, "accept", only)
    assert blocked.returncode == 5
    assert "--overwrite-stale a.py" in blocked.stderr
    assert (repo / "a.py").read_text() == edited
    shown = tm(repo, "diff", only).stdout
    assert f"this is what `tm accept {only} --overwrite-stale a.py` would write" in shown
    assert "-    return 222\n+    return 2\n" in shown  # the user sees what it takes back


def test_an_edit_that_no_longer_applies_stays_stale(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # Both rewrite the same line: after the first, the second's SEARCH matches nowhere.
    initialised({"a.py": SRC})
    reply = _sr("import os\n", "import os, re\n") + "\n" + _sr("import os\n", "import os, sys\n")
    first, second = _ask(repo, server, reply)
    assert tm(repo, "accept", first).returncode == 0
    blocked = tm(repo, "accept", second)
    assert blocked.returncode == 5
    assert (repo / "a.py").read_text() == SRC.replace("import os\n", "import os, re\n")


def test_a_change_adopted_since_is_not_tms_own(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC})
    _, second = _ask(repo, server, TWO_IMPORTS)
    write(repo, "a.py", SRC.replace("return 2", "return 222"))
    assert tm(repo, "adopt", "a.py").returncode == 0
    assert tm(repo, "accept", second).returncode == 5
    assert (repo / "a.py").read_text() == SRC.replace("return 2", "return 222")
