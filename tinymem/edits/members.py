"""What a definition given in a block stands for in its file.

Its members, renamed from the block's names to the file's (overloads told apart by their
unchanged signature); a container given with only some of its members, or without most of
its own lines (an excerpt: header, `⋮`, one method), stands for those members and never
replaces the container; and the lines of the block outside the definitions it changes (an
import, a class attribute), which are reported, not applied.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from tinymem.edits.alignment import Alignment, Evidence, FileView, Target, inside, plain, signature
from tinymem.edits.normalise import Parsed, parse_block
from tinymem.edits.roles import OVERLOAD, by_role, new_accessor, role
from tinymem.edits.singletons import as_self, crossed, file_role, in_sclass
from tinymem.edits.splice.texts import prepare
from tinymem.symbols import Symbol, language_for_path
from tinymem.symbols.containers import line_starts
from tinymem.textlist import shortened

__all__ = ["collect", "explode", "member_text", "outside_lines", "report_outside"]

_CLOSER_LINES = frozenset({"}", "};", "end", ")", "});", "})", "]"})
_COMMENT_LEADS = ("#", "//", "/*", "*", "--", "<!--")
_SCLASS = re.compile(r"class\s*<<\s*self")


def outside_lines(text: bytes, symbols: Sequence[Symbol], *, comments: bool = False) -> list[bytes]:
    """The lines of `text` that carry code outside every one of `symbols` (an import, a
    package line), not blank or a closer; comments too when `comments` (a licence header
    is part of a file)."""
    spans = sorted((s.start, s.end) for s in symbols)
    out: list[bytes] = []
    offset = 0
    for line in text.split(b"\n"):
        start, offset = offset, offset + len(line) + 1
        stripped = line.strip()
        if not stripped or any(a < start + len(line) and start < b for a, b in spans):
            continue
        word = stripped.decode("utf-8", "replace")
        if word in _CLOSER_LINES or (word.startswith(_COMMENT_LEADS) and not comments):
            continue
        out.append(stripped)
    return out


def member_text(parsed: Parsed, sym: Symbol) -> bytes:
    """The block's text of `sym` as if given alone: the indentation its first line has in the
    block taken off its other lines (lines inside strings kept). A span starts at its keyword,
    so a member's first line loses that indentation while the rest keep it; where the file's
    class sits deeper than the block's (`module Rack; class Response` given as `class
    Response`), only the canonical text can be re-indented for its place."""
    text = parsed.text[sym.start : sym.end]
    begin = parsed.text.rfind(b"\n", 0, sym.start) + 1
    lead = parsed.text[begin : sym.start]
    if not lead or lead.strip(b" \t") or parsed.language is None:
        return text
    return prepare(parsed.language, lead + text, b"", sym.name).joined()


def report_outside(result: Alignment, parsed: Parsed, path: str) -> None:
    """Say what of the block no target carries (an import, a class attribute), and keep a
    parse problem only when it lies inside a target: a broken, elided class around the method
    that changed does not make the method wrong (the trial splice still proves the result).

    Not when the broken line reads like a definition's header or a call (`def close(self`,
    `async finalMessage): …`): the model meant a definition there, and the parser's error
    recovery may have read a "definition" out of its body (`#getFinalMessage` out of
    `return this.#getFinalMessage();`); taking the rest would drop that change silently or
    write the recovered text. Nor when a target does not parse on its own."""
    text = parsed.text
    starts = line_starts(text)

    def row(offset: int) -> int:
        return bisect_right(starts, offset) - 1

    taken = {t.text for t in result.targets}
    covered: set[int] = set()
    near: set[int] = set()  # a target's rows and the row after it (a body cut short)
    for sym in parsed.symbols:
        alone = member_text(parsed, sym)
        if text[sym.start : sym.end] in taken or alone in taken or as_self(alone) in taken:
            last = row(max(sym.end - 1, sym.start))
            covered.update(range(row(sym.start), last + 1))
            near.update(range(row(sym.start), last + 2))
    headers = {row(s.start) for s in parsed.symbols}
    outside: list[str] = []
    for number, line in enumerate(text.split(b"\n")):
        stripped = line.strip().decode("utf-8", "replace")
        if number in covered or number in headers or not stripped:
            continue
        if stripped in _CLOSER_LINES or stripped.startswith(_COMMENT_LEADS):
            continue
        if _SCLASS.fullmatch(stripped) and parsed.language == "ruby":
            continue  # the wrapper of class methods: they are taken as class methods
        outside.append(stripped)
    if not result.targets:
        return
    if (
        parsed.problem is not None
        and parsed.problem_row is not None
        and parsed.problem_row not in near
        and not _meant_code(text.split(b"\n")[parsed.problem_row])
        and all(_parses_alone(path, t) for t in result.targets)
    ):
        names = ", ".join(t.name for t in result.targets)
        result.notes.append(
            f"the block does not parse outside the definitions it changes ({parsed.problem});"
            f" only those are taken ({names})"
        )
        result.problem = None
    if outside:
        shown = shortened([f"`{s[:60]}`" for s in outside], 3, sep="; ")
        result.notes.append(
            f"{len(outside)} line(s) outside the definitions it changes are not applied: {shown}"
        )


_HEADER_OR_CALL = re.compile(rb"[\w#$]\s*\(|^\s*(?:async|def|fn|func|function|class|struct|impl)\b")


def _meant_code(line: bytes) -> bool:
    """The line reads like a definition's header or a call."""
    return _HEADER_OR_CALL.search(line) is not None


