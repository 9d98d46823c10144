"""The encoding a file declares in its coding line (`tinymem.edits.codings`)."""

from __future__ import annotations

import pytest

from tinymem.edits.codings import declared_encoding
from tinymem.edits.filekinds import target_problem, write_problem


@pytest.mark.parametrize(
    ("head", "encoding"),
    [
        (b"# -*- coding: latin-1 -*-\n", "latin-1"),
        (b"#!/usr/bin/env python\n# -*- coding: iso-8859-15 -*-\n", "iso-8859-15"),
        (b"# vim: set fileencoding=cp1252 :\n", "cp1252"),
        (b"# encoding: ISO-8859-1\n", "ISO-8859-1"),  # Ruby's magic comment
        (b"\xef\xbb\xbf# coding=latin-1\n", "latin-1"),
        (b"# coding: no-such-codec\n", "no-such-codec"),
        (b"# -*- coding: utf-8 -*-\n", None),
        (b"# coding: UTF8\n", None),
        (b"# coding: utf-8-sig\n", None),
        (b"import os\n# coding: latin-1\n", None),  # line 2 counts only under a comment
        (b"\n\n# coding: latin-1\n", None),  # line 3 never
        (b"x = '# coding: latin-1'\n", None),
        (b"", None),
    ],
)
def test_declared_encoding(head: bytes, encoding: str | None) -> None:
    assert declared_encoding(head + b"x = 1\n") == encoding


def test_model_text_is_refused_but_a_deletion_is_not() -> None:
    before = b"# -*- coding: latin-1 -*-\ndef f():\n    return '\xe9'\n\n\ndef g():\n    pass\n"
    problem = target_problem("a.py", before)
    assert problem is not None and "declares the latin-1 encoding" in problem
    assert write_problem("a.py", before, before[: before.index(b"\n\n\n") + 1]) is None
