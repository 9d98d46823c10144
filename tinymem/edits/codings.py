"""The encoding a file declares for itself in a coding line (PEP 263; Ruby's magic comment and
vim's `fileencoding=` have the same shape): `# -*- coding: latin-1 -*-` on line 1 or 2.

tm has one text encoding, UTF-8: the model is shown a file's bytes decoded as UTF-8 and its
reply becomes UTF-8 bytes. Spliced into a file that declares latin-1, those bytes are read
back by Python as other characters (`é` written as `\\xc3\\xa9` reads `Ã©`), and no gate sees
it. So no model text goes into such a file (`filekinds.target_problem`, at ask and accept).
"""

from __future__ import annotations

import codecs
import re

__all__ = ["declared_encoding"]

# PEP 263's own pattern, on bytes: a comment line holding `coding:` or `coding=` and a name.
_CODING_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT_RE = re.compile(rb"^[ \t\f]*(?:#.*)?\r?$")
_UTF8 = frozenset({"utf-8", "utf-8-sig"})
_MAX_LINE = 1000  # a coding line is short; longer first lines are never read as one


def declared_encoding(data: bytes) -> str | None:
    """The encoding `data`'s coding line declares, as written, when it is not UTF-8."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    for number, line in enumerate(data.split(b"\n", 2)[:2]):
        line = line[:_MAX_LINE]
        match = _CODING_RE.match(line)
        if match is not None:
            name = match.group(1).decode("ascii")
            try:
                canonical = codecs.lookup(name).name
            except LookupError:
                return name  # Python refuses to read such a file at all
            return None if canonical in _UTF8 else name
        if number == 0 and not _BLANK_OR_COMMENT_RE.match(line):
            return None  # PEP 263: line 2 counts only under a blank or comment line 1
    return None
