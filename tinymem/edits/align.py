"""Aligning a code block with the entities of its file that it changes.

Indentation in a reply is never evidence of where code belongs: the file's own structure is.
A block is first normalised (`normalise.py`: our `⋮` excerpt lines and a comment naming the
file dropped, common indentation removed, a member written alone parsed inside a stand-in
container). Each of its outermost definitions is then anchored in the file:

- the same name in the file (the top level, a Go method, a Rust impl member): that entity;
- else, for a function-like definition, the member of a class / impl / struct / interface of
  that name; for a nested class, the nested class of that name;
- a name several entities share (the same method in two classes, overloads, a getter and its
  setter, one method in two impl blocks) is decided by evidence in this order (`choose.py`):
  the block's own role (a `@x.setter` is the setter, a definition without `@overload` the
  implementation, `roles.py`; a Ruby `def x` inside `class << self` is `def self.x`, and an
  instance method given for a class method, or the reverse, is held, `singletons.py`), the
  qualified name in the request (`Session.send`), the
  entity shown in this very prompt, the block's own container header (`class Session:`,
  `impl Display for S`, exact or without its generics, `where` clause and bases), and
  between members of one container only, the unchanged signature. Still several: blocked,
  naming the candidates and only hints that were tried and decide (`hints.py`). Never
  appended at the top level, never spliced into the wrong class. A setter written for a
  property that has its getter only is a new member beside it, never the getter;
- no anchor: a method-shaped definition (a `self`/`cls` first parameter, a Rust `self`
  parameter, a member that only parses inside a class) is blocked, since it needs its class;
  so is a definition named like a function nested in one of the file's functions, with its
  parameter names or its body (`nested.py`), which tm changes only with its enclosing
  function (a top-level namesake is taken only when the block's signature or the prompt
  says it is that one), unless the reply gives that function without it: moved out, it
  is new (`hoists.py`);
  anything else is new at the top level, or new inside the container it was given in.

A container given with only some of its members stands for those members, never for a
container that lost the others. A Python block that cannot be aligned whole, holding
definitions at several indentations (a method, then a helper at column 0), is aligned piece
by piece (`pieces.py`). Pure: bytes in, an `Alignment` out; nothing is written.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tinymem.edits.alignment import (
    Alignment,
    Evidence,
    FileView,
    Target,
    leaf,
    outermost,
    plain,
)
from tinymem.edits.choose import choose
from tinymem.edits.hints import ambiguity
from tinymem.edits.hoists import hoisted
from tinymem.edits.members import collect, explode, member_text, outside_lines, report_outside
from tinymem.edits.namespaces import extern_c, namespaced
from tinymem.edits.nested import (
    Nested,
    ambiguous_reason,
    may_define,
    nested_functions,
    nested_reason,
    same_body,
    same_parameters,
    same_signatures,
)
from tinymem.edits.normalise import Parsed, parse_block
from tinymem.edits.pieces import definition_pieces
from tinymem.edits.roles import new_accessor, role
from tinymem.edits.singletons import as_self, crossed, file_role, in_file_spelling, in_sclass
from tinymem.edits.splice.prefix import keep_prefix
from tinymem.edits.statements import dropped_note, dropped_statements
from tinymem.edits.textparity import collapsed_text, left_out, left_out_note
from tinymem.symbols import Symbol, extract, language_for_path

__all__ = ["align"]
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


def _method_shaped(language: str | None, parsed: Parsed, text: bytes, file: FileView) -> bool:
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


def _candidates(item: Symbol, file: FileView, *, members_only: bool) -> list[Symbol]:
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


def align(path: str, code: bytes, original: bytes | None, evidence: Evidence) -> Alignment:
    """Which entities of `path` (whose authoritative text is `original`) `code` changes.

    `original` None: a new file. Never raises on model input.
    """
    whole = _align_block(path, code, original, evidence)
    if original is None or (whole.blocked is None and whole.problem is None):
        return whole
    # Definitions at several indentations (a method, then a helper at column 0): each
    # piece at its own, taken only when every piece aligns cleanly.
    cut = definition_pieces(whole.language, code)
    if cut is None:
        return whole
    parts = [_align_block(path, piece, original, evidence) for piece in cut]
    if any(p.blocked or p.problem or p.whole_file or not p.targets for p in parts):
        return whole
    merged = Alignment(language=whole.language, method=whole.method)
    merged.notes.append(f"read as {len(parts)} pieces, each definition at its own indentation")
    for part in parts:
        merged.targets += part.targets
        merged.notes += [n for n in part.notes if n not in merged.notes]
    return merged


def _align_block(path: str, code: bytes, original: bytes | None, evidence: Evidence) -> Alignment:
    parsed = parse_block(path, code)
    result = Alignment(language=parsed.language, method=parsed.method, notes=list(parsed.notes))
    result.problem = parsed.problem
    if original is None or parsed.method != "tree-sitter":
        # New files, and languages without a grammar (regex or nothing): taken as written.
        result.targets = [
            Target(s.name, "add", parsed.text[s.start : s.end]) for s in outermost(parsed.symbols)
        ]
        result.whole_file = original is not None and not parsed.symbols
        if result.whole_file and original is not None and parsed.language is None:
            # No grammar: a block of fewer lines than the file removes the rest
            # (`textparity.py`); one under half of them is refused at Gate A instead.
            if collapsed_text(path, original, code) is None:
                result.dropped = left_out(original, code)
            if result.dropped:
                note = left_out_note(path, result.dropped)
                result.notes.append(note + "; accepting needs --allow-delete")
        return result
    file = FileView(path, original, extract(path, original).symbols)
    language = parsed.language
    items = outermost(parsed.symbols)
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
            # New at the top level (a container given alone, a function, a constant), or in
            # the namespace block that holds the file's definitions (C++, C#).
            linkage = language == "cpp" and extern_c(parsed.text, item.start)
            name, reason = namespaced(language, item.name, file, linkage_c=linkage)
            if reason is not None:
                blocked.append(reason)
                previous = None
                continue
            text = parsed.text[item.start : item.end]
            added.append(Target(name, "add", text, previous))
            previous = name
            continue
        held = collect(item, anchor, parsed, file, given, added, thin, evidence)
        if held is not None:
            blocked.append(held)
        previous = anchor
    if blocked:
        result.blocked = "; ".join(blocked)
        return result
    existing = {s.name for s in file.symbols}
    # Every entity given is the whole file only when the block also carries what lies
    # between them: a namespace or class given alone, with the file's imports or licence
    # header left out, is a change of that entity, not a file without them.
    # Nor is it when a definition comes without the comments or decorators the file has above
    # it (a licence header right over the only function): spliced, the file keeps them.
    result.whole_file = (
        bool(existing)
        and existing <= set(given)
        and not thin
        and (
            bool(outside_lines(parsed.text, items, comments=True))
            or not outside_lines(original, file.symbols, comments=True)
        )
        and not any(
            keep_prefix(language, file.text(file.by_name[n]), text)[1]
            for n, text in given.items()
            if language is not None
        )
    )
    if result.whole_file:
        result.dropped = dropped_statements(path, original, code)
        if result.dropped:
            result.notes.append(dropped_note(result.dropped) + "; accepting needs --allow-delete")
        spans = [file.by_name[n] for n in given]
        result.targets = [Target(s.name, "modify", given[s.name]) for s in outermost(tuple(spans))]
        result.targets += [t for t in added if not any(t.name.startswith(n + ".") for n in given)]
        return result
    result.targets = explode(given, added, file, thin)
    if not result.targets:
        # A container given with none of its members (only placeholders, a body cut off):
        # read as "the file itself" it passed at ask time and was refused at accept.
        names = ", ".join(plain(i.name) for i in items)
        result.blocked = (
            f"the block defines nothing tm can place in {path}: {names} comes with none of"
            " its members; give complete definitions"
        )
        return result
    report_outside(result, parsed, file.path)
    result.targets = [in_file_spelling(file, t) for t in result.targets]
    return result


def _new_accessor(
    item: Symbol, text: bytes, candidates: list[Symbol], file: FileView, evidence: Evidence
) -> tuple[str | None, str | None]:
    """(the name of a new accessor (a setter written for a property that has its getter
    only) in the one class all candidates belong to: added beside them, never replacing
    the getter, or None when the block is no such accessor; why it is held instead: a Ruby
    instance method for a class method, `singletons.py`)."""
    language = language_for_path(file.path)
    if len({c.parent for c in candidates}) != 1 or candidates[0].parent is None:
        return None, None
    wanted = role(language, text)
    roles = [file_role(file, c, wanted) for c in candidates]
    held = crossed(language, wanted, candidates, roles)
    if held is not None:
        return None, held
    if not new_accessor(wanted, roles):
        return None, None
    name = plain(candidates[0].name)
    return f"{name}#{sum(plain(s.name) == name for s in file.symbols) + 1}", None


def _anchor(
    item: Symbol, parsed: Parsed, file: FileView, evidence: Evidence
) -> tuple[str | None, str | None]:
    """(the file entity `item` stands for or None when it is new, why it cannot be placed)."""
    text = parsed.text[item.start : item.end]
    if in_sclass(parsed.language, parsed.text, item.start):
        text = as_self(member_text(parsed, item))  # `class << self` around it: a class method
    shaped = item.kind in _CALLABLE and _method_shaped(parsed.language, parsed, text, file)
    candidates = _candidates(item, file, members_only=shaped)
    if shaped and not candidates:
        candidates = _candidates(item, file, members_only=False)
    fresh, held = _new_accessor(item, text, candidates, file, evidence)
    if fresh is not None or held is not None:
        return fresh, held
    local = [] if shaped or item.kind in _CONTAINERS else _local_namesakes(item, file)
    if local:
        decided = _local_or_not(item, parsed, candidates, local, file, evidence)
        if decided is not None:
            return None, decided
    header = parsed.header_of(item)
    every = list(candidates)
    if len(candidates) > 1:
        candidates = choose(every, text, header, file, evidence)
    if len(candidates) == 1:
        return candidates[0].name, None
    short = leaf(item.name)
    if candidates:
        # A hint is tried against every candidate of the name with the block's own text:
        # asking again replaces this request's evidence.
        def decide(qualified: frozenset[str], own: bytes, head: str | None) -> list[Symbol]:
            return choose(every, own, head, file, Evidence(qualified=qualified))

        return None, ambiguity(short, file.path, candidates, text, file, decide)
    if shaped and "." not in plain(item.name):
        return None, (
            f"`{short}` is written as a method, but no class in {file.path} has a member"
            f" `{short}`; give it inside its class (with the class line) to add it"
        )
    return None, None


@lru_cache(maxsize=16)
def _nested_in(path: str, data: bytes, symbols: tuple[Symbol, ...]) -> tuple[Nested, ...]:
    return tuple(nested_functions(language_for_path(path), data, symbols))


def _local_namesakes(item: Symbol, file: FileView) -> list[Nested]:
    """The functions nested inside the file's functions that bear the name of `item`, a
    definition the block gives at its outermost level."""
    if "." in plain(item.name):
        return []
    name = leaf(item.name)
    if not may_define(language_for_path(file.path), file.data, name):
        return []
    return [n for n in _nested_in(file.path, file.data, file.symbols) if n.name == name]


def _local_or_not(
    item: Symbol,
    parsed: Parsed,
    candidates: list[Symbol],
    local: list[Nested],
    file: FileView,
    evidence: Evidence,
) -> str | None:
    """Why a definition named like a nested function is not placed, or None when it is the
    entity of that name (`candidates`) by its own evidence. A nested function given alone
    would otherwise be added at the top level, or replace a top-level namesake: it is part
    of its enclosing definition, and tm changes it only through that one."""
    short = leaf(item.name)
    language = language_for_path(file.path)
    text = parsed.text[item.start : item.end]
    if not candidates:
        # Only a nested function has the name: the block is that one when it takes the same
        # parameters (by name: `def decorator(f)` is `def decorator(f: T_route) -> T_route`),
        # or when it keeps the body of one whose parameters it changed (a parameter added);
        # a new top-level definition otherwise (`def wrapper(response)` beside a decorator's
        # `wrapper(*args, **kwargs)`). Not the request or the reply naming the enclosing
        # function: they name it as much when the model adds a helper for that function to
        # call (`def wrapper(response)` used by `retry`), and a refusal there loses the
        # helper; the block's own body is what says it is the nested function. Unless the
        # reply gives the enclosing function without it: then it was moved out.
        alike = same_parameters(language, text, local) or same_body(language, text, local)
        if not alike or hoisted(file.path, short, alike, parsed, evidence.blocks):
            return None
        return nested_reason(short, file.path, alike)
    # Both a definition of the file and a nested function: the block's signature says which
    # when it is one's and not the other's; else the prompt, when it showed the entity and
    # none of the functions around the nested ones.
    heads, nests = same_signatures(language, text, [file.text(c) for c in candidates], local)
    tops = [candidates[i] for i in heads]
    if tops and not nests:
        return None
    if nests and not tops:
        return nested_reason(short, file.path, nests)
    enclosing = {n.enclosing for n in local}
    shown = [c for c in candidates if c.name in evidence.hydrated]
    if shown and not enclosing & evidence.hydrated:
        return None
    return ambiguous_reason(short, file.path, {c.name: file.text(c) for c in candidates}, local)
