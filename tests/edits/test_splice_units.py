"""The splicer writes a member in the file's own indentation, whatever the model used."""

from __future__ import annotations

import pytest

from tinymem.edits.splice import Replacement, splice
from tinymem.edits.splice.texts import Text

PY = (
    b"class A:\n    def f(self):\n        if True:\n            return 1\n\n"
    b"    def g(self):\n        return 2\n"
)
GO = (
    b"package p\n\ntype T struct{}\n\n"
    b"func (t T) F() int {\n\tif true {\n\t\treturn 1\n\t}\n\treturn 0\n}\n"
)


@pytest.mark.parametrize(
    "text",
    [
        b"def f(self):\n  if True:\n    return 10\n",  # two spaces
        b"def f(self):\n\tif True:\n\t\treturn 10\n",  # tabs
    ],
)
def test_python_member_in_another_unit_is_written_with_four_spaces(text: bytes) -> None:
    result = splice("a.py", PY, [Replacement("A.f", text)])
    assert result.data == PY.replace(b"return 1\n", b"return 10\n")


def test_spaces_become_tabs_in_a_tab_file() -> None:
    text = b"func (t T) F() int {\n    if true {\n        return 2\n    }\n    return 0\n}\n"
    result = splice("p.go", GO, [Replacement("T.F", text)])
    assert result.data == GO.replace(b"return 1", b"return 2")


def test_aligned_continuation_lines_keep_their_place_relative_to_the_level() -> None:
    text = Text(
        [b"def f(x,", b"      y):", b"  return (x +", b"           y)"],
        [False, True, True, True],
    )
    # widths 6, 2, 11: not four in five of them multiples of one width: the unit is unknown,
    # and a text whose unit is unknown is left as it is
    assert text.unit() is None
    assert text.in_unit(b"    ") is text


def test_a_text_already_in_the_files_unit_is_kept_byte_for_byte() -> None:
    text = Text([b"def f():", b"    return 1"], [False, True])
    assert text.unit() == b"    " and text.in_unit(b"    ") is text
