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


# Two imports anchored on lines apart: the second's SEARCH neither overlaps nor touches the
# line the first adds (two SEARCHes on the same line are a conflict: see the correction below).
SRC2 = SRC.replace("import os\n", "import os\nimport json\nimport time\n")
TWO_IMPORTS = (
    _sr("import os\n", "import os\nimport re\n")
    + "\nAlso:\n\n"
    + _sr("import time\n", "import time\nimport sys\n")
)


def _ask(repo: Path, server: ModelServer, reply: str) -> list[str]:
    server.add(reply)
    proc = tm_ask(repo, server, "add the imports", "--json", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    return [str(p["id"]) for p in json.loads(proc.stdout)["proposals"]]


def test_the_second_import_is_applied_to_the_file_the_first_accept_left(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC2})
    first, second = _ask(repo, server, TWO_IMPORTS)
    assert tm(repo, "accept", first).returncode == 0
    shown = tm(repo, "diff", second)
    assert " import time\n+import sys\n" in shown.stdout, shown.stdout
    assert "blocked" not in shown.stdout
    accepted = tm(repo, "accept", second)
    assert accepted.returncode == 0, accepted.stderr
    assert (repo / "a.py").read_text() == SRC2.replace(
        "import os\n", "import os\nimport re\n"
    ).replace("import time\n", "import time\nimport sys\n")
    assert tm(repo, "status", "--check").returncode == 0


def test_both_in_one_run_are_applied_one_after_the_other(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"a.py": SRC2})
    _ask(repo, server, TWO_IMPORTS)
    accepted = tm(repo, "accept", "--all")
    assert accepted.returncode == 0, accepted.stderr
    text = (repo / "a.py").read_text()
    assert "import re\n" in text and "import sys\n" in text
    assert text.replace("import re\n", "").replace("import sys\n", "") == SRC2


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


# Review of D6 (items 1 and 2): tm's own accept changed the lines the edit changes.

JS = (
    "const express = require('express');\nconst cors = require('cors');\n\n"
    "const app = express();\napp.use(express.json());\n\n"
    "function health(req, res) {\n  res.send('ok');\n}\n\n"
    "app.get('/health', health);\nmodule.exports = app;\n"
)


def _js(search: str, replace: str) -> str:
    return f"app.js\n```js\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


