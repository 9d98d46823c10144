"""`tm ask` → `tm accept` on a real file, through the loopback model server: byte-exact.

The commonest real edit — one method of a large class, written alone — in the shapes small
models write it, must land inside that method and nowhere else.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import Initialise, tm, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer

SESSIONS = (CODE / "requests/src/requests/sessions.py").read_text()
PATH = "src/requests/sessions.py"
CLOSE = '''    def close(self) -> None:
        """Closes all adapters and as such the session"""
        for v in self.adapters.values():
            v.close()
'''
NEW_CLOSE = CLOSE + "        self.cookies.clear()\n"
EXPECTED = SESSIONS.replace(CLOSE, NEW_CLOSE)
MOUNT = "    def mount(self, prefix: str, adapter: BaseAdapter) -> None:\n"
HEADER = "class Session(SessionRedirectMixin):\n"


FILES = {PATH: SESSIONS}


@pytest.mark.parametrize(
    "block",
    [
        f"```python path={PATH}\n{NEW_CLOSE}```\n",
        f"```python path={PATH}\n{textwrap.dedent(NEW_CLOSE)}```\n",
        f"```python\n# {PATH}\n{NEW_CLOSE}```\n",
        f"```python path={PATH}\n{HEADER}    ⋮\n{NEW_CLOSE}    ⋮\n```\n",
        f"```diff\n--- a/{PATH}\n+++ b/{PATH}\n@@ -885,3 +885,4 @@\n"
        "         for v in self.adapters.values():\n             v.close()\n"
        "+        self.cookies.clear()\n \n```\n",
        f"{PATH}\n```python\n<<<<<<< SEARCH\n            v.close()\n\n{MOUNT}=======\n"
        f"            v.close()\n        self.cookies.clear()\n\n{MOUNT}>>>>>>> REPLACE\n```\n",
    ],
    ids=["indented", "dedented", "path-comment", "tm-excerpt", "unified-diff", "search-replace"],
)
def test_one_method_lands_byte_exact(
    repo: Path, initialised: Initialise, server: ModelServer, block: str
) -> None:
    initialised(FILES)
    server.add("Here is the change:\n\n" + block)
    proc = tm_ask(repo, server, "make Session.close also clear the cookies", "--json")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert prop["gates"]["A"] == "pass", prop
    accepted = tm(repo, "accept", prop["id"])
    assert accepted.returncode == 0, accepted.stderr
    assert (repo / PATH).read_text() == EXPECTED
    assert tm(repo, "status", "--check").returncode == 0
    state = json.loads(tm(repo, "state", "--json").stdout)
    rec = {e["entity"]: e for e in state["entities"]}[f"{PATH}::Session.close"]
    assert rec["source"] == "model"
    assert tm(repo, "rebuild").returncode == 0


def test_the_ambiguous_send_is_never_appended(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    server.add(
        f"```python path={PATH}\ndef send(self, request: PreparedRequest, **kwargs: Any)"
        " -> Response:\n    return None\n```\n"
    )
    proc = tm_ask(repo, server, "send should return None", "--json")
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert prop["confidence"] == "UNRESOLVED"
    assert (
        "SessionRedirectMixin.send" in prop["gates"]["A"] and "Session.send" in prop["gates"]["A"]
    )
    accepted = tm(repo, "accept", prop["id"])
    assert accepted.returncode == 5
    assert (repo / PATH).read_text() == SESSIONS
