"""tree-sitter-python accepts code Python rejects; the gates must not."""

from __future__ import annotations

import pytest

from tinymem.symbols import analyze, extract


@pytest.mark.parametrize(
    "src",
    [b"def f():\nreturn 1\n", b"x = 1\n    y = 2\n", b"def f():\n    # c\n"],
)
def test_python_only_errors_fail_analyze(src: bytes) -> None:
    # Confidence follows tree-sitter (the rules' definition); the gates use analyze(), which
    # adds Python's own parser.
    syntax = analyze("python", src)
    assert syntax.clean is False
    assert syntax.reason is not None and "line" in syntax.reason


def test_valid_python_stays_clean() -> None:
    assert analyze("python", b"def f():\n    return 1\n").clean
    assert extract("a.py", b"def f():\n    return 1\n").clean


def test_doc_comment_on_the_first_line_after_a_bom_belongs_to_its_symbol() -> None:
    data = b"\xef\xbb\xbf# About f.\ndef f():\n    pass\n"
    (sym,) = extract("a.py", data).symbols
    assert data[sym.start : sym.end] == b"# About f.\ndef f():\n    pass"
