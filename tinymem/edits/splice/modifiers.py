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

Two modifiers are put back only on evidence that the block still needs them, because leaving
them out is also how a block removes them: `async` only when the block's own body still
awaits (`await`, `async for`/`async with`, `for await`, `.await`; an await inside a nested
function or lambda is that function's) or, in TypeScript, its line still declares a
`Promise<...>` return type (which a body returning a plain value meets only with `async`),
else `async def fetch` rewritten to `return requests.get(url)` came back async and its
callers got a coroutine; a C++ `template <...>` header only when the block still names one
of its parameters, else `T twice(T v)` rewritten as `double twice(double v)` kept a header
g++ refuses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from tinymem.symbols.treesitter import parse_root

__all__ = ["keep_modifiers", "parameter_list"]

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


def _has_body(language: str, text: bytes) -> bool:
    """Whether the definition `text` gives a body: read after its parameter list, as `{` or
    `=>` in the types before it (`cb: (v: number) => void`, `opts: { verbose: boolean }`)
    say nothing about one. A declaration without one ends in `;` (or, in TypeScript, in its
    return type); a C# `=> expression;` is a body, a TypeScript `: () => void` a type."""
    rest = _after_parameters(text)
    if rest is None:
        return False
    depth = 0
    for k in range(len(rest)):
        c = rest[k : k + 1]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
        elif depth == 0 and c == b";":
            return False
        elif depth == 0 and rest.startswith(b"=>", k) and language == "csharp":
            return True
    return rest.rstrip().endswith(b"}")


def _after_parameters(text: bytes) -> bytes | None:
    """What follows the closing paren of the first parameter list at depth 0 in `text`."""
    span = _parameter_span(text)
    return None if span is None else text[span[1] :]


def parameter_list(text: bytes) -> bytes | None:
    """The parameter list of the definition `text` (from its first modifier on), whitespace
    normalised: `(int x)` of `public static int f(int  x) {`. None when it has none."""
    span = _parameter_span(text)
    return None if span is None else b" ".join(text[span[0] : span[1]].split())


def _parameter_span(text: bytes) -> tuple[int, int] | None:
    """The first parenthesised group at bracket depth 0 in `text`, parens included."""
    depth = 0
    opened: int | None = None
    for k in range(len(text)):
        c = text[k : k + 1]
        if c in b"([{":
            if c == b"(" and depth == 0 and opened is None:
                opened = k
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0 and opened is not None:
                return opened, k + 1
    return None


# Definitions whose body is their own: an await inside one is not the enclosing function's.
_FUNCTIONS = frozenset(
    {
        "function_definition",
        "lambda",
        "class_definition",  # python
        "arrow_function",
        "function_expression",
        "function",
        "function_declaration",
        "generator_function",
        "generator_function_declaration",
        "method_definition",
        "class_declaration",
        "class",  # javascript, typescript
        "lambda_expression",
        "anonymous_method_expression",
        "local_function_statement",
        "method_declaration",  # c#
        "closure_expression",
        "async_block",
        "function_item",  # rust
    }
)
_ASYNC_STATEMENTS = frozenset({"for_statement", "with_statement", "for_in_clause"})


# A method's text alone is not a program in these languages (`f(): T {` reads as a call):
# it is parsed inside a class (an impl) when it does not parse alone.
_WRAPS = {
    "javascript": b"class _ {\n",
    "typescript": b"class _ {\n",
    "tsx": b"class _ {\n",
    "csharp": b"class _ {\n",
    "rust": b"impl _ {\n",
}
_AWAIT_WORD = re.compile(rb"(?<![\w$.])await(?![\w$])|\.await\b|\basync\s+(?:for|with)\b")


def _awaits(language: str, text: bytes) -> bool:
    """Whether the definition `text` awaits in its own body (not in a nested function)."""
    params = text.find(b"(")
    limit = params if params >= 0 else len(text)
    wrap = _WRAPS.get(language)
    for head in (b"", wrap) if wrap is not None else (b"",):
        try:
            root = parse_root(language, head + text + (b"\n}\n" if head else b""))
        except ValueError:
            break
        if not root.has_error:
            return _awaits_in(root, len(head), len(head) + limit, outer_seen=False)
    # Neither reading parses: any await word keeps the file's `async`, as before.
    return _AWAIT_WORD.search(text) is not None


def _awaits_in(node: Node, low: int, limit: int, outer_seen: bool) -> bool:
    for child in node.children:
        seen = outer_seen
        if child.type in _FUNCTIONS and child.is_named and child.start_byte >= low:
            # The definition itself starts before its parameters; any other is nested (the
            # class wrapped around a method's text starts before `low`, and is looked into).
            if outer_seen or child.start_byte >= limit:
                continue
            seen = True
        if not child.is_named and (
            child.type == "await" or (child.type == "async" and node.type in _ASYNC_STATEMENTS)
        ):
            return True
        if _awaits_in(child, low, limit, seen):
            return True
    return False


_PROMISE = re.compile(rb"(?<![\w$.])Promise\s*<")


def _promised(language: str, text: bytes) -> bool:
    """Whether a TypeScript definition still declares a `Promise<...>` return type: without
    `async`, `totalUsage(): Promise<Usage> { return this.#usage(); }` no longer type-checks,
    and with it a body returning a promise is as before (async flattens it)."""
    if language not in ("typescript", "tsx"):
        return False
    rest = _after_parameters(text)
    return rest is not None and _PROMISE.search(rest.split(b"{", 1)[0]) is not None


_NAME = re.compile(rb"[A-Za-z_]\w*")
_NOT_NAMES = frozenset({b"typename", b"class", b"const", b"auto"})


def _template_names(header: bytes) -> list[bytes]:
    """The parameter names of a `template <...>` header (`T`, `N` of `<typename T, int N>`)."""
    inner = header[header.find(b"<") + 1 : header.rfind(b">")]
    names, depth, start = [], 0, 0
    for k in range(len(inner) + 1):
        c = inner[k : k + 1]
        if c in (b"<", b"(", b"[", b"{"):
            depth += 1
        elif c in (b">", b")", b"]", b"}"):
            depth -= 1
        elif depth == 0 and c in (b",", b""):
            words = _NAME.findall(inner[start:k].split(b"=", 1)[0])
            if words and words[-1] not in _NOT_NAMES:
                names.append(words[-1])
            start = k + 1
    return names


def _uses_template(header: bytes, new: bytes) -> bool:
    names = _template_names(header)
    return not names or any(
        re.search(rb"(?<![\w$])" + re.escape(n) + rb"(?![\w$])", new) for n in names
    )


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
        if token.bodiless and not _has_body(language, old) and _has_body(language, new):
            continue  # the block made it concrete
        text = old[token.start : token.end]
        if token.slot == "async" and not (_awaits(language, new) or _promised(language, new)):
            continue  # the block made it synchronous
        if token.slot == "template" and not _uses_template(text, new):
            continue  # the block made it a plain function
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
