"""A fence's info string: its language word and the file it names.

Forms: ```` ```python path=a.py ````, ```` ```py:a.py ````, ```` ```a.py ````,
```` ```python a.py ````, ``title=``/``file=``/``{file="a.py"}``, pandoc's ``{.python}``,
highlighted lines ``{2-3}``, a trailing ``(new file)`` note. A path is one word or a quoted
value. Unquoted words with spaces between them (``path=my dir/a b.py``, ``python my dir/a
b.py``) are only `spaced` candidates, never split into a path (see `spacedpaths.py`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from tinymem.edits.filenames import DRIVE_PATH_RE, KNOWN_DOTFILES, clean_token, looks_like_path
from tinymem.edits.spacedpaths import spaced_candidate, strip_note

__all__ = ["InfoPath", "parse_info"]

_LANG_RE = re.compile(r"[A-Za-z][A-Za-z0-9_+#.\-]*")
_KV_RE = re.compile(
    r"(?P<key>[A-Za-z_][\w-]*)[ \t]*=[ \t]*"
    r"(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|(?P<bare>[^\s\"'{},]+))"
)
_PATH_KEYS = frozenset({"path", "file", "filename", "filepath", "file-path", "file_path"})
_TITLE_KEYS = frozenset({"title", "name", "caption", "label", "src"})
_RANGES_RE = re.compile(r"\{[\d\s,\-]*\}")  # highlighted lines, `{2-3}`: no words


class InfoPath(NamedTuple):
    language: str | None
    path: str | None  # one word, or a quoted value: a path as written
    spaced: tuple[str, ...]  # unquoted words with spaces: a path only if that file exists


def _words(text: str) -> str:
    """`text` without key=value pairs, highlighted-line ranges and braces."""
    return _RANGES_RE.sub(" ", _KV_RE.sub(" ", text)).replace("{", " ").replace("}", " ")


def _claim(text: str) -> tuple[str | None, tuple[str, ...]]:
    """One word (a trailing note aside) is a path as written; several words are at most a
    spaced candidate, whichever of them looks like a path."""
    tail = strip_note(text).strip()
    if not tail:
        return None, ()
    if not any(ch.isspace() for ch in tail):
        return clean_token(tail) or None, ()
    spaced = spaced_candidate(tail)
    return None, (spaced,) if spaced is not None else ()


def _keyed(info: str) -> tuple[str | None, tuple[str, ...]] | None:
    """What a `path=`/`file=` value (else a path-like `title=` value) names; None: no key."""
    found: list[tuple[bool, str | None, tuple[str, ...]]] = []
    for kv in _KV_RE.finditer(info):
        key = kv["key"].lower()
        value = next((v for v in (kv["dq"], kv["sq"], kv["bare"]) if v is not None), "").strip()
        if not value or (key not in _PATH_KEYS and key not in _TITLE_KEYS):
            continue
        path: str | None = value
        spaced: tuple[str, ...] = ()
        if kv["bare"] is not None and _words(info[kv.end() :]).strip():
            # `path=my dir/a b.py`: a bare value stops at the first space, and the words
            # after it are more of the same path (other attributes are key=value pairs).
            path, spaced = _claim(info[kv.start("bare") :].rstrip().rstrip("}"))
        is_path_key = key in _PATH_KEYS
        if not is_path_key and any(ch.isspace() for ch in value):
            # A quoted title with spaces is prose (`title="Updated app.py"`) or a file.
            path, spaced = None, tuple(c for c in (spaced_candidate(value),) if c is not None)
        if spaced or (path is not None and (is_path_key or looks_like_path(path, loose=True))):
            found.append((is_path_key, path, spaced))
        elif is_path_key:
            found.append((True, None, ()))  # words after the value, none of them a path
    if not found:
        return None
    _keyed_path, path, spaced = max(found, key=lambda f: f[0])  # first path key, else title
    return path, spaced


def _first_word(first: str) -> tuple[str | None, str | None, int]:
    """(language, path, where the path starts in the word) for an info string's first word."""
    if first.startswith(".") and first.lower() not in KNOWN_DOTFILES:
        first = first.lstrip(".")  # pandoc `{.python}`
    if DRIVE_PATH_RE.match(first):
        return None, first, 0
    if ":" in first and "://" not in first:
        lang, _, rest = first.partition(":")
        if _LANG_RE.fullmatch(lang) and rest:
            return lang, rest, len(lang) + 1
        cleaned = clean_token(first)
        return (None, cleaned, 0) if looks_like_path(cleaned, loose=True) else (None, None, 0)
    if looks_like_path(first, loose=True):
        return None, first, 0
    if _LANG_RE.fullmatch(first):
        return first, None, 0
    return None, None, 0


def parse_info(info: str) -> InfoPath:
    """Language, path and spaced path candidates of a fence info string."""
    if not info or len(info) > 500:  # a paragraph after ``` is not an info string
        return InfoPath(None, None, ())
    words = _words(info).strip()
    tokens = words.split()
    language, named, start = _first_word(tokens[0]) if tokens else (None, None, 0)
    keyed = _keyed(info)
    if keyed is not None:
        return InfoPath(language if named is None else None, *keyed)
    if named is not None:
        if len(tokens) == 1:
            return InfoPath(language, named, ())
        path, spaced = _claim(words[start:])
        return InfoPath(language, path, spaced)
    if len(tokens) < 2:
        return InfoPath(language, None, ())
    path, spaced = _claim(words[len(tokens[0]) :])
    if path is not None and not looks_like_path(path, loose=True):
        path = None
    if path is None and not spaced:
        return InfoPath(language, None, ())
    # ```a b.py``` may be the file `a b.py` as well as language `a` and file `b.py`.
    whole = spaced_candidate(words)
    return InfoPath(language, path, ((whole,) if whole and whole not in spaced else ()) + spaced)
