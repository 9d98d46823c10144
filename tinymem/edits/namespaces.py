"""The namespace block of a C++ or C# file that a new definition, given without it, goes in.

A model writes `double Square::perimeter() const {…}` or `public class CalcException {…}`
alone, with no `namespace geo {` around it. Added at the file's top level it lands after the
namespace's closing brace: C++ no longer compiles ("'Square' has not been declared"), C#
compiles with the class in the wrong namespace. The file's own definitions say where it goes:

- a member defined out of its class (`Square.perimeter`): the namespace where the file's
  definitions of that class sit (`geo.Square.area` -> `geo.Square.perimeter`);
- anything else, or a class the file has no definition of: the innermost namespace holding
  every definition of the file (`geo` for definitions in `geo` and `geo::detail`).

The new name then carries the namespace, so the splicer puts it inside that block, after the
last of its definitions at their indentation. When the file's definitions sit in several
namespaces (or some outside every namespace) there is no proof of where it belongs: the
proposal is blocked, naming them, rather than written outside. A file-scoped C# namespace
(`namespace App;`) holds the rest of the file: a definition after the last one is in it.

A program's entry point (`main`, `WinMain`, ...) and anything declared `extern "C"` belong
at the top level whatever the file's namespace: inside it `main` becomes `geo::main` and the
link fails ("undefined reference to main"), and C callers cannot name a namespaced function.
They are added at the top level, and the file's own ones say nothing about where the rest go.
"""

from __future__ import annotations

import re

from tinymem.edits.alignment import FileView, plain
from tinymem.symbols import Symbol

__all__ = ["ENTRY_POINTS", "extern_c", "namespaced"]

_LANGUAGES = frozenset({"cpp", "csharp"})
# The functions a C or C++ toolchain (or the Windows loader) looks up by their plain name.
ENTRY_POINTS = frozenset({"main", "wmain", "WinMain", "wWinMain", "DllMain"})
_EXTERN_C = re.compile(rb'extern\s*"C"\s*$')
_EXTERN_C_BLOCK = re.compile(rb'extern\s*"C"\s*\{')


def extern_c(text: bytes, start: int) -> bool:
    """Whether the definition at `start` of `text` is declared `extern "C"`: right after the
    words (which its symbol's span leaves out), or inside an `extern "C" {` still open there."""
    before = text[:start]
    if _EXTERN_C.search(before) is not None:
        return True
    opened = list(_EXTERN_C_BLOCK.finditer(before))
    if not opened:
        return False
    depth = 1  # the block's own `{`; once closed, a later `{` opens something else
    for brace in re.findall(rb"[{}]", before[opened[-1].end() :]):
        depth += 1 if brace == b"{" else -1
        if depth == 0:
            return False
    return True


def _top_level(name: str, text: bytes, start: int) -> bool:
    """Whether a definition belongs at the top level whatever the file's namespace."""
    return name in ENTRY_POINTS or extern_c(text, start)


def namespaced(
    language: str | None, name: str, file: FileView, *, linkage_c: bool = False
) -> tuple[str, str | None]:
    """(the name a new outermost definition `name` of a block is added under, why it cannot
    be placed): `name` itself outside C++ and C#, in a file with no namespace, and for an
    entry point or (`linkage_c`) a definition declared `extern "C"`."""
    if language not in _LANGUAGES or (language == "cpp" and (name in ENTRY_POINTS or linkage_c)):
        return name, None
    spaces = {plain(s.name) for s in file.symbols if s.kind == "namespace"}
    if not spaces:
        return name, None
    definitions = [
        s
        for s in file.symbols
        if s.kind != "namespace"
        and not (language == "cpp" and _top_level(plain(s.name), file.data, s.start))
    ]
    if "." in name:
        holders = _holders_of_class(name.rsplit(".", 1)[0], definitions, spaces)
        if len(holders) == 1:
            return _join(holders.pop(), name), None
        if holders:
            return name, _reason(name, file.path, holders, "its class is defined in")
    holders = {_innermost(plain(s.name), spaces) for s in definitions}
    common = _common(holders)
    if common in spaces:
        return _join(common, name), None
    if not holders:
        return name, _reason(name, file.path, spaces, "the file only has")
    return name, _reason(name, file.path, holders, "the file's definitions sit in")


def _holders_of_class(container: str, definitions: list[Symbol], spaces: set[str]) -> set[str]:
    """The namespaces ("" the top level) in which the file defines `container` or members
    of it."""
    out: set[str] = set()
    for s in definitions:
        dotted = f".{plain(s.name)}."
        at = dotted.find(f".{container}.")
        if at < 0:
            continue
        prefix = dotted[1 : at + 1].rstrip(".")
        if prefix == "" or prefix in spaces:
            out.add(prefix)
    return out


def _innermost(name: str, spaces: set[str]) -> str:
    """The innermost namespace around the definition `name` ("" none)."""
    parts = name.split(".")
    for n in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in spaces:
            return prefix
    return ""


def _common(holders: set[str]) -> str:
    """The innermost namespace around every one of `holders` ("" none: some are at the top
    level, or in namespaces that share no outer one)."""
    if not holders or "" in holders:
        return ""
    split = [h.split(".") for h in holders]
    shared: list[str] = []
    for parts in zip(*split, strict=False):
        if len(set(parts)) != 1:
            break
        shared.append(parts[0])
    return ".".join(shared)


def _join(space: str, name: str) -> str:
    return f"{space}.{name}" if space else name


def _reason(name: str, path: str, holders: set[str], said: str) -> str:
    where = ", ".join(
        "the top level" if h == "" else f"namespace {h.replace('.', '::')}" for h in sorted(holders)
    )
    return (
        f"cannot tell which namespace of {path} a new `{name.replace('.', '::')}` belongs in"
        f" ({said} {where}); give it inside its namespace block"
    )
