"""Elisions: the lines a model writes in place of code it left out.

Taken literally, `# ... rest of the code unchanged` deletes everything it stands for, so every
block records the markers it holds and the gates refuse texts that would delete by omission.
"""

from __future__ import annotations

import re

from tinymem.edits.comments import strip_comment_closer

__all__ = ["find_elisions"]


_LEADING_COMMENT_RE = re.compile(r"^(?:<!--|\{/\*+|/\*+|//+|#+|--+|;+|%+|\*+)")
_TRAILING_COMMENT_RE = re.compile(r"[ \t](?:#|//|--|/\*)[ \t]*(?P<text>.*)$")
_ELLIPSIS = ("...", "…")
_MAX_ELISION_COMMENT = 200
_SUBJECT = (
    r"(?:code|implementation|methods?|functions?|logic|content|contents|imports|tests?|fields"
    r"|properties|routes|handlers|definitions|helpers|class(?:es)?|configuration|config|body"
    r"|lines|markup|styles|components?|file|module|script|program|page|template|cases)"
)
_ELISION_RES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        rf"\brest of (?:the |this |your |my |that |its )?(?:\w+ )?{_SUBJECT}",
        r"\brest\b(?: [\w']+){0,3} (?:unchanged|the same|as before|as[- ]is|omitted|untouched"
        r"|intact|not shown)\b",
        r"(?:unchanged|untouched|omitted|elided|not shown|as before|truncated|abridged)\W*$",
        r"\b(?:remains?|stays?|kept|keep|left|leave) (?:the same|as[- ]is|intact|unchanged"
        r"|untouched)\b",
        r"\bfor brevity\b",
        rf"\b{_SUBJECT} (?:omitted|elided|not shown|skipped|hidden)\b",
        rf"\b(?:your|the|my|existing|more|other|remaining) (?:\w+ )?{_SUBJECT} (?:goes )?here\b",
        r"\bgoes here\b",
        r"\b(?:add|insert|put|paste|include) (?:your|the|any|more|other|remaining|existing) "
        r"[\w ]{0,30}\bhere\b",
        r"\bkeep (?:the |all |your )?(?:rest|remaining|everything else)\b",
        rf"\bkeep (?:the |all |your )?(?:existing|original|other|previous) {_SUBJECT}",
        r"\b(?:no|without) (?:other |further )?changes?\b",
        r"\bnothing (?:else )?(?:changed|changes)\b",
        r"\bsame as (?:before|above|original|previous|the original|the existing|in the original)",
        r"^(?:snip|snipped|<snip>|\[snip\]|etc\.?|and so on|and so forth)$",
    )
)
_SHORT_SUBJECT_RE = re.compile(rf"^(?:the )?(?:existing|previous|original|remaining) {_SUBJECT}")
_MARKED_SUBJECT_RE = re.compile(
    rf"\b(?:existing|previous|original|remaining|unchanged|same|other|old|current) {_SUBJECT}\b"
    r".*\b(?:unchanged|here|remains?|stays?|as before|as[- ]is|omitted|same|goes|not shown"
    r"|keep|kept|untouched|intact|elided|skipped)\b"
)
_ELLIPSIS_WORD_RE = re.compile(
    r"\b(?:code|rest|existing|unchanged|same|remaining|other|previous|omitted|here|before"
    r"|above|methods?|functions?|implementation|imports|etc|original|so on)\b"
)


def _comment_text(line: str) -> str | None:
    s = line.strip()
    lead = _LEADING_COMMENT_RE.match(s)
    if lead is not None:
        text = s[lead.end() :]
    else:
        trail = _TRAILING_COMMENT_RE.search(s)
        if trail is None:
            return None
        text = trail["text"]
    return strip_comment_closer(text).strip()


def _is_elision_text(comment: str) -> bool:
    text = comment.lower().strip(" \t()[]<>{}-=*_:;,!~'\"`")
    if not text:
        return False
    if text.startswith(_ELLIPSIS):
        return True
    if len(text) > _MAX_ELISION_COMMENT:  # a marker is a short remark, not a paragraph
        return False
    if any(rx.search(text) for rx in _ELISION_RES):
        return True
    if (_SHORT_SUBJECT_RE.match(text) and len(text.split()) <= 3) or _MARKED_SUBJECT_RE.search(
        text
    ):
        return True
    return text.endswith(_ELLIPSIS) and _ELLIPSIS_WORD_RE.search(text) is not None


def find_elisions(code: str, known: str | None = None) -> tuple[str, ...]:
    """Lines of `code` (stripped) that stand for code the model left out.

    A line that `known` (the file's authoritative text) already holds is the file's own
    comment, not a marker: real code says "the template here" and "unchanged" too.

    Counted: a comment (`#`, `//`, `/* */`, `--`, `<!-- -->`, `;`, `%`, `*` continuation, or a
    trailing comment after code) whose text
      - starts with `...` or `…` (`# ...`, `// ... existing code ...`, `/* ... */`);
      - says "rest of the <code/file/class/...>", "the rest ... unchanged", "... unchanged",
        "... omitted", "not shown", "as before", "for brevity", "remains the same",
        "<code> goes here", "add your ... here", "keep the rest", "no changes",
        "same as before", "snip", "etc.";
      - is a short "existing/previous/original/remaining <code/methods/...>", or such a phrase
        with a marker word ("(other methods unchanged)", "existing code here");
      - ends with `...` and names code ("# other methods ...");
    and, outside comments: `…` alone on a line, `[...]`/`(...)`/`{...}` alone, and `...` alone
    at column 0. An *indented* bare `...` is not counted: in Python it is a valid body (`def
    f(): ...` stubs, protocols), and in other languages it does not parse, so the syntax gate
    catches it anyway.
    """
    found: list[str] = []
    try:
        for line in code.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            s = line.strip()
            if not s:
                continue
            if s in ("…", "[...]", "(...)", "{...}", "[…]", "(…)", "{…}") or (
                s == "..." and not line[0].isspace()
            ):
                found.append(s)
                continue
            comment = _comment_text(line)
            if comment is not None and _is_elision_text(comment):
                found.append(s)
    except Exception:  # never let a detector crash the parse; keep what was found
        pass
    if known and found:
        own = {line.strip() for line in known.split("\n")}
        found = [s for s in found if s not in own]
    return tuple(found)
