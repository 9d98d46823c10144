"""Aligning a code block with the entities of its file that it changes.

Indentation in a reply is never evidence of where code belongs: the file's own structure is.
A block is first normalised (`normalise.py`: our `⋮` excerpt lines and a comment naming the
file dropped, common indentation removed, a member written alone parsed inside a stand-in
container). Each of its outermost definitions is then anchored in the file:

- the same name in the file (the top level, a Go method, a Rust impl member): that entity;
- else, for a function-like definition, the member of a class / impl / struct / interface of
  that name; for a nested class, the nested class of that name;
- a name several entities share (the same method in two classes, overloads, a getter and its
  setter, one method in two impl blocks) is decided by evidence in this order: the qualified
  name in the request (`Session.send`), the entity shown in this very prompt, the block's own
  container header (`class Session:`, `impl Display for S`, exact or without its generics,
  `where` clause and bases), and between members of one container only, the unchanged
  signature. Still several: blocked, naming the candidates. Never appended at the top
  level, never spliced into the wrong class;
- no anchor: a method-shaped definition (a `self`/`cls` first parameter, a Rust `self`
  parameter, a member that only parses inside a class) is blocked, since it needs its class;
  anything else is new at the top level, or new inside the container it was given in.

A container given with only some of its members stands for those members, never for a
container that lost the others. Pure: bytes in, an `Alignment` out; nothing is written.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from tinymem.edits.normalise import Parsed, container_headers, parse_block
from tinymem.symbols import Symbol, extract

__all__ = ["Alignment", "Evidence", "Target", "align"]

_SUFFIX = re.compile(r"#\d+(?=\.|$)")
_CONTAINERS = frozenset(
    {"class", "struct", "interface", "trait", "enum", "union", "module", "namespace", "impl"}
)
_CALLABLE = frozenset({"function", "method"})
_SPACES = re.compile(r"\s+")
# Python decorators that only make sense on a method.
_METHOD_DECORATORS = re.compile(
    r"^\s*@(?:staticmethod|classmethod|property|abstractmethod|override|cached_property"
    r"|\w+\.(?:setter|getter|deleter)|(?:abc|functools|typing)\.\w+)\b",
    re.M,
)
_PY_SELF = re.compile(r"^\s*(?:async\s+)?def\s+\w+\s*(?:\[[^\]]*\])?\s*\(\s*(?:self|cls)\b", re.M)
_RUST_SELF = re.compile(r"\bfn\s+\w+\s*(?:<[^(]*>)?\s*\(\s*(?:&\s*(?:'\w+\s+)?)?(?:mut\s+)?self\b")
_RUBY_SINGLETON = re.compile(r"^\s*def\s+self\.", re.M)


@dataclass(frozen=True)
class Evidence:
    """What the request and the prompt say about which entity a block means."""

    qualified: frozenset[str] = frozenset()  # dotted names in the request: "Session.send"
    hydrated: frozenset[str] = frozenset()  # symbols of this file shown in this prompt


@dataclass(frozen=True)
class Target:
    """One entity the block changes: its qualified name in the file and its new text."""

    name: str
    op: str  # "modify" | "add"
    text: bytes  # the definition as the block gives it (normalised; any indentation)
    after: str | None = None  # for "add": the symbol it follows in the block


@dataclass
class Alignment:
    targets: list[Target] = field(default_factory=list)
    whole_file: bool = False  # the block gives every entity the file has
    problem: str | None = None  # why the normalised block does not parse
    blocked: str | None = None  # why it cannot be tied to entities (UNRESOLVED)
    method: str = "tree-sitter"  # how the block's definitions were found
    language: str | None = None
    notes: list[str] = field(default_factory=list)  # how the block was read


def plain(name: str) -> str:
    """A qualified name without its "#2" duplicate suffixes."""
    return _SUFFIX.sub("", name)


def _leaf(name: str) -> str:
    return plain(name).rsplit(".", 1)[-1]


def _inside(outer: Symbol, inner: Symbol) -> bool:
    return (
        outer.start <= inner.start
        and inner.end <= outer.end
        and (outer.start, outer.end) != (inner.start, inner.end)
    )


def _outermost(symbols: tuple[Symbol, ...]) -> list[Symbol]:
    return [s for s in symbols if not any(_inside(o, s) for o in symbols)]


_GENERICS = re.compile(r"<[^<>]*>")


def _header_key(header: str) -> str:
    """A container header without generics, `where` clause, bases or body opener:
    `impl<C, E> Display for ContextError<C, E> where C: Display` -> `impl Display for
    ContextError`, `class Session(SessionRedirectMixin)` -> `class Session`."""
    text = header
    while True:
        stripped = _GENERICS.sub("", text)
        if stripped == text:
            break
        text = stripped
    for cut in (" where ", "(", ":", "{", " extends ", " implements "):
        text = text.split(cut, 1)[0]
    return _SPACES.sub(" ", text).strip()


def _signature(text: bytes) -> str:
    """A definition's head, whitespace collapsed: attributes, decorators and what comes
    before its body (`{`, `=>`, or the `:` ending a Python def line)."""
    out: list[str] = []
    for line in text.decode("utf-8", "replace").split("\n"):
        stripped = line.strip()
        comment = stripped.startswith(("//", "#", "/*", "*")) and not stripped.startswith("#[")
        if not stripped or comment:
            continue
        out.append(stripped)
        if "{" in stripped or "=>" in stripped or stripped.endswith(":"):
            break
    head = " ".join(out).split("{", 1)[0].split("=>", 1)[0]
    return _SPACES.sub(" ", head).strip()


@dataclass
class _File:
    """The file a block is aligned with: its symbols by name and its container headers."""

    path: str
    data: bytes
    symbols: tuple[Symbol, ...]

    def __post_init__(self) -> None:
        self.by_name = {s.name: s for s in self.symbols}

    def text(self, sym: Symbol) -> bytes:
        return self.data[sym.start : sym.end]

    def header_of(self, sym: Symbol) -> str | None:
        """The normalised header of the nearest container around `sym` (an impl block too)."""
        best: tuple[int, str] | None = None
        for start, (end, head) in container_headers(self.path, self.data).items():
            if start <= sym.start and sym.end <= end and (best is None or start > best[0]):
                best = (start, head)
        return None if best is None else best[1]


def _method_shaped(language: str | None, parsed: Parsed, text: bytes, file: _File) -> bool:
    if parsed.wrapped:
        return True  # it parses only as a member of a class
    code = text.decode("utf-8", "replace")
    if language == "python":
        return bool(_PY_SELF.search(code) or _METHOD_DECORATORS.search(code))
    if language == "rust":
        return bool(_RUST_SELF.search(code))
    if language == "ruby":
        if _RUBY_SINGLETON.search(code):
            return True
        # A Ruby file of classes and modules only: a bare `def` is meant for one of them.
        tops = [s for s in file.symbols if s.parent is None]
        return bool(tops) and all(s.kind in _CONTAINERS for s in tops)
    return False


def _compatible(item: Symbol, candidate: Symbol) -> bool:
    if item.kind in _CALLABLE:
        return candidate.kind in _CALLABLE
    if item.kind in _CONTAINERS:
        return candidate.kind in _CONTAINERS
    return item.kind == candidate.kind


def _choose(
    candidates: list[Symbol],
    item_text: bytes,
    item_header: str | None,
    file: _File,
    evidence: Evidence,
) -> list[Symbol]:
    """Narrow several candidates by evidence, in the documented order; a filter that would
    leave none is skipped."""

    def narrow(keep: list[Symbol]) -> None:
        if keep and len(keep) < len(candidates):
            candidates[:] = keep

    if len(candidates) > 1 and evidence.qualified:
        narrow(
            [
                c
                for c in candidates
                if any(
                    plain(c.name) == q or plain(c.name).endswith("." + q)
                    for q in evidence.qualified
                    if "." in q
                )
            ]
        )
    if len(candidates) > 1 and evidence.hydrated:
        narrow(
            [
                c
                for c in candidates
                if c.name in evidence.hydrated
                or any(c.name.startswith(h + ".") for h in evidence.hydrated)
            ]
        )
    if len(candidates) > 1 and item_header is not None:
        narrow([c for c in candidates if file.header_of(c) == item_header])
        # A model shortens headers: generics, a `where` clause, base classes left out.
        key = _header_key(item_header)
        narrow([c for c in candidates if _header_key(file.header_of(c) or "") == key])
    if len(candidates) > 1 and len({c.parent for c in candidates}) == 1:
        # Within one container only (overloads, a getter and its setter, one type's impl
        # blocks): an unchanged signature is no evidence of which class a method belongs to.
        wanted = _signature(item_text)
        narrow([c for c in candidates if _signature(file.text(c)) == wanted])
    return candidates


def _candidates(item: Symbol, file: _File, *, members_only: bool) -> list[Symbol]:
    """File symbols an item of this name may stand for: the same qualified name (and its
    "#2" duplicates), else members or nested containers ending with that name."""
    name = plain(item.name)
    exact = [s for s in file.symbols if plain(s.name) == name and _compatible(item, s)]
    if members_only:
        exact = [s for s in exact if s.parent is not None]
    if exact:
        return exact
    if item.kind not in _CALLABLE and item.kind not in _CONTAINERS:
        return []
    return [
        s
        for s in file.symbols
        if s.parent is not None and plain(s.name).endswith("." + name) and _compatible(item, s)
    ]


def _describe(names: list[str]) -> str:
    shown = names[:6]
    more = f" and {len(names) - 6} more" if len(names) > 6 else ""
    return ", ".join(shown) + more


def align(path: str, code: bytes, original: bytes | None, evidence: Evidence) -> Alignment:
    """Which entities of `path` (whose authoritative text is `original`) `code` changes.

    `original` None: a new file. Never raises on model input.
    """
    parsed = parse_block(path, code)
    result = Alignment(language=parsed.language, method=parsed.method, notes=list(parsed.notes))
    result.problem = parsed.problem
    if original is None or parsed.method != "tree-sitter":
        # New files, and languages without a grammar (regex or nothing): taken as written.
        result.targets = [
            Target(s.name, "add", parsed.text[s.start : s.end]) for s in _outermost(parsed.symbols)
        ]
        result.whole_file = original is not None and not parsed.symbols
        return result
    file = _File(path, original, extract(path, original).symbols)
    items = _outermost(parsed.symbols)
    if not items:
        if file.symbols:
            result.blocked = (
                f"the block defines nothing tm can place in {path} (no function, method or"
                " class it can read); give complete definitions"
            )
        else:
            result.whole_file = True  # a file of no definitions, given again whole
        return result
    given: dict[str, bytes] = {}  # file name -> the block's text for it
    thin: set[str] = set()
    added: list[Target] = []
    blocked: list[str] = []
    previous: str | None = None
    for item in items:
        anchor, reason = _anchor(item, parsed, file, evidence)
        if reason is not None:
            blocked.append(reason)
            previous = None
            continue
        if anchor is None:
            # New at the top level (a container given alone, a function, a constant).
            text = parsed.text[item.start : item.end]
            added.append(Target(item.name, "add", text, previous))
            previous = item.name
            continue
        _collect(item, anchor, parsed, file, given, added, thin)
        previous = anchor
    if blocked:
        result.blocked = "; ".join(blocked)
        return result
    existing = {s.name for s in file.symbols}
    # Every entity given is the whole file only when the block also carries what lies
    # between them: a namespace or class given alone, with the file's imports or licence
    # header left out, is a change of that entity, not a file without them.
    result.whole_file = (
        bool(existing)
        and existing <= set(given)
        and not thin
        and (
            bool(_outside_lines(parsed.text, items, comments=True))
            or not _outside_lines(original, file.symbols, comments=True)
        )
    )
    if result.whole_file:
        spans = [file.by_name[n] for n in given]
        result.targets = [Target(s.name, "modify", given[s.name]) for s in _outermost(tuple(spans))]
        result.targets += [t for t in added if not any(t.name.startswith(n + ".") for n in given)]
        return result
    result.targets = _explode(given, added, file, thin)
    _report_outside(result, parsed)
    return result


_CLOSER_LINES = frozenset({"}", "};", "end", ")", "});", "})", "]"})
_COMMENT_LEADS = ("#", "//", "/*", "*", "--", "<!--")


def _outside_lines(
    text: bytes, symbols: Sequence[Symbol], *, comments: bool = False
) -> list[bytes]:
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


def _report_outside(result: Alignment, parsed: Parsed) -> None:
    """Say what of the block no target carries (an import, a class attribute), and keep a
    parse problem only when it lies inside a target: a broken, elided class around the method
    that changed does not make the method wrong (the trial splice still proves the result)."""
    text = parsed.text
    starts = [0, *(i + 1 for i, byte in enumerate(text) if byte == 0x0A)]

    def row(offset: int) -> int:
        return bisect_right(starts, offset) - 1

    taken = {t.text for t in result.targets}
    covered: set[int] = set()
    near: set[int] = set()  # a target's rows and the row after it (a body cut short)
    for sym in parsed.symbols:
        if text[sym.start : sym.end] in taken:
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
        outside.append(stripped)
    if not result.targets:
        return
    row_known = parsed.problem_row is not None
    if parsed.problem is not None and row_known and parsed.problem_row not in near:
        names = ", ".join(t.name for t in result.targets)
        result.notes.append(
            f"the block does not parse outside the definitions it changes ({parsed.problem});"
            f" only those are taken ({names})"
        )
        result.problem = None
    if outside:
        shown = "; ".join(f"`{s[:60]}`" for s in outside[:3])
        more = f" and {len(outside) - 3} more" if len(outside) > 3 else ""
        result.notes.append(
            f"{len(outside)} line(s) outside the definitions it changes are not applied:"
            f" {shown}{more}"
        )


def _anchor(
    item: Symbol, parsed: Parsed, file: _File, evidence: Evidence
) -> tuple[str | None, str | None]:
    """(the file entity `item` stands for or None when it is new, why it cannot be placed)."""
    text = parsed.text[item.start : item.end]
    shaped = item.kind in _CALLABLE and _method_shaped(parsed.language, parsed, text, file)
    candidates = _candidates(item, file, members_only=shaped)
    if shaped and not candidates:
        candidates = _candidates(item, file, members_only=False)
    header = parsed.header_of(item)
    if len(candidates) > 1:
        candidates = _choose(list(candidates), text, header, file, evidence)
    if len(candidates) == 1:
        return candidates[0].name, None
    leaf = _leaf(item.name)
    if candidates:
        names = [c.name for c in candidates]
        return None, (
            f"`{leaf}` is ambiguous in {file.path}: it could be {_describe(names)}; ask again"
            f' naming the one you mean (e.g. `tm ask "… {plain(names[0])} …"`), or give it'
            " inside its class"
        )
    if shaped and "." not in plain(item.name):
        return None, (
            f"`{leaf}` is written as a method, but no class in {file.path} has a member"
            f" `{leaf}`; give it inside its class (with the class line) to add it"
        )
    return None, None


def _collect(
    item: Symbol,
    anchor: str,
    parsed: Parsed,
    file: _File,
    given: dict[str, bytes],
    added: list[Target],
    thin: set[str],
) -> None:
    """The item and everything inside it, renamed from the block's names to the file's.

    `thin` collects the containers given without most of their own lines (docstring,
    attributes, fields): they stand for the members given, never replace the container."""
    prefix = item.name
    inner = [item, *[s for s in parsed.symbols if _inside(item, s)]]
    previous_by_parent: dict[str | None, str] = {}
    for sym in inner:
        name = anchor + sym.name[len(prefix) :]
        text = parsed.text[sym.start : sym.end]
        if sym is not item:
            name = _member_name(name, text, file, given)
        if name in file.by_name:
            given[name] = text
            if _loses_own_lines(sym, parsed, file.by_name[name], file):
                thin.add(name)
        else:
            parent = name.rsplit(".", 1)[0] if "." in name else None
            added.append(Target(name, "add", text, previous_by_parent.get(parent)))
        parent_key = name.rsplit(".", 1)[0] if "." in name else None
        previous_by_parent[parent_key] = name


def _own_lines(data: bytes, sym: Symbol, symbols: Sequence[Symbol]) -> list[bytes]:
    """The code lines of container `sym` outside its members, its header line aside."""
    inner = [
        Symbol(s.name, s.kind, s.start - sym.start, s.end - sym.start, s.parent)
        for s in symbols
        if _inside(sym, s)
    ]
    return _outside_lines(data[sym.start : sym.end], inner)[1:]


def _loses_own_lines(given: Symbol, parsed: Parsed, known: Symbol, file: _File) -> bool:
    """A container given with fewer than half of the lines it has outside its members (an
    excerpt: header, `⋮`, one method) — taken whole, it would delete the rest."""
    if not any(_inside(known, s) for s in file.symbols):
        return False  # not a container: its lines are its body, the change itself
    theirs = _own_lines(file.data, known, file.symbols)
    if not theirs:
        return False
    ours = set(_own_lines(parsed.text, given, parsed.symbols))
    return sum(line in ours for line in theirs) * 2 < len(theirs)


def _member_name(name: str, text: bytes, file: _File, given: dict[str, bytes]) -> str:
    """The file's name for a member given inside its container. Overloads (`error`,
    `error#2`, …) are told apart by their unchanged signature; a signature none of them has
    is a new overload, named after the last one."""
    same = [s for s in file.symbols if plain(s.name) == plain(name)]
    if len(same) <= 1:
        return same[0].name if same else name
    wanted = _signature(text)
    match = [s for s in same if s.name not in given and _signature(file.text(s)) == wanted]
    if len(match) == 1:
        return match[0].name
    return f"{plain(name)}#{len(same) + 1}"


def _explode(
    given: dict[str, bytes], added: list[Target], file: _File, thin: set[str]
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
