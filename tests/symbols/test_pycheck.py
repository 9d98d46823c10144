"""tree-sitter-python accepts code Python rejects; the gates must not."""

from __future__ import annotations

import pytest

from tinymem.symbols import analyze, extract


@pytest.mark.parametrize(
    "src",
    [b"def f():\nreturn 1\n", b"x = 1\n    y = 2\n", b"def f():\n    # c\n"],
)
def test_python_only_errors_are_not_clean(src: bytes) -> None:
    assert analyze("python", src).clean is False
    ex = extract("a.py", src)
    assert ex.clean is False
    assert ex.reason is not None and "line" in ex.reason


def test_valid_python_stays_clean() -> None:
    assert analyze("python", b"def f():\n    return 1\n").clean
    assert extract("a.py", b"def f():\n    return 1\n").clean
