"""NOTE lines: how a reply asks for something to be remembered.

A line of its own outside every code block, ``NOTE: <kind>: text`` (``NOTE: text`` is a plain
note) or a kind as the keyword (``DECISION: …``, ``CONSTRAINT: …``, ``GOTCHA: …``,
``TRIED: …``, ``FACT: …``, ``PLAN: …``), optionally bold or a list item, becomes a pending
note proposal: nothing is remembered until the user accepts it. The keyword is upper case
only: "Note: this keeps the old order" is prose, and prose must not fill the user's memory.
Lines inside fences are code (`reply.py` reads only the lines outside them), so a string or a
comment saying ``NOTE: …`` never becomes a note; a ```markdown fence that only wraps the reply
(no file named, and code fences inside or nothing else in the reply) is prose, not code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tinymem.notes.model import KINDS

__all__ = ["NOTE_DIRECTIVE_HELP", "NoteDirective", "note_directive"]


@dataclass(frozen=True, slots=True)
class NoteDirective:
    kind: str
    text: str
    line: int  # 1-based line in the reply


NOTE_DIRECTIVE_HELP = (
    "To ask the user to remember a decision, constraint, gotcha or failed approach, write a"
    " line of its own outside any code block: `DECISION: text`, `CONSTRAINT: text`,"
    " `GOTCHA: text` or `TRIED: text` (or `NOTE: kind: text`); kept if the user accepts it."
)

_KEYWORDS = "|".join(k.upper() for k in (*KINDS,))
_BOLD = r"(?:\*{1,2}|_{2})"
_NOTE_RE = re.compile(
    r"^[ \t]{0,3}(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?"
    rf"(?:{_BOLD}[ \t]*)?(?P<keyword>{_KEYWORDS})[ \t]*(?:{_BOLD}[ \t]*)?:[ \t]*"
    rf"(?:{_BOLD}[ \t]*)?(?P<text>\S.*?)[ \t]*$"
)
_KIND_PREFIX = re.compile(rf"^(?P<kind>{'|'.join(KINDS)})[ \t]*:[ \t]*(?P<text>\S.*)$", re.I)
MAX_TEXT = 2000  # characters: a note is a sentence or three, not a document


def note_directive(line: str) -> tuple[str, str] | None:
    """(kind, text) of a NOTE line, or None."""
    match = _NOTE_RE.match(line)
    if match is None:
        return None
    kind = match["keyword"].lower()
    text = match["text"]
    if kind == "note":
        inner = _KIND_PREFIX.match(text)
        if inner is not None:
            kind, text = inner["kind"].lower(), inner["text"]
    text = re.sub(r"[ \t]*(?:\*{1,2}|_{2})$", "", text).strip()
    if not text or len(text) > MAX_TEXT:
        return None
    return kind, text
