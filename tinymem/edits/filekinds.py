"""Files a model's text must not be written into as it stands.

- A binary file (git's rule: a NUL byte in its first 8000 bytes): the model saw no text there.
- A file larger than tm reads as code (`MAX_ENTITY_BYTES`, minified or generated files): it has
  no entities, was never shown to the model, and splicing into it would parse megabytes on
  every ask and accept (a 16 MB one-line file took 13 s and 1.1 GB).
- A file that declares an encoding other than UTF-8 in a coding line (`# -*- coding: latin-1
  -*-`): tm's text is UTF-8, which that file's readers would read as other characters
  (`codings.py`). Refused whatever the text, so ask and accept say the same; a deletion writes
  no text and is not refused.
- A file that is not UTF-8 (latin-1, a stray byte): the model was shown its undecodable bytes
  as U+FFFD and copies them back as U+FFFD. Writing that would replace bytes the model never
  saw with bytes that are in neither the file nor what it was shown, silently, on lines no
  one asked to change. Text without new U+FFFD is fine: spliced into the file's own bytes, the
  untouched lines keep theirs.
"""

from __future__ import annotations

from tinymem.edits.codings import declared_encoding
from tinymem.worktree import MAX_ENTITY_BYTES, classify

__all__ = ["target_problem", "write_problem"]

_REPLACEMENT = "\ufffd".encode()


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def target_problem(path: str, before: bytes | None) -> str | None:
    """Why no model text may be written into a file whose text is `before`, whatever the
    text (None: a new file), or None. Cheap: callers ask it before any parsing."""
    problem = _kind_problem(path, before)
    if problem is not None or before is None:
        return problem
    encoding = declared_encoding(before)
    if encoding is not None:
        return (
            f"{path} declares the {encoding} encoding in its coding line and tm writes model"
            " text as UTF-8 only; tm does not write it into that file (edit it by hand, or"
            " convert the file to UTF-8)"
        )
    return None


def _kind_problem(path: str, before: bytes | None) -> str | None:
    """Why no text at all may be written into `before`'s file: binary or too large."""
    if before is None:
        return None
    kind = classify(before)
    if kind == "binary":
        return f"{path} is a binary file; tm writes text proposals into text files only"
    if kind == "oversize":
        return (
            f"{path} is {len(before) / 1e6:.1f} MB, larger than the {MAX_ENTITY_BYTES >> 20} MB"
            " tm reads as code; tm does not write model text into it (edit it by hand)"
        )
    return None


def write_problem(path: str, before: bytes | None, after: bytes) -> str | None:
    """Why `after` must not replace `before` (the file's text; None: a new file), or None.
    Model text also needs `target_problem` to pass: a deletion only needs this."""
    if before is None:
        return None
    problem = _kind_problem(path, before)
    if problem is not None:
        return problem
    if not _is_utf8(before) and after.count(_REPLACEMENT) > before.count(_REPLACEMENT):
        return (
            f"{path} is not UTF-8 and the reply holds U+FFFD where the file has bytes the"
            " model was shown replaced; tm will not write them (edit those lines by hand)"
        )
    return None
