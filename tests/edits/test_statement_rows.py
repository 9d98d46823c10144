"""`statements._rows`: which lines of a file lie inside a definition, in one pass over the
sorted spans, against the straightforward test of every line against every span."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinymem.edits import statements
from tinymem.symbols import extract, language_for_path

REAL = Path(__file__).resolve().parents[1] / "data" / "realcode"


def _oracle(
    data: bytes, spans: list[tuple[int, int]], imports: set[int]
) -> list[tuple[int, bytes]]:
    """The code `_rows` replaced (lines × spans), kept as the definition of the answer."""
    rows: list[tuple[int, bytes]] = []
    offset = 0
    for row, line in enumerate(data.split(b"\n")):
        start, offset = offset, offset + len(line) + 1
        if line.strip():
            inside = any(a < start + len(line) and start < b for a, b in spans)
            rows.append((-1 if inside or row in imports else row, line.strip()))
    return rows


_LINE = st.sampled_from([b"", b"   ", b"x = 1", b"  def f():", b"\treturn y", b"}", b"a"])


@st.composite
def _files(draw: st.DrawFn) -> tuple[bytes, list[tuple[int, int]], set[int]]:
    lines = draw(st.lists(_LINE, max_size=40))
    data = b"\n".join(lines)
    # Spans anywhere in the text, also empty, reversed, nested, overlapping or unsorted:
    # whatever the extractor gives, both must agree.
    offset = st.integers(min_value=0, max_value=len(data) + 2)
    spans = draw(st.lists(st.tuples(offset, offset), max_size=12))
    imports = draw(st.sets(st.integers(min_value=0, max_value=max(len(lines), 1))))
    return data, spans, imports


@settings(max_examples=500)
@given(_files())
def test_one_pass_agrees_with_every_line_against_every_span(
    case: tuple[bytes, list[tuple[int, int]], set[int]],
) -> None:
    data, spans, imports = case
    assert statements._rows(data, list(spans), imports) == _oracle(data, spans, imports)


@pytest.mark.parametrize(
    "rel",
    [
        "mypy/mypy/errors.py",
        "flask/src/flask/app.py",
        "cli11/include/CLI/Option.hpp",
        "gin/context.go",
    ],
)
def test_real_files_with_real_definitions(rel: str) -> None:
    path = REAL / rel
    data = path.read_bytes()
    language = language_for_path(rel)
    assert language is not None
    spans = [(s.start, s.end) for s in extract(rel, data).symbols]
    imports = statements._import_rows(language, data)
    rows = statements._outside_rows(rel, language, data)
    assert rows == _oracle(data, spans, imports)
    # Both kinds occur, so the comparison says something.
    assert any(row < 0 for row, _ in rows) and any(row >= 0 for row, _ in rows)
