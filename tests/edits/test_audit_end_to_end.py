"""Replies an audit found tm wrote wrongly (Gate A passing, the proposal CONFIRMED), through
`tm ask` on the loopback model server and `tm accept`, checked on disk."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Initialise, tm, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer


def _ask(
    repo: Path, server: ModelServer, reply: str, request: str, *extra: str
) -> list[dict[str, object]]:
    server.add(reply)
    proc = tm_ask(repo, server, request, "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    proposals: list[dict[str, object]] = json.loads(proc.stdout)["proposals"]
    return proposals


def test_a_line_added_after_a_last_line_without_a_break_is_a_line_of_its_own(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"requirements.txt": "requests==2.32.0\nflask==3.0.0", "app.py": "import flask\n"})
    reply = (
        "```diff\n--- a/requirements.txt\n+++ b/requirements.txt\n@@ -1,2 +1,3 @@\n"
        " requests==2.32.0\n flask==3.0.0\n+click==8.1.7\n```\n"
    )
    (prop,) = _ask(repo, server, reply, "add click to the requirements")
    shown = tm(repo, "diff", str(prop["id"])).stdout
    assert "-flask==3.0.0\n\\ No newline at end of file\n+flask==3.0.0\n+click==8.1.7\n" in shown
    assert tm(repo, "accept", str(prop["id"])).returncode == 0
    assert (
        repo / "requirements.txt"
    ).read_bytes() == b"requests==2.32.0\nflask==3.0.0\nclick==8.1.7"
    assert tm(repo, "status", "--check").returncode == 0


def test_a_loose_search_replace_keeps_the_inside_of_a_new_multiline_string(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    path = "src/requests/sessions.py"
    sessions = (CODE / "requests" / path).read_text()
    initialised({path: sessions})
    reply = (
        f"{path}\n```python\n<<<<<<< SEARCH\nfor v in self.adapters.values():\n    v.close()\n"
        '=======\nfor v in self.adapters.values():\n    v.close()\nlog.debug("""closed adapters:\n'
        '%s\n""", list(self.adapters))\n>>>>>>> REPLACE\n```\n'
    )
    (prop,) = _ask(repo, server, reply, "Session.close: log which adapters it closed")
    assert tm(repo, "accept", str(prop["id"])).returncode == 0
    closed = (
        "            v.close()\n"
        '        log.debug("""closed adapters:\n%s\n""", list(self.adapters))\n'
    )
    assert (repo / path).read_text() == sessions.replace("            v.close()\n", closed, 1)


MERGE_HOOKS = '''def merge_hooks(
    request_hooks: _t.HooksType,
    session_hooks: _t.HooksType,
    dict_class: type = OrderedDict,
) -> _t.HooksType:
    """Properly merges both requests and session hooks."""
    if session_hooks is None or not session_hooks.get("response"):
        return request_hooks
    return merge_setting(request_hooks, session_hooks, dict_class)
'''


def test_a_function_of_another_file_under_a_wrong_path_is_not_added_unasked(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    files = {
        f"src/requests/{name}": (CODE / "requests/src/requests" / name).read_text()
        for name in ("sessions.py", "structures.py")
    }
    initialised(files)
    reply = f"```python\n# src/requests/structures.py\n{MERGE_HOOKS}```\n"
    (prop,) = _ask(repo, server, reply, "fix merge_hooks", "--repair", "0")
    assert prop["confidence"] == "INFERRED"
    accepted = tm(repo, "accept", str(prop["id"]))
    assert accepted.returncode == 5
    assert "merge_hooks is defined in src/requests/sessions.py already" in accepted.stderr
    for path, text in files.items():
        assert (repo / path).read_text() == text
    # Only the user's named action writes the second definition.
    placed = tm(repo, "accept", str(prop["id"]), "--path", "src/requests/structures.py")
    assert placed.returncode == 0, placed.stderr
    assert (repo / "src/requests/structures.py").read_text().endswith(MERGE_HOOKS)


def test_an_in_path_heading_inside_one_fence_edits_each_file(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"src/a.py": "def f():\n    return 1\n", "src/b.py": "def g():\n    return 2\n"})
    reply = (
        "```python\n# src/a.py\ndef f():\n    return 10\n\n\n# In src/b.py:\ndef g():\n"
        "    return 20\n```\n"
    )
    props = _ask(repo, server, reply, "return tens", "--repair", "0")
    assert sorted(str(p["path"]) for p in props) == ["src/a.py", "src/b.py"]
    assert tm(repo, "accept", "--all").returncode == 0
    assert (repo / "src/a.py").read_text() == "def f():\n    return 10\n"
    assert (repo / "src/b.py").read_text() == "def g():\n    return 20\n"


TERMINAL = (
    "import os\n\n\nclass Terminal:\n    def __init__(self, fd):\n        self.fd = fd\n\n"
    "    def write(self, text):\n        os.write(self.fd, text.encode())\n"
)
FLUSH = "    def flush(self):\n        os.fsync(self.fd)\n"


def test_a_definition_added_to_the_file_the_request_names_is_not_held(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """The Windows terminal's own `flush`, asked for by naming its file, where the POSIX one
    has one alike: where the user asked for it, not a wrong path (a review of D5). Unnamed,
    the same reply is still held, naming the other file."""
    initialised({"term/_posix.py": TERMINAL + "\n" + FLUSH, "term/_windows.py": TERMINAL})
    reply = f"```python\n# term/_windows.py\nclass Terminal:\n{FLUSH}```\n"
    (held,) = _ask(repo, server, reply, "add flush to the windows Terminal", "--repair", "0")
    assert held["confidence"] == "INFERRED"
    refused = tm(repo, "accept", str(held["id"]))
    assert refused.returncode == 5
    assert "flush is defined in term/_posix.py already" in refused.stderr
    assert tm(repo, "reject", str(held["id"])).returncode == 0
    (prop,) = _ask(
        repo, server, reply, "add flush to the Terminal in term/_windows.py", "--repair", "0"
    )
    assert prop["confidence"] == "CONFIRMED"
    assert tm(repo, "accept", str(prop["id"])).returncode == 0
    assert (repo / "term" / "_windows.py").read_text() == TERMINAL + "\n" + FLUSH
