"""Every member of the real corpus files, rendered as hydration shows it, parses once its `⋮`
lines are removed and it is dedented: what a model copies back verbatim reads as code."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.edits.realcorpus import CODE
from tinymem.hydration.excerpts import render
from tinymem.symbols import analyze, extract, language_for_path

# Code files only: the corpus also holds configuration files (pyproject.toml, package.json,
# workflows), vendored for the replies that change them, which have no members to render.
FILES = sorted(
    str(p.relative_to(CODE))
    for p in CODE.rglob("*")
    if p.is_file()
    and "licenses" not in p.parts
    and p.suffix != ".md"
    and language_for_path(str(p)) is not None
)

# Vendored for a whole-file reply (a script that only imports): nothing to render.
NO_DEFINITIONS = {"requests/src/requests/certs.py"}


@pytest.mark.parametrize("file", FILES)
def test_every_member_renders_to_code_that_parses(file: str) -> None:
    data = (CODE / file).read_bytes()
    language = language_for_path(file)
    assert language is not None
    assert analyze(language, data).clean, "corpus files parse as they are"
    symbols = extract(file, data).symbols
    if file in NO_DEFINITIONS:
        assert not symbols
        return
    # A module of functions has no members: its definitions, then.
    members = [s for s in symbols if s.parent is not None] or symbols
    assert members
    for sym in members:
        text = render(language, data, [(sym.start, sym.end)])
        kept = "\n".join(line for line in text.split("\n") if line.strip() != "⋮")
        problem = analyze(language, textwrap.dedent(kept).encode())
        assert problem.clean, (sym.name, problem.reason, text)
        first_line = data[sym.start : data.index(b"\n", sym.start)].decode()
        assert first_line in text  # the member itself, from its first line


def test_the_corpus_has_files(tmp_path: Path) -> None:
    assert len(FILES) >= 10
