"""A file's containers are parsed once per text, not on every prompt that shows a member of
it (#29: mypy's checker.py took ~0.5 s of tree-sitter per prompt)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.conftest import git, tm
from tinymem import containercache
from tinymem.ask import AskOptions, prepare
from tinymem.hydration import excerpts
from tinymem.hydration.excerpts import render
from tinymem.repository import open_repo
from tinymem.symbols import extract
from tinymem.symbols.containers import containers

FLASK_APP = Path(__file__).resolve().parent.parent / "data" / "realcode" / "flask" / "src"


def _new_process() -> None:
    """What a new `tm` process starts with: no containers in memory (the cache on disk stays)."""
    containercache.forget()
    containers.cache_clear()


def _parses() -> int:
    return containers.cache_info().misses


def test_the_second_render_reads_the_containers_kept(tmp_path: Path) -> None:
    data = (FLASK_APP / "flask" / "app.py").read_bytes()
    members = [s for s in extract("flask/app.py", data).symbols if s.parent is not None]
    spans = [(s.start, s.end) for s in members[3:6]]
    _new_process()
    plain = render("python", data, spans)
    assert _parses() == 1
    _new_process()
    assert render("python", data, spans, str(tmp_path)) == plain
    assert _parses() == 1  # parsed, and kept
    _new_process()
    assert render("python", data, spans, str(tmp_path)) == plain
    assert _parses() == 0
    other = data.replace(b"class Flask(", b"class Flask2(")
    assert "class Flask2(" in render("python", other, spans, str(tmp_path))
    assert _parses() == 1  # another text: its own entry


def test_a_damaged_entry_is_parsed_again(tmp_path: Path) -> None:
    data = (FLASK_APP / "flask" / "app.py").read_bytes()
    member = next(s for s in extract("flask/app.py", data).symbols if s.parent is not None)
    _new_process()
    plain = render("python", data, [(member.start, member.end)], str(tmp_path))
    for damage in ("not json", '[["a", 1, "h", 0, 0, null]]', "[[1, 2]]"):
        with sqlite3.connect(tmp_path / "symbols.sqlite") as db:
            db.execute("UPDATE containers SET value = ?", (damage,))
        _new_process()
        assert render("python", data, [(member.start, member.end)], str(tmp_path)) == plain
        assert _parses() == 1


def test_a_prompt_does_not_parse_the_files_it_shows_again(repo: Path) -> None:
    (repo / "flask").mkdir()
    (repo / "flask" / "app.py").write_bytes((FLASK_APP / "flask" / "app.py").read_bytes())
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    assert tm(repo, "init").returncode == 0
    opts = AskOptions(prompt="In `Flask.make_response`, accept a bytes body with a status")
    _new_process()
    first = prepare(open_repo(str(repo)), opts).hydration
    assert "class Flask(App):" in first.messages[1]["content"]  # a member under its class
    assert _parses() == 1
    _new_process()
    again = prepare(open_repo(str(repo)), opts).hydration
    assert again.messages == first.messages
    assert _parses() == 0


def test_a_text_rendered_again_is_split_and_hashed_once(tmp_path: Path) -> None:
    """`tm serve` shows the same files request after request, and one request renders a
    file's part again while the state section shrinks."""
    data = (FLASK_APP / "flask" / "app.py").read_bytes()
    members = [s for s in extract("flask/app.py", data).symbols if s.parent is not None]
    _new_process()
    excerpts._lines.cache_clear()
    for n in range(1, 5):
        spans = [(s.start, s.end) for s in members[:n]]
        render("python", data, spans, str(tmp_path))
    assert excerpts._lines.cache_info().misses == 1
    assert containercache._text_id.cache_info().misses == 1
