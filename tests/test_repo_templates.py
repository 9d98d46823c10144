"""`init_repo` and the `initialised` fixture's copies of a session template: a copy must be a
repository of its own that tm treats exactly as one initialised in place."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import PY_APP, Initialise, git, init_repo, tm, write

FILES = {"app.py": PY_APP, "pkg/util.py": "def util():\n    return 1\n"}


def _state(repo: Path) -> list[dict[str, object]]:
    """`tm state`, less what names the moment of the init (its episode and time)."""
    entities: list[dict[str, object]] = json.loads(tm(repo, "state", "--json").stdout)["entities"]
    return [{k: v for k, v in e.items() if k not in ("episode", "time")} for e in entities]


def test_a_copy_is_what_init_in_place_makes(
    repo: Path, initialised: Initialise, tmp_path: Path
) -> None:
    in_place = tmp_path / "in-place"
    in_place.mkdir()
    git(in_place, "init", "-q", "-b", "main")
    init_repo(in_place, FILES)
    initialised(FILES)
    assert _state(repo) == _state(in_place)
    # The same State Map content (its episode/ and meta/ name the init's episode), the same
    # committed tree.
    tip = "refs/tinymem/heads/main"
    for rev in (f"{tip}:entities", f"{tip}:files", "HEAD^{tree}"):
        assert git(repo, "rev-parse", rev) == git(in_place, "rev-parse", rev)
    assert git(repo, "status", "--porcelain") == ""
    assert tm(repo, "status", "--check").returncode == 0


def test_a_copied_template_names_nothing_of_the_template(
    repo: Path, initialised: Initialise, _repo_templates: object
) -> None:
    initialised(FILES)
    templates = _repo_templates.made  # type: ignore[attr-defined]
    (template,) = [t for key, t in templates.items() if key[0] == tuple(FILES.items())]
    needle = str(template).encode()
    for path in (repo / ".git").rglob("*"):
        if path.is_file():
            assert needle not in path.read_bytes(), path
    # An edit in the copy is the copy's: stale there, not in the template.
    write(repo, "app.py", PY_APP.replace("return path\n", "return path.upper()\n"))
    assert tm(repo, "status", "--check").returncode == 1
    assert tm(template, "status", "--check").returncode == 0
    assert (template / "app.py").read_text() == PY_APP


def test_uncommitted_setups_init_from_the_index(repo: Path, initialised: Initialise) -> None:
    initialised({"a.py": "def a():\n    return 1\n"}, commit=False)
    assert git(repo, "rev-parse", "--verify", "-q", "HEAD", check=False) == ""
    assert [e["entity"] for e in _state(repo)] == ["a.py::a"]


def test_each_message_and_commit_choice_is_a_template_of_its_own(
    repo: Path, initialised: Initialise
) -> None:
    initialised(FILES, message="first")
    assert git(repo, "log", "--format=%s").split() == ["first"]
