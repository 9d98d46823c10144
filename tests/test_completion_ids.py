"""TAB after `tm accept`, `tm diff`, `tm reject` offers the pending proposal ids (then
`path::Symbol` entities), after `tm show` the newest episode ids: read from the State Map,
without importing litellm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PY_APP, Initialise, tm
from tests.modelserver import ModelServer


def _complete(cwd: Path, words: str) -> tuple[list[str], str]:
    code = (
        "import sys\n"
        "from tinymem.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('HEAVY' if 'litellm' in sys.modules or 'openai' in sys.modules else 'LIGHT',"
        " file=sys.stderr)\n"
    )
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    env = {
        **os.environ,
        "_TM_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(cword),
    }
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=env
    )
    return proc.stdout.split(), proc.stderr.strip().splitlines()[-1]


def test_ids_and_entities_complete_from_the_state_map(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    from tests.test_accept import REPLY, _ask, _pid

    initialised({"app.py": PY_APP})
    pid = _pid(_ask(repo, server, REPLY))
    for command in ("accept", "diff", "reject"):
        words, weight = _complete(repo, f"tm {command} ")
        assert words == [pid], command
        assert weight == "LIGHT"
    assert _complete(repo, f"tm accept {pid[:3]}")[0] == [pid]
    assert _complete(repo, "tm accept app")[0] == ["app.py::"]
    entities = _complete(repo, "tm accept app.py::")[0]
    assert "app.py::fetch_user" in entities
    episodes = [e["episode"] for e in json.loads(tm(repo, "log", "--json").stdout)]
    words, weight = _complete(repo, "tm show ")
    assert set(words) == set(episodes) and weight == "LIGHT"


def test_outside_a_repository_nothing_is_offered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_dir = tmp_path / "plain"
    env_dir.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert _complete(env_dir, "tm accept ")[0] == []
