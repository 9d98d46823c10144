"""A definition a reply adds to a file when another tracked file already defines it alike: the
reply's path is likely wrong, so the proposal is held (INFERRED, placement `elsewhere`) with
the other file named; definitions files share by design still go in (audit D5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Initialise
from tinymem.accept import plan
from tinymem.acceptadvice import blocked_line
from tinymem.edits.proposals import Outcome, build
from tinymem.edits.reply import parse_reply
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import current
from tinymem.repository import open_repo

HELPER = '''def normalise_header(name: str, value: str) -> tuple[str, str]:
    """The header's name in title case and its value without surrounding space."""
    cleaned = value.strip()
    if not cleaned:
        raise ValueError(f"empty value for {name}")
    return name.strip().title(), cleaned
'''
FILES = {
    "app/headers.py": "import re\n\n\n" + HELPER,
    "app/client.py": "from app.headers import normalise_header\n\n\ndef send(h):\n"
    "    return normalise_header(*h)\n",
    "app/cli.py": "import sys\n\n\ndef main() -> int:\n    print(sys.argv)\n    return 0\n",
    "app/models.py": "class User:\n    def __init__(self, name):\n        self.name = name\n\n"
    "    def save(self, db):\n        db.put(self.name, self)\n",
    "app/config.py": 'DEFAULT_TIMEOUT = 30\nNAME = "app"\n',
    "app/a.py": "def shared(x):\n    return x + 1\n",
    "app/b.py": "def shared(x):\n    return x + 1\n",
    "tests/test_headers.py": "def test_title():\n    assert 'a'.title() == 'A'\n",
    "tests/test_client.py": "import unittest\n\n\nclass T(unittest.TestCase):\n"
    "    def setUp(self):\n        self.x = 1\n",
    "lib/norm.h": "int normalise(int x);\n",
    "app/fmt.pyi": "def fmt(x: int) -> str: ...\n",
}


def _build(repo: Path, reply: str, *, cache: bool = True) -> Outcome:
    handle = open_repo(str(repo))
    view = current(handle)
    writer = ObjectWriter(handle.git)
    out = build(
        view,
        writer,
        handle.workdir,
        parse_reply(reply),
        verify(handle, view),
        {},
        "t",
        cache_dir=handle.cache_dir if cache else None,
    )
    writer.flush()
    return out


def _held(out: Outcome) -> list[str]:
    return [p.reason or "" for p in out.proposals if p.placement == "elsewhere"]


@pytest.mark.parametrize("cache", [True, False], ids=["relevance-index", "state-map"])
def test_a_copy_of_another_files_function_is_held_naming_that_file(
    repo: Path, initialised: Initialise, cache: bool
) -> None:
    initialised(FILES)
    fixed = HELPER.replace("raise ValueError", "raise KeyError")
    out = _build(repo, f"```python\n# app/client.py\n{fixed}```\n", cache=cache)
    (p,) = out.proposals
    assert (p.path, p.confidence, p.placement) == ("app/client.py", "INFERRED", "elsewhere")
    assert p.gates["A"].startswith("INFERRED: normalise_header is defined in app/headers.py")
    handle = open_repo(str(repo))
    result = plan(handle, current(handle), [p])
    (check,) = result.checks
    assert not check.ok
    assert f"`tm accept {p.id} --path app/client.py`" in blocked_line(check)
    assert result.files["app/client.py"].after == result.files["app/client.py"].before
    # The user's named action: a second definition there after all.
    confirmed = plan(handle, current(handle), [p], placed={"app/client.py"})
    assert confirmed.checks[0].ok
    assert fixed.encode() in (confirmed.files["app/client.py"].after or b"")


def test_a_new_file_of_copies_under_a_misspelt_path_is_held(
    repo: Path, initialised: Initialise
) -> None:
    initialised(FILES)
    out = _build(repo, f"```python\n# app/header.py\n{HELPER}```\n")
    (p,) = out.proposals
    assert (p.kind, p.confidence) == ("new-file", "INFERRED")
    assert "normalise_header is defined in app/headers.py already" in (p.reason or "")
    assert "a new file" in (p.reason or "")


@pytest.mark.parametrize(
    ("path", "code"),
    [
        # `main` in a second script
        ("app/tool.py", "def main() -> int:\n    print(sys.argv)\n    return 0\n"),
        # a pytest function another test file has too
        ("tests/test_client.py", "def test_title():\n    assert 'a'.title() == 'A'\n"),
        # setUp of another test class, __init__ of another class (members: class-qualified)
        (
            "tests/test_headers.py",
            "class H(unittest.TestCase):\n    def setUp(self):\n        self.x = 1\n",
        ),
        (
            "app/client.py",
            "class Client:\n    def __init__(self, name):\n        self.name = name\n\n"
            "    def save(self, db):\n        db.put(self.name, self)\n",
        ),
        # a constant of the same name and value: variables read alike everywhere
        ("app/client.py", "DEFAULT_TIMEOUT = 30\n"),
        # a name two other files define: no one file it was meant for
        ("app/client.py", "def shared(x):\n    return x + 1\n"),
        # the same name with a body of its own
        (
            "app/client.py",
            "def normalise_header(raw: bytes) -> str:\n    return raw.decode('latin-1').lower()\n",
        ),
        # the definition of what a header or a type stub declares
        ("lib/norm.c", "int normalise(int x) {\n    return x;\n}\n"),
        ("app/fmt.py", "def fmt(x: int) -> str:\n    return str(x)\n"),
    ],
    ids=[
        "main",
        "test-function",
        "setUp",
        "__init__",
        "constant",
        "two-files",
        "other-body",
        "header",
        "stub",
    ],
)
def test_definitions_files_share_by_design_are_not_held(
    repo: Path, initialised: Initialise, path: str, code: str
) -> None:
    initialised(FILES)
    out = _build(repo, f"```python\n# {path}\n{code}```\n")
    assert out.proposals, out.refused
    assert _held(out) == []
    assert all(p.confidence == "CONFIRMED" for p in out.proposals), [
        (p.path, p.gates) for p in out.proposals
    ]


def test_a_diff_adding_another_files_function_is_held(repo: Path, initialised: Initialise) -> None:
    initialised(FILES)
    lines = "".join(f"+{line}\n" for line in HELPER.splitlines())
    diff = (
        "```diff\n--- a/app/client.py\n+++ b/app/client.py\n@@ -4,2 +4,8 @@\n def send(h):\n"
        f"     return normalise_header(*h)\n+\n+\n{lines}```\n"
    )
    (p,) = _build(repo, diff).proposals
    assert p.placement == "elsewhere"
    assert "normalise_header is defined in app/headers.py already" in p.gates["A"]
