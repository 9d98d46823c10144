"""The modifiers a definition's line starts with, kept when a replacement leaves them out.

Models rewrite a method from its return type or name and drop the words before it, as they
drop decorators: `public static int twice` came back `public int twice`, `async def fetch`
came back `def fetch` with `await` still in its body, `virtual int size()` lost `virtual`,
and a C++ block without its `template <typename T>` line deleted that line (T undeclared).
The system prompt's rule is that what a block omits is kept, so each modifier of the file's
line that the block's line does not state is put back, in the file's order and with the
file's bytes (its spacing, the template header's own line).

What counts as stating a modifier: the block's line has the same word, or one of the same
slot: a visibility (`public` for the file's `private`: the block's wins, as before), or a
word that excludes the file's (C# `override` for `virtual`, C++ `virtual` for `static`,
Java `default` for `static`). A word the block adds is the block's. Words that say a
definition has no body (Java `abstract`/`native`, C# `abstract`/`extern`, TS `abstract`/
`declare`) are not put back on a block that gives one: it made the method concrete.
Accessors (TS/JS `get`/`set`) are not modifiers here: `get x()` and `x()` are different
members, and a pair shares its name; the block's form stands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["keep_modifiers"]

_VIS = "visibility"

# One modifier each: the word (or `template <...>`, `extern "C"`, `pub(crate)`), the slot it
# fills (words of one slot exclude each other), and whether it says there is no body.
_Rule = tuple[str, bytes, bool]


def _words(slot: str, *words: str, bodiless: bool = False) -> list[_Rule]:
    return [(slot, w.encode(), bodiless) for w in words]


def _own(*words: str, bodiless: bool = False) -> list[_Rule]:
    return [(w, w.encode(), bodiless) for w in words]


_EXPORT = rb"export(?:\s+default)?"
_JS = [(_VIS, _EXPORT, False), *_own("static", "async")]
_TS = [
    (_VIS, _EXPORT, False),
    *_words(_VIS, "public", "protected", "private"),
    *_own("static", "async", "readonly", "override", "accessor"),
    *_own("abstract", "declare", bodiless=True),
]
_CPP = [
    ("template", rb"template\s*<", False),  # its <...> is read bracket by bracket
    *_words("binding", "static", "virtual"),
    *_words("constexpr", "constexpr", "consteval", "constinit"),
    *_own("inline", "explicit", "friend"),
]
_RULES: dict[str, list[_Rule]] = {
    "python": [("async", rb"async(?=\s+def\b)", False)],
    "javascript": _JS,
    "typescript": _TS,
    "tsx": _TS,
    "rust": [
        (_VIS, rb"pub(?:\s*\([^)\n]*\))?", False),
        ("extern", rb'extern(?:\s+"[^"\n]*")?', False),
        *_own("const", "async", "unsafe"),
    ],
    "java": [
        *_words(_VIS, "public", "protected", "private"),
        *_words("binding", "static", "default"),
        ("binding", b"abstract", True),
        ("native", b"native", True),
        ("sealed", rb"non-sealed|sealed", False),
        *_own("final", "synchronized", "strictfp", "transient", "volatile"),
    ],
    "csharp": [
        *_words(_VIS, "public", "protected", "private", "internal", "file"),
        *_words("binding", "static", "virtual", "override", "const"),
        ("binding", b"abstract", True),
        ("extern", b"extern", True),
        *_own("async", "sealed", "readonly", "partial", "unsafe", "new", "volatile", "required"),
    ],
    "c": _CPP,  # a .h is read as C, and may well be C++
    "cpp": _CPP,
}
# A modifier is a word followed by the rest of the declaration (a C# tuple type may open with
# `(`), not a member named `static` (`static: number`, `readonly = 1`) nor a `static {` block.
_FOLLOWED = rb"(?=\s+[^\s=:;,){}?!.])"
_END = rb"(?![\w$-])"  # a whole word: not `public` read as `pub`, nor `non-sealed` as `non`
_PATTERNS: dict[str, list[tuple[str, re.Pattern[bytes], bool]]] = {
    language: [
        (slot, re.compile(rb"(?:" + word + rb")" + (b"" if word.endswith(b"<") else _END)), body)
        for slot, word, body in rules
    ]
    for language, rules in _RULES.items()
}
# The same words anywhere on the block's line before its parameters (`static public`).
_ANYWHERE = {
    language: [
        (slot, re.compile(rb"(?<![\w$#-])" + pattern.pattern), body)
        for slot, pattern, body in patterns
        if slot != "template"
    ]
    for language, patterns in _PATTERNS.items()
}
_SPACE = re.compile(rb"\s*")
_PY_DEF = re.compile(rb"(?:async\s+)?def\s+(\w+)")


@dataclass(frozen=True)
class _Token:
    slot: str
    start: int
    end: int  # after the whitespace that follows it: what is put back is start..end
    bodiless: bool


def _tokens(language: str, line: bytes) -> list[_Token]:
    """The modifiers `line` (a definition from its first modifier on) starts with."""
    patterns = _PATTERNS.get(language, [])
    found: list[_Token] = []
    pos = 0
    while True:
        for slot, pattern, bodiless in patterns:
            m = pattern.match(line, pos)
            if m is None:
                continue
            end = _angle_end(line, m.end()) if slot == "template" else m.end()
            if end is None or not re.match(_FOLLOWED, line[end:]):
                continue
            after = _SPACE.match(line, end)
            assert after is not None  # \s* always matches
            found.append(_Token(slot, pos, after.end(), bodiless))
            pos = after.end()
            break
        else:
            return found


def _angle_end(line: bytes, pos: int) -> int | None:
    """The end of the `<...>` opened just before `pos` (a template's parameters)."""
    depth = 1
    for k in range(pos, min(len(line), pos + 2000)):
        c = line[k : k + 1]
        if c == b"<":
            depth += 1
        elif c == b">":
            depth -= 1
            if depth == 0:
                return k + 1
        elif c in (b"{", b";"):
            return None
    return None


def _has_body(text: bytes) -> bool:
    return b"{" in text or b"=>" in text


def keep_modifiers(language: str, old: bytes, new: bytes) -> tuple[bytes, list[str]]:
    """`new` (a definition's text from its first modifier on, after any attributes on the
    line) with the modifiers `old`'s line has and `new`'s does not state, and those words."""
    was = _tokens(language, old)
    if not was:
        return new, []
    now = _tokens(language, new)
    head = new[now[-1].end if now else 0 :].split(b"\n", 1)[0].split(b"(", 1)[0]
    # A slot is stated by the block's leading modifiers, or by a word of it further on its
    # line before the parameters (`static public` read from `public`, as before).
    stated = {t.slot for t in now} | {
        slot for slot, pattern, _ in _ANYWHERE.get(language, []) if pattern.search(head)
    }
    if language == "python" and _def_name(new) != _def_name(old):
        return new, []  # `async` is put back on the same function only, never on a class
    inserts: list[tuple[int, bytes]] = []
    kept: list[str] = []
    at = 0  # where the next kept word goes: after the block's word for the slot before it
    for token in was:
        if token.slot in stated:
            at = max((t.end for t in now if t.slot == token.slot), default=at)
            continue
        if token.bodiless and not _has_body(old) and _has_body(new):
            continue  # the block made it concrete
        text = old[token.start : token.end]
        inserts.append((at, text))
        kept.append(b" ".join(text.split()).decode("utf-8", "replace"))
    if not inserts:
        return new, []
    inserts.sort(key=lambda i: i[0])  # stable: the file's order among words put back together
    out, last = [], 0
    for pos, text in inserts:
        out += [new[last:pos], text]
        last = pos
    out.append(new[last:])
    return b"".join(out), kept


def _def_name(text: bytes) -> bytes | None:
    found = _PY_DEF.match(text)
    return None if found is None else found.group(1)
