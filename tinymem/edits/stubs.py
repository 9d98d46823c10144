"""Placeholder bodies: a definition written with `...` (or Rust's `todo!()`) where the file has
code.

Small models write the members they are not changing as stubs, the way type stubs and API
listings show them: `def mount(self, prefix, adapter) -> None: ...`, a docstring and `...`,
`fn next(&mut self) -> Option<Self::Item> { todo!() }`. Each is valid code, so neither the
syntax gate nor the elision markers (comments, `…`) catch it, and taken literally it replaces a
real body with nothing. A body is a placeholder here only when the file's own version of the
same definition is not one: protocols, abstract methods and overload stubs keep their `...`.

A bare `...` statement among a Python body's other statements (`if x:\n    ...\nelse: ...`) is
the same shorthand for the code it stands in for (`elided_members`): it is an elision where the
file's definition has no empty statement (`...` or `pass`) in the same kind of slot, never where
it has one (`except ImportError: ...`, `if TYPE_CHECKING: ...`). A slot is the innermost
statement and field holding the `...` (`ExceptHandler.body`, `If.orelse`), counted as a
multiset and whatever encloses it: the file's `except ImportError: ...` wrapped in a new `if`
is still the file's, and `except Exception: pass` written `except Exception: ...` replaces an
empty body by another (a `pass` the reply keeps uses up its own slot, so a `...` cannot
borrow it). A definition the file does not have is not judged: its `...` stands for nothing
the file holds, so writing it deletes nothing, and a stub the model adds on purpose (a protocol
member, a body to fill later) is its to write. The same holds for a definition nested in a
function (`class _Missing: ...`) that the file's function has not, or has with no code.

In a diff or SEARCH/REPLACE block every line the edit removes is named, so a placeholder there
elides nothing: it is an explicit removal of the code it replaces (`stubbed_in_file`), written
only with `--allow-delete`, as a diff cutting most of a body is (`fragments.py`).
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
import warnings
from collections import Counter
from collections.abc import Iterator

from tinymem.edits.normalise import Parsed, parse_block
from tinymem.symbols import Symbol, extract

__all__ = ["elided_members", "placeholder_members", "stubbed_in_file", "stubbed_note"]

# A slot of a body: the innermost statement (or handler, case) holding it and its field:
# ("If", "body"), ("ExceptHandler", "body").
_Slot = tuple[str, str]
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

_RUST_PLACEHOLDER = re.compile(
    rb"\{\s*(?:todo|unimplemented)!\s*\((?:[^()]|\([^()]*\))*\)\s*;?\s*\}\s*$"
)


def placeholder_members(path: str, old: bytes, new: bytes) -> list[str]:
    """The definitions in `new` (an entity's text as given, or a class holding them) whose
    body is a placeholder where `old` (the file's text of the same entity) has code; by the
    names they have within the entity ("" for the entity itself)."""
    paired = _paired(path, old, new, ("python", "rust"))
    if paired is None:
        return []
    before, after, pairs = paired
    language = after.language
    assert language is not None
    return [
        name
        for name, sym, was in pairs
        if _placeholder(language, after.text, sym) and not _placeholder(language, before.text, was)
    ]


def _paired(
    path: str, old: bytes, new: bytes, languages: tuple[str, ...]
) -> tuple[Parsed, Parsed, list[tuple[str, Symbol, Symbol]]] | None:
    """`old` and `new` read as blocks, and each definition of `new` with `old`'s of the same
    name within the entity; None when `new` is in none of `languages` or does not parse."""
    before, after = parse_block(path, old), parse_block(path, new)
    if after.language not in languages or after.problem is not None:
        return None
    olds = {_relative(before.symbols, s): s for s in before.symbols}
    pairs = []
    for sym in after.symbols:
        name = _relative(after.symbols, sym)
        was = olds.get(name)
        if was is not None:
            pairs.append((name, sym, was))
    return before, after, pairs


def elided_members(path: str, old: bytes, new: bytes) -> list[str]:
    """The Python definitions in `new` (as `placeholder_members` reads it) with a bare `...`
    statement among other statements that no empty statement of `old`'s definition of the same
    name, in the same kind of slot, accounts for: the code it stands in for would be deleted.
    Bodies that are only a placeholder are `placeholder_members`' to judge."""
    paired = _paired(path, old, new, ("python",))
    if paired is None:
        return []
    before, after, pairs = paired
    found = []
    for name, sym, was in pairs:
        given = _definition(_alone(after.text, sym.start, sym.end))
        if given is None or _only_placeholder(given):
            continue
        known = _definition(_alone(before.text, was.start, was.end))
        coded = _coded(known) if known is not None else frozenset()
        empties = list(_empties(given, coded))
        if not any(dots for _, dots in empties):
            continue
        spare = Counter(slot for slot, _ in _empties(known, coded)) if known else Counter()
        # A `pass` the reply keeps is its own slot's: a `...` elsewhere cannot borrow it.
        spare.subtract(slot for slot, dots in empties if not dots)
        for slot, dots in empties:
            if not dots:
                continue
            if spare[slot] <= 0:
                found.append(name)
                break
            spare[slot] -= 1
    return found


def stubbed_in_file(path: str, before: bytes, after: bytes) -> list[str]:
    """The definitions `after` (a diff's or SEARCH/REPLACE block's result) gives a placeholder
    where `before` has code: a body only `...` or `todo!()`, or a bare `...` on lines that
    replace lines of the file's definition (a `...` the edit only inserts replaces nothing:
    every line it removes is named). Full names, innermost first found, each once."""
    old = {s.name: before[s.start : s.end] for s in extract(path, before).symbols}
    new = {s.name: after[s.start : s.end] for s in extract(path, after).symbols}
    changed = [n for n, text in new.items() if n in old and old[n] != text]
    found: list[str] = []
    for name in changed:
        was, text = old[name], new[name]
        inner = [n for n in changed if n.startswith(name + ".")]
        if inner and _without(was, [old[n] for n in inner]) == _without(
            text, [new[n] for n in inner]
        ):
            # Only its members changed, and they are judged on their own: parsing the whole
            # class again for each would cost a large file's parse per member.
            continue
        for member in placeholder_members(path, was, text):
            found.append(f"{name}.{member}" if member else name)
        for member in elided_members(path, was, text):
            full = f"{name}.{member}" if member else name
            if full not in old or full not in new or _replaces_lines(old[full], new[full]):
                found.append(full)
    return list(dict.fromkeys(found))


def _without(text: bytes, parts: list[bytes]) -> bytes:
    for part in parts:
        text = text.replace(part, b"", 1)
    return text


def stubbed_note(names: list[str]) -> str:
    return "it replaces the code of " + ", ".join(names) + " by a placeholder (`...`, `todo!()`)"


_DOTS_LINE = re.compile(r"\s*\.\.\.\s*(?:#.*)?")


def _replaces_lines(old: bytes, new: bytes) -> bool:
    """A bare `...` line of `new` stands where `old` has lines it no longer holds."""
    a = [line.strip() for line in old.decode("utf-8", "replace").split("\n")]
    b = [line.strip() for line in new.decode("utf-8", "replace").split("\n")]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return any(
        tag == "replace" and any(_DOTS_LINE.fullmatch(line) for line in b[j1:j2])
        for tag, _, _, j1, j2 in matcher.get_opcodes()
    )


def _definition(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    tree = _parse(source)
    if tree is None or len(tree.body) != 1:
        return None
    node = tree.body[0]
    return node if isinstance(node, _DEFINITIONS) else None


def _parse(source: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _only_placeholder(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    body = list(node.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    return all(_is_dots(s) for s in body)


def _has_code(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """The body holds more than a docstring, `...` and `pass`."""
    body = list(node.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    return any(not (_is_dots(s) or isinstance(s, ast.Pass)) for s in body)


def _coded(node: ast.AST) -> frozenset[str]:
    """The names of the definitions nested in `node` that hold code."""
    return frozenset(
        n.name
        for n in ast.walk(node)
        if n is not node and isinstance(n, _DEFINITIONS) and _has_code(n)
    )


def _empties(
    node: ast.AST, coded: frozenset[str], top: bool = True
) -> Iterator[tuple[_Slot, bool]]:
    """The empty statements (`...`, `pass`) of `node`'s bodies, nested blocks included: each
    one's slot and whether it is `...`. The methods and classes of the class judged are
    symbols of their own, judged apart; what a function nests is not a symbol, so it is part
    of the function's text, except a nested definition with no code whose name `coded` (the
    file's nested definitions with code) lacks: a stub the reply adds, or the file's own."""
    kind = type(node).__name__
    apart = top and isinstance(node, ast.ClassDef)
    for field in _BODIES:
        for child in getattr(node, field, None) or ():
            if isinstance(child, ast.stmt) and _is_dots(child):
                yield (kind, field), True
            elif isinstance(child, ast.Pass):
                yield (kind, field), False
            elif isinstance(child, _DEFINITIONS) and (
                apart or (child.name not in coded and not _has_code(child))
            ):
                continue
            else:
                yield from _empties(child, coded, False)


def _is_dots(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and stmt.value.value is ...
    )


def _relative(symbols: tuple[Symbol, ...], sym: Symbol) -> str:
    """The name within the outermost definition of the text: "" for it, `m` for its member."""
    outer = symbols[0].name if symbols else ""
    if sym.name == outer:
        return ""
    return sym.name.removeprefix(outer + ".")


def _placeholder(language: str | None, text: bytes, sym: Symbol) -> bool:
    span = text[sym.start : sym.end]
    if language == "rust":
        return sym.kind in ("function", "method") and _RUST_PLACEHOLDER.search(span) is not None
    if sym.kind not in ("function", "method"):
        return False
    return _python_placeholder(_alone(text, sym.start, sym.end))


def _alone(text: bytes, start: int, end: int) -> str:
    """A definition's lines, its first line included from its own indentation, dedented."""
    line_start = text.rfind(b"\n", 0, start) + 1
    lead = text[line_start:start]
    first = lead if not lead.strip() else b""
    return textwrap.dedent((first + text[start:end]).decode("utf-8", "replace"))


def _python_placeholder(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = list(tree.body[0].body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    return all(
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is ...
        for s in body
    )


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
