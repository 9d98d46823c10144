"""Paths too deep or too long for tm to record are refused before anything is written.

A 2,100-component path once passed every check: the directories and the file were written,
then building the ledger's trees hit Python's recursion limit, and the file stayed with nothing
recorded. Every entry point (a reply's path, `tm adopt --path`, `/v1/user/code` in
tests/serve/test_hostile.py) goes through `paths.repo_relative`, which bounds them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Initialise, git, tm, tm_ask
from tests.modelserver import ModelServer
from tinymem.errors import UnsafePathError
from tinymem.paths import MAX_COMPONENTS, MAX_NAME_BYTES, MAX_PATH_BYTES, repo_relative


def deep(components: int, name: str = "f.py") -> str:
    # Names that differ: a model stream repeating one chunk is cut off by litellm.
    return "".join(f"d{i}/" for i in range(components - 1)) + name


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        (deep(2100), "2,100 components deep"),
        (deep(MAX_COMPONENTS + 1), f"{MAX_COMPONENTS + 1} components deep"),
        ("a" * 40 + ("/" + "b" * 200) * 21 + ".py", "4,264 bytes long"),
        ("src/" + "n" * (MAX_NAME_BYTES - 2) + ".py", "a name in it is 256 bytes long"),
        ("src/" + "é" * 128 + ".py", "a name in it is 259 bytes long"),  # bytes, not characters
    ],
)
def test_too_deep_or_long_is_refused(tmp_path: Path, candidate: str, why: str) -> None:
    with pytest.raises(UnsafePathError) as caught:
        repo_relative(str(tmp_path), candidate)
    message = str(caught.value)
    assert why in message and f"at most {MAX_COMPONENTS} components" in message, message
    assert len(message) < 400 and "\n" not in message


def test_the_limits_themselves_are_accepted(tmp_path: Path) -> None:
    assert repo_relative(str(tmp_path), deep(MAX_COMPONENTS)) == deep(MAX_COMPONENTS)
    name = "n" * (MAX_NAME_BYTES - 3) + ".py"
    assert repo_relative(str(tmp_path), "src/" + name) == "src/" + name
    longest = "/".join(["x" * 254] * 16) + "/" + "y" * (MAX_PATH_BYTES - 16 * 255)
    assert len(longest.encode()) == MAX_PATH_BYTES
    assert repo_relative(str(tmp_path), longest) == longest
    # Duplicate slashes and `./` are not counted: the normalised path is what gets written.
    assert repo_relative(str(tmp_path), "./" + deep(MAX_COMPONENTS).replace("/", "//"))


FILES = {"a.py": "def a():\n    return 1\n"}


def test_adopt_path_refuses_a_deep_path_before_writing(repo: Path, initialised: Initialise) -> None:
    initialised(FILES, commit=False)
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    proc = tm(repo, "adopt", "--path", deep(2100), input="x = 1\n")
    assert proc.returncode == 11, proc.stderr
    assert proc.stderr.startswith("tm: refused path") and proc.stderr.count("\n") == 1
    assert "2,100 components deep" in proc.stderr
    assert not (repo / "d0").exists()  # not one directory was made
    assert git(repo, "rev-parse", "refs/tinymem/heads/main").strip() == tip
    # At the limit, the paste is written and recorded like any other.
    proc = tm(repo, "adopt", "--path", deep(MAX_COMPONENTS), input="x = 1\n")
    assert proc.returncode == 0, proc.stderr
    assert (repo / deep(MAX_COMPONENTS)).read_text() == "x = 1\n"
    assert tm(repo, "status", "--check").returncode == 0
    assert tm(repo, "rebuild").returncode == 0


def test_a_reply_naming_a_deep_path_proposes_nothing(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    # A diff's header is where a reply can name a path this long (an info string cannot).
    server.add(f"```diff\n--- /dev/null\n+++ b/{deep(2100)}\n@@ -0,0 +1 @@\n+x = 1\n```\n")
    proc = tm_ask(repo, server, "add x", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["proposals"] == []
    assert any("components deep" in r["reason"] for r in doc["refused"]), doc["refused"]
    assert json.loads(tm(repo, "diff", "--json").stdout) == {"proposals": []}
    assert tm(repo, "accept", "--all").returncode == 0
    assert not (repo / "d0").exists()
