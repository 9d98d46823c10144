"""SEARCH/REPLACE whose SEARCH differs from the file only in leading whitespace, and a
```diff fence holding plain code (#24)."""

from __future__ import annotations

from tinymem.edits.patches import apply_edit
from tinymem.edits.reply import parse_reply

GO = b"""package h

func (h *H) Enabled(level int) bool {
\treturn level >= h.level
}

func (h *H) WithGroup(name string) *H {
\tif name == "" {
\t\treturn h
\t}
\treturn &H{}
}

func (h *H) WithAttrs(n int) *H {
\tif n == 0 {
\t\treturn h
\t}
\treturn &H{}
}
"""


def _sr(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def test_spaces_for_tabs_apply_with_the_files_tabs() -> None:
    code = _sr(
        "func (h *H) Enabled(level int) bool {\n    return level >= h.level\n}\n",
        "func (h *H) Enabled(level int) bool {\n    if h == nil {\n        return false\n"
        "    }\n    return level >= h.level\n}\n",
    )
    patched = apply_edit("search-replace", code, GO, "h.go")
    assert patched.problem is None, patched.problem
    assert patched.data == GO.replace(
        b"\treturn level >= h.level\n",
        b"\tif h == nil {\n\t\treturn false\n\t}\n\treturn level >= h.level\n",
        1,
    )


def test_the_common_indentation_stripped_applies_at_the_files_indentation() -> None:
    code = _sr('if name == "" {\n\treturn h\n}\n', '// empty: h\nif name == "" {\n\treturn h\n}\n')
    patched = apply_edit("search-replace", code, GO, "h.go")
    assert patched.problem is None, patched.problem
    assert patched.data == GO.replace(b'\tif name == "" {', b'\t// empty: h\n\tif name == "" {')


def test_python_dedented_search_gets_the_methods_indentation() -> None:
    text = b"class A:\n    def f(self):\n        x = 1\n        return x\n"
    code = _sr("x = 1\nreturn x\n", "x = 1\nif x:\n    x += 1\nreturn x\n")
    patched = apply_edit("search-replace", code, text, "a.py")
    assert patched.problem is None, patched.problem
    assert patched.data == (
        b"class A:\n    def f(self):\n        x = 1\n        if x:\n            x += 1\n"
        b"        return x\n"
    )


def test_a_normalised_match_that_is_not_unique_is_refused_and_says_so() -> None:
    patched = apply_edit("search-replace", _sr("return h\n", "return nil\n"), GO, "h.go")
    assert patched.data is None
    assert patched.problem is not None
    assert "2 places with leading whitespace set aside: not unique" in patched.problem


def test_an_exact_match_is_still_taken_as_written() -> None:
    code = _sr("\treturn level >= h.level\n", "\treturn true\n")
    patched = apply_edit("search-replace", code, GO, "h.go")
    assert patched.data == GO.replace(b"\treturn level >= h.level", b"\treturn true")


def test_a_flattened_search_is_refused_rather_than_guessed() -> None:
    # Every line at one indentation where the file has two: the REPLACE's cannot be known.
    code = _sr('if name == "" {\nreturn h\n}\n', 'if name == "" {\nreturn nil\n}\n')
    patched = apply_edit("search-replace", code, GO, "h.go")
    assert patched.data is None
    assert patched.problem is not None and "indentation" in patched.problem


def test_a_diff_fence_holding_plain_code_is_code() -> None:
    reply = "In `h.go`:\n\n```diff\nfunc (h *H) Enabled(level int) bool {\n\treturn true\n}\n```\n"
    (block,) = parse_reply(reply).blocks
    assert block.format == "code"
    assert block.raw_path == "h.go"


def test_a_diff_fence_with_a_minus_column_is_still_a_diff() -> None:
    reply = "```diff\n func f() {\n-\treturn 1\n+\treturn 2\n }\n```\n"
    (block,) = parse_reply(reply).blocks
    assert block.format == "udiff"