def _parses_alone(path: str, target: Target) -> bool:
    alone = parse_block(path, target.text)
    return alone.problem is None and any(
        plain(s.name).rsplit(".", 1)[-1] == plain(target.name).rsplit(".", 1)[-1]
        for s in alone.symbols
    )


def collect(
    item: Symbol,
    anchor: str,
    parsed: Parsed,
    file: FileView,
    given: dict[str, bytes],
    added: list[Target],
    thin: set[str],
    evidence: Evidence,
) -> str | None:
    """The item and everything inside it, renamed from the block's names to the file's; or
    why a member is held (a Ruby instance method given for a class method, `singletons.py`).

    `thin` collects the containers given without most of their own lines (docstring,
    attributes, fields): they stand for the members given, never replace the container."""
    prefix = item.name
    inner = [item, *[s for s in parsed.symbols if inside(item, s)]]
    previous_by_parent: dict[str | None, str] = {}
    for sym in inner:
        name = anchor + sym.name[len(prefix) :]
        text = parsed.text[sym.start : sym.end] if sym is item else member_text(parsed, sym)
        if in_sclass(parsed.language, parsed.text, sym.start):
            text = as_self(member_text(parsed, sym))  # in `class << self`: a class method
        if sym is not item:
            name, held = _member_name(name, text, file, given, evidence)
            if held is not None:
                return held
        if name in file.by_name:
            given[name] = text
            if _loses_own_lines(sym, parsed, file.by_name[name], file):
                thin.add(name)
        else:
            parent = name.rsplit(".", 1)[0] if "." in name else None
            added.append(Target(name, "add", text, previous_by_parent.get(parent)))
        parent_key = name.rsplit(".", 1)[0] if "." in name else None
        previous_by_parent[parent_key] = name
    return None


def _own_lines(data: bytes, sym: Symbol, symbols: Sequence[Symbol]) -> list[bytes]:
    """The code lines of container `sym` outside its members, its header line aside."""
    inner = [
        Symbol(s.name, s.kind, s.start - sym.start, s.end - sym.start, s.parent)
        for s in symbols
        if inside(sym, s)
    ]
    return outside_lines(data[sym.start : sym.end], inner)[1:]


def _loses_own_lines(given: Symbol, parsed: Parsed, known: Symbol, file: FileView) -> bool:
    """A container given with fewer than half of the lines it has outside its members (an
    excerpt: header, `⋮`, one method) — taken whole, it would delete the rest."""
    if not any(inside(known, s) for s in file.symbols):
        return False  # not a container: its lines are its body, the change itself
    theirs = _own_lines(file.data, known, file.symbols)
    if not theirs:
        return False
    ours = set(_own_lines(parsed.text, given, parsed.symbols))
    return sum(line in ours for line in theirs) * 2 < len(theirs)


def _member_name(
    name: str, text: bytes, file: FileView, given: dict[str, bytes], evidence: Evidence
) -> tuple[str, str | None]:
    """The file's name for a member given inside its container. Members of one name
    (`error`, `error#2`, …) are told apart first by what the block's head says it is
    (`roles.py`: the setter of a property, the implementation beside `@overload` stubs, which
    a model rewrites with a new signature), then by their unchanged signature; a signature
    none of them has is a new overload, named after the last one. With the name, why the
    member is held (`singletons.py`), else None."""
    same = [s for s in file.symbols if plain(s.name) == plain(name)]
    language = language_for_path(file.path)
    wanted = role(language, text)
    roles = {s.name: file_role(file, s, wanted) for s in same}
    held = crossed(language, wanted, same, list(roles.values()))
    if held is not None:
        return name, held
    if new_accessor(wanted, list(roles.values())):
        return f"{plain(name)}#{len(same) + 1}", None
    if len(same) <= 1:
        return (same[0].name if same else name), None
    free = [s for s in same if s.name not in given]
    if any(roles.values()):
        # Only where the file's members of this name carry roles: among plain overloads
        # (Java's), the one left is no evidence, a new signature is a new overload.
        fits = by_role(wanted, free, lambda s: roles[s.name])
        if len(fits) == 1 and roles[fits[0].name] != OVERLOAD:
            return fits[0].name, None
        free = fits or free
    signed = signature(text)
    match = [s for s in free if signature(file.text(s)) == signed]
    if len(match) == 1:
        return match[0].name, None
    return f"{plain(name)}#{len(same) + 1}", None


def explode(
    given: dict[str, bytes], added: list[Target], file: FileView, thin: set[str]
) -> list[Target]:
    """Given entities as targets: a container given with only some of its members, or
    without its own lines (`thin`), stands for those members (recursively); one given with
    all of them is replaced whole."""
    out: list[Target] = []
    names = set(given)

    def members(name: str) -> set[str]:
        return {s.name for s in file.symbols if s.name.startswith(name + ".")}

    taken: set[str] = set()
    for name in sorted(given, key=lambda n: file.by_name[n].start):
        if any(name.startswith(t + ".") for t in taken):
            continue  # inside a container replaced whole
        inside = members(name)
        if inside and (not inside <= names or name in thin):
            continue  # stands for its members only: they come on their own
        out.append(Target(name, "modify", given[name]))
        taken.add(name)
    for t in added:
        if any(t.name.startswith(n + ".") for n in taken):
            continue  # a new member inside a container replaced whole: it is in that text
        out.append(t)
    return out
