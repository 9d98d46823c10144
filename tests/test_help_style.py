"""One metavar style in every --help (NAME, PATH, [PATHS]...: no `<str>`, `<int range>` or
`{prompt}` beside them), and `tm completion --help` keeps its three examples on three lines."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import tm

COMMANDS = [
    "init",
    "status",
    "adopt",
    "state",
    "rebuild",
    "log",
    "show",
    "blame",
    "doctor",
    "config",
    "merge-ledger",
    "ask",
    "diff",
    "accept",
    "reject",
    "serve",
    "completion",
    "undo",
]


def test_metavars_are_one_style(tmp_path: Path) -> None:
    seen = 0
    for name in COMMANDS:
        proc = tm(tmp_path, name, "--help", env={"COLUMNS": "200"})
        if proc.returncode != 0:
            continue  # a command this version does not have
        seen += 1
        text = proc.stdout
        assert not re.search(r"<(str|int|float|int range|path|text)>", text), (name, text)
        usage = text.splitlines()[0]
        assert not re.search(r"[{\[][a-z_]+[}\]]", usage), (name, usage)
    assert seen >= 15


def test_completion_help_shows_each_example_on_its_line(tmp_path: Path) -> None:
    text = tm(tmp_path, "completion", "--help", env={"COLUMNS": "200"}).stdout
    lines = [ln.strip() for ln in text.splitlines()]
    for shell in ("bash", "zsh", "fish"):
        (line,) = [ln for ln in lines if ln.startswith(f"{shell}:")]
        assert line.count("tm completion") == 1


def test_readme_gives_a_user_install_beside_the_developer_one() -> None:
    from tests.conftest import ROOT

    text = (ROOT / "README.md").read_text()
    install = text.split("## Install and test", 1)[1].split("\n## ", 1)[0]
    assert "pipx install ." in install and "uv tool install ." in install
    assert 'pip install -e ".[test]"' in install
