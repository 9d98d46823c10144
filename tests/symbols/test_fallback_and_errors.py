"""Regex fallback, files without symbols, broken files, CRLF line endings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinymem.symbols import analyze, extract
from tinymem.symbols.pysyntax import python_error

DATA = Path(__file__).parent / "data"

SAMPLES = [
    "sample.py",
    "sample.js",
    "sample.ts",
    "sample.tsx",
    "sample.go",
    "sample.rs",
    "sample.java",
    "sample.c",
    "sample.cpp",
    "sample.rb",
    "sample.lua",
    "sample.kt",
]


def read(name: str) -> bytes:
    path = DATA / name
    return (path if path.exists() else DATA / f"{name}.txt").read_bytes()


@pytest.mark.parametrize(("name", "ext"), [("sample.lua", ".lua"), ("sample.kt", ".kt")])
def test_regex_fallback_is_never_clean(name: str, ext: str) -> None:
    ex = extract(name, read(name))
    assert ex.method == "regex"
    assert ex.clean is False
    assert ex.reason == f"regex fallback: no grammar for {ext}"
    assert ex.symbols


def test_regex_fallback_keeps_unicode_byte_offsets() -> None:
    data = "-- Grüße\nlocal function größe()\n  return 'ß'\nend\n\nfunction after()\nend\n".encode()
    ex = extract("x.lua", data)
    spans = {s.name: data[s.start : s.end].decode() for s in ex.symbols}
    assert spans == {
        "größe": "local function größe()\n  return 'ß'\nend",
        "after": "function after()\nend",
    }


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("docs/README.md", "# Title\n\n```python\ndef not_extracted():\n    pass\n```\n"),
        ("pyproject.toml", '[project]\nname = "x"\n'),
        ("data.json", '{"class": "def"}'),
        ("notes.txt", "class Foo:\n    def bar(self): pass\n"),
        ("Makefile", "all:\n\techo hi\n"),
    ],
)
def test_files_without_symbols(path: str, text: str) -> None:
    ex = extract(path, text.encode())
    assert (ex.language, ex.method, ex.symbols, ex.clean, ex.reason) == (
        None,
        "none",
        (),
        True,
        None,
    )


def test_markdown_sample() -> None:
    ex = extract("README.md", read("README.md"))
    assert ex.method == "none" and ex.symbols == () and ex.clean


@pytest.mark.parametrize(
    "path", ["a.py", "a.js", "a.ts", "a.tsx", "a.go", "a.rs", "a.java", "a.c", "a.cpp", "a.rb"]
)
def test_empty_file(path: str) -> None:
    ex = extract(path, b"")
    assert ex.method == "tree-sitter"
    assert ex.symbols == ()
    assert ex.clean is True and ex.reason is None


def test_empty_regex_file() -> None:
    ex = extract("a.lua", b"")
    assert ex.symbols == () and ex.method == "regex" and not ex.clean


BROKEN_PY = b"""\
def ok(a):
    return a


def broken(a):
    return a +* 2 $


class Later:
    def m(self):
        return 1
"""


def test_python_syntax_error_keeps_symbols() -> None:
    ex = extract("broken.py", BROKEN_PY)
    assert ex.clean is False
    assert ex.reason == "invalid syntax at line 6, column 15"
    assert [s.name for s in ex.symbols] == ["ok", "broken", "Later", "Later.m"]


def test_python_missing_token() -> None:
    ex = extract("broken.py", b"def ok(a):\n    return a\n\n\ndef broken(a, :\n    return a\n")
    assert ex.clean is False
    assert ex.reason == "missing ')' at line 5, column 14"
    assert [s.name for s in ex.symbols] == ["ok", "broken"]


def test_missing_token_reason() -> None:
    ex = extract("m.c", b"int f(void) {\n    return 1\n}\n\nint g(void) { return 2; }\n")
    assert ex.clean is False
    assert ex.reason == "missing ';' at line 2, column 13"
    assert [s.name for s in ex.symbols] == ["f", "g"]


@pytest.mark.parametrize(
    ("path", "data"),
    [
        ("x.go", b"package p\n\nfunc A() {\n\treturn\n}\n\nfunc B( {\n}\n"),
        ("x.rs", b"fn a() {}\n\nfn b( {\n}\n"),
        ("x.java", b"class A {\n  void m() {\n}\n"),
        ("x.ts", b"export function a(): void {}\nclass {\n"),
        ("x.rb", b"class A\n  def m\n  end\n"),
    ],
)
def test_syntax_errors_are_reported(path: str, data: bytes) -> None:
    ex = extract(path, data)
    assert ex.clean is False
    assert ex.reason is not None
    assert ex.reason.startswith(("syntax error at line ", "missing "))
    assert ", column " in ex.reason


@pytest.mark.parametrize("name", SAMPLES)
def test_crlf_line_endings(name: str) -> None:
    """CRLF files give the same symbols, spans covering the same text (with CRLF)."""
    lf = read(name)
    crlf = lf.replace(b"\n", b"\r\n")
    a = extract(name, lf)
    b = extract(name, crlf)
    assert [(s.name, s.kind, s.parent) for s in a.symbols] == [
        (s.name, s.kind, s.parent) for s in b.symbols
    ]
    assert a.clean == b.clean
    for sa, sb in zip(a.symbols, b.symbols, strict=True):
        assert crlf[sb.start : sb.end] == lf[sa.start : sa.end].replace(b"\n", b"\r\n")
        assert not crlf[sb.start : sb.end].endswith((b"\r", b"\n"))


def test_error_column_counts_characters_not_bytes() -> None:
    ascii_line = extract("a.c", b'int f(void) { char *s = "xx"; return 1 }\n')
    unicode_line = extract("a.c", 'int f(void) { char *s = "üü"; return 1 }\n'.encode())
    assert ascii_line.reason == unicode_line.reason == "missing ';' at line 1, column 39"


def test_minified_code_is_one_unparsed_entity() -> None:
    bundle = b"".join(
        b"function f%d(a){return a*%d}var v%d=f%d(%d);" % (i, i, i, i, i) for i in range(400)
    )
    ex = extract("static/chunks/app.js", bundle + b"\n")
    assert ex.method == "none" and ex.symbols == () and ex.clean
    assert ex.language == "javascript"
    assert ex.reason is not None and "minified" in ex.reason


@pytest.mark.parametrize("name", SAMPLES[:10])
def test_hand_written_code_is_parsed_even_when_long(name: str) -> None:
    data = read(name) * 40  # well past the size floor, with ordinary line lengths
    ex = extract(name, data)
    assert ex.method == "tree-sitter"
    assert ex.symbols


def test_one_long_line_under_the_size_floor_is_still_parsed() -> None:
    ex = extract("a.js", b"function f(a){return a}" * 100)  # 2,300 bytes on one line
    assert ex.method == "tree-sitter"
    assert [s.name for s in ex.symbols][:1] == ["f"]


def test_python_errors_are_described_in_cpythons_words() -> None:
    # tree-sitter wraps the whole broken definition in one ERROR node at its first column;
    # CPython says what is wrong and where. A MISSING token stays tree-sitter's (precise).
    unclosed = extract("a.py", b"def total(items:\n    return sum(items)\n")
    assert unclosed.reason == "'(' was never closed at line 1, column 10"
    no_colon = analyze("python", b"class A:\n    def f(self)\n        pass\n")
    assert no_colon.reason == "expected ':' at line 2, column 16"
    # Where CPython sees no error (a grammar newer than tm's interpreter, say), tree-sitter's
    # own position stands.
    assert python_error(b"def f():\n    return 1\n") is None
