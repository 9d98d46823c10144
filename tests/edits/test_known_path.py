"""A path the reply names that tm does not know: the one known file it ends like, whether the
block changes what that file has or only adds to it (#24: tm never creates a file from a path
the reply did not spell out in full and unambiguously)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import PY_APP, Initialise, tm, tm_ask
from tests.modelserver import ModelServer


def _ask(repo: Path, server: ModelServer, reply: str) -> dict[str, object]:
    server.add(reply)
    proc = tm_ask(repo, server, "change it", "--json")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert isinstance(prop, dict)
    return prop


FILES = {"src/app.py": PY_APP}


def test_a_short_path_changing_a_known_function_means_that_file(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    prop = _ask(repo, server, "```python path=app.py\ndef fetch_user(uid):\n    return None\n```\n")
    assert prop["path"] == "src/app.py" and prop["kind"] == "symbols"
    assert any("the one file it can mean is src/app.py" in n for n in prop["notes"])


def test_a_short_path_with_only_new_functions_means_that_file_too(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    prop = _ask(repo, server, "```python path=app.py\ndef test_fetch():\n    assert True\n```\n")
    assert prop["path"] == "src/app.py" and prop["kind"] == "symbols"
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 0, proc.stderr
    assert not (repo / "app.py").exists()  # no file invented from the name
    assert (repo / "src" / "app.py").read_text().startswith(PY_APP.rstrip("\n"))
    assert "def test_fetch():" in (repo / "src" / "app.py").read_text()