def test_an_edit_and_its_correction_in_one_reply_stay_a_conflict(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # The old reapply wrote both lines (CORS open to every origin beside the restricted one).
    initialised({"app.js": JS})
    anchor = "app.use(express.json());\n"
    reply = (
        "Enable CORS:\n\n"
        + _js(anchor, anchor + "app.use(cors());\n")
        + "\nActually, better to restrict the origin:\n\n"
        + _js(anchor, anchor + "app.use(cors({ origin: 'https://example.com' }));\n")
    )
    first, second = _ask(repo, server, reply)
    blocked = tm(repo, "accept", "--all")
    assert blocked.returncode == 5
    assert "conflicts with" in blocked.stderr + blocked.stdout
    assert (repo / "app.js").read_text() == JS
    # One of them, picked by the user, is written alone; the other is then STALE, naming it.
    assert tm(repo, "accept", second).returncode == 0
    stale = tm(repo, "accept", first)
    assert stale.returncode == 5
    assert f"only by tm's accept of proposal {second}" in stale.stderr
    assert (repo / "app.js").read_text() == JS.replace(
        anchor, anchor + "app.use(cors({ origin: 'https://example.com' }));\n"
    )


BUMP = "RETRIES = 3\n"
RETRIES = "import os\n\nRETRIES = 3\n\n\ndef f():\n    return RETRIES\n"


def test_the_same_edit_from_two_asks_is_written_once(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # The old reapply wrote `RETRIES += 2` a second time under the first (7 retries, not 5).
    initialised({"a.py": RETRIES})
    block = _sr(BUMP, BUMP + "RETRIES += 2  # allow for the flaky proxy\n")
    (first,) = _ask(repo, server, block)
    (second,) = _ask(repo, server, block)
    assert tm(repo, "accept", first).returncode == 0
    tm(repo, "accept", second)
    assert (repo / "a.py").read_text() == RETRIES.replace(
        BUMP, BUMP + "RETRIES += 2  # allow for the flaky proxy\n"
    )


def test_a_further_edit_of_the_line_an_accept_added_after_is_not_stacked(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # Two asks adding different lines under one line: git's merge calls that a conflict.
    initialised({"a.py": RETRIES})
    (first,) = _ask(repo, server, _sr(BUMP, BUMP + "RETRIES += 2\n"))
    (second,) = _ask(repo, server, _sr(BUMP, BUMP + "RETRIES *= 2\n"))
    assert tm(repo, "accept", first).returncode == 0
    stale = tm(repo, "accept", second)
    assert stale.returncode == 5
    assert f"only by tm's accept of proposal {first}" in stale.stderr
    assert "takes back the lines of" in stale.stderr
    assert (repo / "a.py").read_text() == RETRIES.replace(BUMP, BUMP + "RETRIES += 2\n")


LOG = (
    "import logging\nimport os\n\nlogging.basicConfig(level=logging.WARNING)\n\n\n"
    "def handler(event):\n    return event\n"
)
CALL = "logging.basicConfig(level=logging.WARNING)\n"
INFO = _sr(CALL, 'logging.basicConfig(level=logging.INFO, format="%(message)s")\n')


def test_a_search_found_again_only_loosely_at_another_place_is_not_reapplied(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # The first accept indents the call in an else: branch; the second's SEARCH then matched
    # only with leading whitespace set aside, there, and the old reapply rewrote that branch.
    initialised({"a.py": LOG})
    branch = (
        'if os.environ.get("APP_ENV") == "dev":\n    logging.basicConfig(level=logging.DEBUG)\n'
        "else:\n    " + CALL
    )
    (first,) = _ask(repo, server, _sr(CALL, branch))
    (second,) = _ask(repo, server, INFO)
    assert tm(repo, "accept", first).returncode == 0
    assert tm(repo, "accept", second).returncode == 5
    assert (repo / "a.py").read_text() == LOG.replace(CALL, branch)


def test_a_search_found_again_only_inside_a_docstring_is_not_reapplied(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # The first accept removes the call and quotes it, indented, in the module docstring: the
    # old reapply rewrote the quotation.
    initialised({"a.py": LOG})
    head = "import logging\nimport os\n\n" + CALL
    doc = '"""Handlers. Callers configure logging themselves, e.g.\n\n    ' + CALL + '"""\n'
    (first,) = _ask(repo, server, _sr(head, doc + "import logging\nimport os\n"))
    (second,) = _ask(repo, server, INFO)
    assert tm(repo, "accept", first).returncode == 0
    written = (repo / "a.py").read_text()
    assert tm(repo, "accept", second).returncode == 5
    assert (repo / "a.py").read_text() == written


def test_overwrite_advice_names_the_accepted_lines_it_would_take_back(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # Review item 8: a hand edit, then tm accepts the proposal changing f; the import
    # proposal is STALE, and --overwrite-stale would also set f back. The advice called all of
    # it "your text".
    initialised({"a.py": SRC})
    reply = (
        _sr("import os\n", "import os\nimport re\n")
        + "\nAnd:\n\n```python\n# a.py\ndef f():\n    return 10\n```\n"
    )
    whole, symbols = _ask(repo, server, reply)
    write(repo, "a.py", SRC.replace("return 2", "return 222"))
    assert tm(repo, "accept", symbols).returncode == 0
    blocked = tm(repo, "accept", whole)
    assert blocked.returncode == 5
    assert f"to replace your text and the lines of proposal {symbols}" in blocked.stderr
    assert (repo / "a.py").read_text() == SRC.replace("return 2", "return 222").replace(
        "return 1\n", "return 10\n"
    )
