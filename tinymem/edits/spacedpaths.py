"""Paths with spaces in a reply's unquoted words, and the one rule that may take them.

Read word by word, ```` ```python path=my dir/a b.py ```` names `my` and ``### my dir/a b.py``
names `b.py`: a new file in the user's repository, made of a fragment of the path the model
meant. Words with spaces between them name a file only all together, and only a file that
already exists (in the work tree or the State Map); a quoted value (``path="my dir/a b.py"``)
is a path as written. The parser reports such words as candidates (`Block.spaced`) and never
a fragment of them; `reply.block_path` takes the first candidate that exists, else none.
"""

from __future__ import annotations

import os
import re
from collections.abc import Container, Iterable

from tinymem.edits.filenames import clean_token, looks_like_path
from tinymem.errors import UnsafePathError
from tinymem.paths import repo_relative

__all__ = ["existing_file", "line_candidates", "spaced_candidate", "strip_note"]

_BACKTICK_RE = re.compile(r"`([^`\n]{1,400})`")
# `File: x`, `path = x`: the value of a label runs to the end of the line.
_LABEL_RE = re.compile(
    r"\b(?:file(?:name|path)?|path)[ \t]*(?:\*+[ \t]*)?[:=][ \t]*(?:\*+[ \t]*)?", re.I
)
# What frames a title line without being part of its text: `### `, `> `, `**`, a colon (not
# `_`, which begins file names as often as it emphasises).
_TITLE_LEAD = "#>* \t"
_TITLE_TAIL = ":* \t"
_MAX_TAIL = 12  # words of a title line tried as a path (each try is one stat)
# A trailing note a model puts after a path: `(new file)`, `(updated)`.
_NOTE_RE = re.compile(
    r"\s*\((?:new|updated|modified|changed|complete|full|entire|unchanged)\b[^()]*\)\s*$", re.I
)


def strip_note(text: str) -> str:
    """`a.py (new file)` -> `a.py`."""
    return _NOTE_RE.sub("", text)


def spaced_candidate(text: str, *, loose: bool = True) -> str | None:
    """`text` as one path when it holds spaces and a word of it looks like a path (`loose`:
    as in an info string or after `File:`; else as in prose, `Node.js` is no file)."""
    if len(text) > 400:  # never a path; and keeps the note regex linear
        return None
    cleaned = clean_token(strip_note(text))
    if not any(ch.isspace() for ch in cleaned):
        return None
    if any(looks_like_path(clean_token(word), loose=loose) for word in cleaned.split()):
        return cleaned
    return None


def _title_candidates(title: str) -> list[str]:
    """A title line as a path, longest first: the whole line, then the last words when the
    line ends in a file name (``Here is my dir/a b.py:`` may name `my dir/a b.py`)."""
    whole = spaced_candidate(title, loose=False)
    if whole is None:
        return []
    words = whole.split()
    if not looks_like_path(clean_token(words[-1]), loose=False):
        return [whole]
    tails = (" ".join(words[-count:]) for count in range(min(len(words), _MAX_TAIL), 1, -1))
    return list(dict.fromkeys([whole, *tails]))


def line_candidates(line: str) -> tuple[tuple[str, ...], str]:
    """The spaced paths a prose line may name, and the line with their words blanked out.

    Candidates: a backticked span with spaces (`` `my dir/a b.py` ``), a label's value
    (``File: my dir/a b.py``), the whole line as a title (``### my dir/a b.py``). The blanked
    line is what a search for a one-word path may still read: never a word of a span or label
    value that holds spaces."""
    found: list[str] = []
    masked = line
    for span in _BACKTICK_RE.findall(line):
        candidate = spaced_candidate(span)
        if candidate is not None:
            found.append(candidate)
            masked = masked.replace(f"`{span}`", " ")
    label = _LABEL_RE.search(masked)
    if label is not None:
        value = masked[label.end() :].strip().strip("`*").strip()
        candidate = spaced_candidate(value)
        if candidate is not None:
            found.append(candidate)
            masked = masked[: label.start()]
    if "`" not in line:
        title = line.strip().lstrip(_TITLE_LEAD).rstrip(_TITLE_TAIL)
        found.extend(c for c in _title_candidates(title) if c not in found)
    return tuple(found), masked


def existing_file(
    candidates: Iterable[str], workdir: str, known: Container[str]
) -> tuple[str | None, str | None]:
    """(the first candidate naming an existing file, repo-relative; the first refusal).

    A candidate exists when `known` (the State Map's files) has it or the work tree holds a
    file there. An unsafe candidate is never taken; its refusal is returned so the reply's
    `../` is still reported, not silently dropped."""
    refusal: str | None = None
    for raw in candidates:
        try:
            relative = repo_relative(workdir, raw)
        except UnsafePathError as err:
            refusal = refusal or str(err)
            continue
        except Exception:  # never raise on model input
            continue
        if relative in known or os.path.isfile(os.path.join(workdir, relative)):
            return relative, None
    return None, refusal
