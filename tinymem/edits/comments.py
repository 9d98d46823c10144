"""Comment lines in code blocks: their closers, and the comment line that names a file.

Small models name the file a block belongs to in a comment on its first line (`# src/app.py`,
`// --- lib/x.ts ---`) or separate several files in one fence with such lines.
"""

from __future__ import annotations

import re

from tinymem.edits.filenames import clean_token, looks_like_path

__all__ = ["comment_path", "strip_comment_closer"]


# Parsed by hand, token by token, rather than with one big regex: the optional decorations,
# label and note all overlap with the path token, and such a regex backtracks exponentially on
# a line like `# ------...--- a a a`.
_COMMENT_OPEN_RE = re.compile(r"^(?:#+|//+|--|;+|%+|/\*+|<!--|\{/\*+)")
_DECO_RE = re.compile(r"[-=*~#_]{2,}")
_LABEL_PREFIX_RE = re.compile(r"^(?:file(?:name|path)?|path)[ \t]*[:=][ \t]*", re.I)
# `# In src/b.py:`: a heading over the code of that file (the colon makes it one; `# in x.py`
# under code is a remark).
_IN_LABEL_RE = re.compile(r"^in[ \t]+(\S+):$", re.I)
_NOTE_WORDS = ("new", "updated", "modified", "changed", "complete", "full", "entire", "unchanged")
_MAX_PATH_COMMENT = 300  # a comment naming a file is short; longer lines are never one


def strip_comment_closer(text: str) -> str:
    """`a.c */` -> `a.c`, `x -->` -> `x`, `y */}` -> `y`.

    Plain string operations on purpose: a regex search for a closer made of a starred run is
    quadratic on a long line of stars.
    """
    text = text.rstrip()
    if text.endswith("-->"):
        return text[:-3]
    if text.endswith("}") and text[:-1].rstrip().endswith("*/"):
        text = text[:-1].rstrip()
    if text.endswith("*/"):
        return text[:-2].rstrip("*")
    return text


def _strip_note(tokens: list[str]) -> list[str]:
    """Drop a trailing `(new file)` / `(updated)` annotation."""
    if not tokens or not tokens[-1].endswith(")"):
        return tokens
    for index in range(len(tokens) - 1, max(len(tokens) - 6, 0), -1):
        if tokens[index].startswith("("):
            if tokens[index][1:].lower().startswith(_NOTE_WORDS):
                return tokens[:index]
            return tokens
    return tokens


def _named_in(inner: str, *, banner: bool, indented: bool = False) -> tuple[str, bool] | None:
    tokens = inner.split()
    deco1 = bool(tokens) and _DECO_RE.fullmatch(tokens[0]) is not None
    if deco1:
        tokens = tokens[1:]
    deco2 = bool(tokens) and _DECO_RE.fullmatch(tokens[-1]) is not None
    if deco2:
        tokens = tokens[:-1]
    if banner and not (deco1 and deco2):
        return None
    tokens = _strip_note(tokens)
    rest = " ".join(tokens)
    heading = _IN_LABEL_RE.match(rest)
    if heading is not None:
        # Indented, `# In settings.py:` is a remark in a definition's body, and as a heading
        # it would cut that definition short.
        if indented:
            return None
        path = clean_token(heading.group(1))
        return (path, True) if looks_like_path(path, loose=False) else None
    label = _LABEL_PREFIX_RE.match(rest)
    if label is not None:
        rest = rest[label.end() :]
    if not rest or " " in rest:
        return None
    path = clean_token(rest)
    labelled = label is not None
    if not looks_like_path(path, loose=labelled):
        return None
    return path, labelled or deco1 or deco2


def comment_path(line: str) -> tuple[str, bool] | None:
    """(path, decorated) when the whole line is a comment naming a file, e.g. `# --- a.py ---`.

    Forms: `<opener> [deco] [File:|filename:|path:] PATH [(note)] [deco] [closer]` or
    `<opener> In PATH:` at column 0 (a known extension or file name required), with opener
    one of `#` `//` `--` `;` `%` `/*` `<!--` `{/*`, or a bare banner `--- PATH ---` (decoration
    on both sides required). `decorated` (a banner, a label, or `##`) makes a mid-body line a
    file separator even with no blank line above it.
    """
    s = line.strip()
    if not s or len(s) > _MAX_PATH_COMMENT:
        return None
    opener = _COMMENT_OPEN_RE.match(s)
    if opener is not None:
        inner = strip_comment_closer(s[opener.end() :])
        named = _named_in(inner, banner=False, indented=line[:1].isspace())
        if named is not None:
            path, decorated = named
            heading = opener.group().startswith("##")
            return path, decorated or heading
    return _named_in(s, banner=True)
