"""Definitions, syntax health and identifiers from tree-sitter parse trees.

Performance notes (this runs on every tracked file at `tm init`):
- grammars, parsers and compiled queries are created on first use per language and cached in
  module-level dicts; importing this module loads no grammar;
- definitions are found by `QueryCursor.matches` (matching runs in C), which leaves out the
  bodies of functions where that pays (see "extraction" below); Python visits the matched
  nodes plus a few neighbours (wrapper parents, preceding comment and attribute siblings) and
  at most the top few levels of the tree, never the whole tree.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from functools import lru_cache
from itertools import repeat

from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

from tinymem.symbols.assemble import BLOCK, SCOPE, RawDef, assemble
from tinymem.symbols.languages import GRAMMAR_LANGUAGES
from tinymem.symbols.model import METHOD_TREE_SITTER, Extraction, Symbol, Syntax
from tinymem.symbols.pysyntax import python_error
from tinymem.symbols.queries import SPECS, LangSpec

_LANGUAGES: dict[str, Language] = {}
_PARSERS: dict[str, Parser] = {}
_DEF_QUERIES: dict[str, Query] = {}
_ID_QUERIES: dict[str, Query] = {}

_WS = b" \t\r\n\f\v"
_UPPER_CASE = re.compile(r"_*[A-Z][A-Z0-9_]*\Z")
_SPACES = re.compile(r"\s+")


def _language(language: str) -> Language:
    lang = _LANGUAGES.get(language)
    if lang is None:
        if language not in GRAMMAR_LANGUAGES:
            raise ValueError(f"no tree-sitter grammar for language {language!r}")
        from tinymem.symbols.grammars import load_language

        lang = load_language(language)
        _LANGUAGES[language] = lang
    return lang


def _parse(language: str, data: bytes) -> Tree:
    parser = _PARSERS.get(language)
    if parser is None:
        parser = Parser(_language(language))
        _PARSERS[language] = parser
    return parser.parse(data)


def parse_root(language: str, data: bytes) -> Node:
    """The syntax tree of `data` (ValueError when `language` has no grammar)."""
    return _parse(language, data).root_node


def _cached_query(cache: dict[str, Query], language: str, source: str) -> Query:
    query = cache.get(language)
    if query is None:
        query = Query(_language(language), source)
        cache[language] = query
    return query


# --------------------------------------------------------------------------- syntax health


def _first_error(root: Node) -> Node | None:
    """The first ERROR or MISSING node in document order, descending only into subtrees that
    `has_error` (so a clean subtree is never visited)."""
    if not root.has_error:
        return None
    node = root
    while True:
        if node.is_error or node.is_missing:
            return node
        for child in node.children:
            if child.has_error or child.is_missing:
                node = child
                break
        else:
            # has_error with no erroneous child: the node itself is the culprit.
            return node


def _error_reason(language: str, node: Node, data: bytes) -> str:
    if language == "python" and not node.is_missing:
        # A MISSING token is already precise; an ERROR node may span a whole definition.
        described = python_error(data)
        if described is not None:
            return described
    # tree-sitter columns count bytes; people (and editors) count characters.
    start = node.start_byte
    line_start = data.rfind(b"\n", 0, start) + 1
    line = node.start_point.row + 1
    column = len(data[line_start:start].decode("utf-8", "replace")) + 1
    if node.is_missing:
        return f"missing '{node.type}' at line {line}, column {column}"
    return f"syntax error at line {line}, column {column}"


def _named_node_count(root: Node) -> int:
    # A TreeCursor walk: ~0.25 us a node. A `(_) @n` query would count in C but then builds a
    # Python object per node, which measured 40x slower.
    cursor = root.walk()
    count = 0
    while True:
        node = cursor.node
        if node is not None and node.is_named:
            count += 1
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return count


# Pure functions of (language, bytes): one accept asks about the same few texts many times
# (gates, splice checks, re-indexing), so a small per-process memo saves most parses.
@lru_cache(maxsize=64)
def analyze(language: str, data: bytes) -> Syntax:
    """Parse only. `node_count` counts named nodes, so a file cut down to a stub shows a drop.

    Raises ValueError for a language without a grammar (see GRAMMAR_LANGUAGES).
    """
    root = _parse(language, data).root_node
    error = _first_error(root)
    return Syntax(
        clean=error is None,
        reason=None if error is None else _error_reason(language, error, data),
        node_count=_named_node_count(root),
    )


# --------------------------------------------------------------------------- identifiers


def identifiers(language: str, data: bytes) -> frozenset[str]:
    """Identifier-like leaf tokens (never those inside strings or comments)."""
    spec = SPECS[language]
    source = "[" + " ".join(f"({t})" for t in spec.identifier_types) + "] @id"
    query = _cached_query(_ID_QUERIES, language, source)
    root = _parse(language, data).root_node
    nodes = QueryCursor(query).captures(root).get("id", [])
    out: set[str] = set()
    for node in nodes:
        text = data[node.start_byte : node.end_byte]
        if text:
            # JS private names are `#x`; the bare name is what other text mentions.
            out.add(text.decode("utf-8", "replace").lstrip("#@$"))
    out.discard("")
    return frozenset(out)


# --------------------------------------------------------------------------- names


def _text(data: bytes, node: Node) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _split(name: str) -> tuple[str, ...]:
    """A possibly qualified source name as parts: `a::b.c` -> ("a", "b", "c")."""
    if name.isidentifier():  # most names: no space, dot or colon to handle
        return (name,)
    name = _SPACES.sub("", name).replace("::", ".")
    return tuple(p for p in name.split(".") if p)


def _whole(name: str) -> tuple[str, ...]:
    """A name whose dots are not qualifiers (a string: `declare module "a.b"`)."""
    name = _SPACES.sub(" ", name).strip()
    return (name,) if name else ()


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] in "\"'`" and text[-1] == text[0]:
        return text[1:-1]
    return text


_C_DECLARATOR_WRAPPERS = frozenset(
    {
        "function_declarator",
        "pointer_declarator",
        "reference_declarator",
        "array_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
        "init_declarator",
    }
)


def _c_operator(text: str) -> str:
    """`operator ==` -> "operator==", `operator  new` -> "operator new"."""
    text = _SPACES.sub(" ", text).strip()
    rest = text[len("operator") :].strip()
    if rest and (rest[0].isalnum() or rest[0] == "_"):
        return f"operator {rest}"
    return f"operator{rest.replace(' ', '')}"


def _c_name_parts(node: Node | None, data: bytes) -> tuple[str, ...]:
    """The declared name of a C/C++ declarator, qualified parts for `A::B::f`."""
    prefix: tuple[str, ...] = ()  # scopes of a qualified name, outermost first
    depth = 0
    while node is not None and depth < 64:  # iterative and bounded: trees can be pathological
        depth += 1
        kind = node.type
        if kind in ("identifier", "field_identifier", "type_identifier", "primitive_type"):
            parts = _split(_text(data, node))
            return prefix + parts if parts else ()
        if kind == "destructor_name":
            return (*prefix, _SPACES.sub("", _text(data, node)))
        if kind == "operator_name":
            return (*prefix, _c_operator(_text(data, node)))
        if kind == "operator_cast":
            target = node.child_by_field_name("type")
            return (*prefix, f"operator {_text(data, target) if target else ''}".strip())
        if kind == "template_function":
            node = node.child_by_field_name("name")
        elif kind == "qualified_identifier":
            scope = node.child_by_field_name("scope")
            if scope is not None and scope.type == "template_type":
                scope = scope.child_by_field_name("name")  # `Foo<int>::` -> Foo
            if scope is not None:
                prefix += _split(_text(data, scope))
            node = node.child_by_field_name("name")
        elif kind in _C_DECLARATOR_WRAPPERS:
            inner = node.child_by_field_name("declarator")
            if inner is None and node.named_child_count:
                inner = node.named_children[0]
            node = inner
        else:
            return ()
    return ()


def _type_name_parts(node: Node | None, data: bytes) -> tuple[str, ...]:
    """The bare name of a Rust/Go type: generics, references and paths stripped."""
    depth = 0
    while node is not None and depth < 64:
        depth += 1
        kind = node.type
        if kind in ("type_identifier", "primitive_type", "identifier"):
            return (_text(data, node),)
        if kind in ("generic_type", "reference_type", "pointer_type", "parenthesized_type"):
            inner = node.child_by_field_name("type")
            if inner is None:
                named = [c for c in node.named_children if c.type != "lifetime"]
                inner = named[0] if named else None
            node = inner
            continue
        if kind in ("scoped_type_identifier", "qualified_type"):
            node = node.child_by_field_name("name")
            continue
        # Anything else (`[T]`, `(A, B)`, `dyn Trait`): its text without spaces, one part.
        return _whole(_SPACES.sub("", _text(data, node)).replace("::", "_").replace(".", "_"))
    return ()


# --------------------------------------------------------------------------- resolution
# A resolver turns one query match into (kind, name parts) pairs; () skips the match.

Caps = dict[str, list[Node]]
Resolved = list[tuple[str, tuple[str, ...]]]


def _names(kind: str, caps: Caps, data: bytes) -> Resolved:
    return [(kind, parts) for n in caps.get("name", []) if (parts := _split(_text(data, n)))]


def _resolve_python(kind: str, node: Node, caps: Caps, data: bytes) -> Resolved:
    if kind == "constant":
        # Single-target UPPER_CASE assignments only: `A = B = 1` nests an assignment.
        value = caps.get("value", [])
        name = _text(data, caps["name"][0])
        if not value or value[0].type == "assignment" or not _UPPER_CASE.match(name):
            return []
    return _names(kind, caps, data)


_JS_FUNCTION_VALUES = frozenset({"function_expression", "arrow_function", "generator_function"})


def _member_parts(node: Node, data: bytes) -> tuple[str, ...]:
    """`a.b.c` as ("a", "b", "c"); () for anything else on the left of an assignment (`a[0].b`,
    `f().b`, `this.b`): only a path of plain names is a name a user can type."""
    parts: list[str] = []
    depth = 0
    while node.type == "member_expression" and depth < 64:
        depth += 1
        prop = node.child_by_field_name("property")
        obj = node.child_by_field_name("object")
        if prop is None or obj is None or prop.type != "property_identifier":
            return ()
        parts.append(_text(data, prop))
        node = obj
    if not parts or node.type != "identifier":
        return ()  # `c = function …`: a variable, not a member
    parts.append(_text(data, node))
    return tuple(reversed(parts))


def _resolve_js_assignment(node: Node, data: bytes) -> Resolved:
    """`res.set = res.header = function header(…) {…}`: every member path of the chain, when
    what is finally assigned is a function."""
    names: list[tuple[str, ...]] = []
    value = node.named_children[0] if node.named_children else None
    while value is not None and value.type == "assignment_expression":
        left = value.child_by_field_name("left")
        parts = () if left is None else _member_parts(left, data)
        if not parts:
            return []
        names.append(parts)
        value = value.child_by_field_name("right")
    if value is None or value.type not in _JS_FUNCTION_VALUES:
        return []
    return [("method", parts) for parts in names]


def _resolve_js(kind: str, node: Node, caps: Caps, data: bytes) -> Resolved:
    if node.type == "expression_statement":
        return _resolve_js_assignment(node, data)
    name_nodes = caps.get("name", [])
    if not name_nodes:
        # `export default function () {}` / `export default class {}`
        return [(kind, ("default",))]
    name_node = name_nodes[0]
    if name_node.type == "string":
        # `declare module "a.b"`, `'my-method'() {}`: dots in a string do not qualify.
        return [(kind, _whole(_unquote(_text(data, name_node))))]
    return _names(kind, caps, data)


def _resolve_go(kind: str, node: Node, caps: Caps, data: bytes) -> Resolved:
    if kind == "method":
        receiver = caps.get("receiver", [])
        recv_type: tuple[str, ...] = ()
        if receiver:
            for param in receiver[0].named_children:
                if param.type == "parameter_declaration":
                    recv_type = _type_name_parts(param.child_by_field_name("type"), data)
                    break
        return [(kind, recv_type + parts) for _, parts in _names(kind, caps, data)]
    if node.type in ("const_spec", "var_spec"):
        # `const X, Y = 1, 2`: the query reports one match per spec, the names are fields.
        names = node.children_by_field_name("name")
        return [(kind, parts) for n in names if (parts := _split(_text(data, n)))]
    if kind == "type" and node.type == "type_spec":
        type_node = caps.get("type", [])
        shape = type_node[0].type if type_node else ""
        if shape == "struct_type":
            kind = "struct"
        elif shape == "interface_type":
            kind = "interface"
    return _names(kind, caps, data)


def _resolve_rust(kind: str, node: Node, caps: Caps, data: bytes) -> Resolved:
    if kind == SCOPE:
        type_node = caps.get("scope.type", [])
        parts = _type_name_parts(type_node[0], data) if type_node else ()
        return [(SCOPE, parts)] if parts else []
    return _names(kind, caps, data)


_C_TYPE_KINDS = {
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "class_specifier": "class",
}


def _resolve_c(kind: str, node: Node, caps: Caps, data: bytes) -> Resolved:
    if kind == "function":
        parts = _c_name_parts(caps["declarator"][0], data)
        if not parts:
            return []
        # `void Foo::bar() {}` defined out of line is a member of Foo.
        return [("method" if len(parts) > 1 else "function", parts)]
    if node.type == "type_definition":
        type_node = caps["type"][0]
        shape = _C_TYPE_KINDS.get(type_node.type)
        if shape is not None and type_node.child_by_field_name("body") is not None:
            if type_node.child_by_field_name("name") is not None:
                return []  # the struct pattern names it by its tag; one symbol per body
            # `typedef struct { ... } T, *PT;`: the struct is known by its first typedef name.
            first = node.child_by_field_name("declarator")
            if first is None or first.start_byte != caps["declarator"][0].start_byte:
                return []
            kind = shape
        parts = _c_name_parts(caps["declarator"][0], data)
        return [(kind, parts)] if parts else []
    return _names(kind, caps, data)


def _resolve_ruby(kind: str, node: Node, caps: Caps, data: bytes) -> Resolved:
    if kind == "method":  # `def self.x` / `def obj.x`
        obj = caps.get("object", [])
        prefix: tuple[str, ...] = ()
        if obj and obj[0].type != "self":
            prefix = _split(_text(data, obj[0]))
        return [(kind, (*prefix, _text(data, caps["name"][0]).strip()))]
    if kind == "function":  # operator and setter names (`==`, `x=`) may contain dots: `.`
        return [(kind, _whole(_text(data, caps["name"][0])))]
    return _names(kind, caps, data)


def _resolve_csharp(kind: str, node: Node, caps: Caps, data: bytes) -> Resolved:
    if node.type == "destructor_declaration":
        return [(kind, ("~" + _text(data, caps["name"][0]),))]
    if node.type == "indexer_declaration":
        return [(kind, ("this[]",))]
    if node.type in ("operator_declaration", "conversion_operator_declaration"):
        # `operator +`, `implicit operator int`: the words before the parameters, one part.
        head = data[node.start_byte : node.end_byte].split(b"(", 1)[0].decode("utf-8", "replace")
        words = _SPACES.sub(" ", head).split(" ")
        at = words.index("operator") if "operator" in words else len(words) - 1
        if node.type == "conversion_operator_declaration":
            return [(kind, (" ".join(words[max(at - 1, 0) :]),))]
        return [(kind, ("operator" + "".join(words[at + 1 :]),))]
    return _names(kind, caps, data)


def _resolve_default(kind: str, node: Node, caps: Caps, data: bytes) -> Resolved:
    return _names(kind, caps, data)


Resolver = Callable[[str, Node, Caps, bytes], Resolved]

_RESOLVERS: dict[str, Resolver] = {
    "python": _resolve_python,
    "javascript": _resolve_js,
    "typescript": _resolve_js,
    "tsx": _resolve_js,
    "go": _resolve_go,
    "rust": _resolve_rust,
    "c": _resolve_c,
    "cpp": _resolve_c,
    "ruby": _resolve_ruby,
    "csharp": _resolve_csharp,
}


# --------------------------------------------------------------------------- spans
# A climber widens a definition node to the wrapper whose text belongs to it alone.


def _has_peer(node: Node, types: frozenset[str]) -> bool:
    """Whether a neighbour of `node` is another declarator/spec of the same declaration.

    Looking at the two neighbours instead of counting all children keeps a declaration
    with thousands of entries (minified `var a=..,b=..`, generated Go consts) linear.
    """
    for peer in (node.prev_named_sibling, node.next_named_sibling):
        if peer is not None and peer.type in types:
            return True
    return False


def _climb_python(node: Node) -> Node:
    parent = node.parent
    if parent is not None and parent.type == "decorated_definition":
        return parent
    return node


def _climb_js(node: Node) -> Node:
    while True:
        parent = node.parent
        if parent is None:
            return node
        kind = parent.type
        if kind == "variable_declarator":  # `x = () => ...`: node is the value
            node = parent
        elif kind in ("lexical_declaration", "variable_declaration"):
            if _has_peer(node, frozenset({"variable_declarator"})):
                return node  # `const a = f, b = g`: each keeps its own declarator
            node = parent
        elif kind in ("export_statement", "ambient_declaration"):
            node = parent
        else:
            return node


_GO_SPECS = frozenset({"type_spec", "type_alias", "const_spec", "var_spec", "var_spec_list"})
_GO_DECLS = frozenset({"type_declaration", "const_declaration", "var_declaration", "var_spec_list"})


def _climb_go(node: Node) -> Node:
    # A declaration with a single spec (`type A struct{}`) is that spec's own text; in a
    # group `type ( A ...; B ... )` each spec is a symbol of its own.
    while node.type in _GO_SPECS:
        parent = node.parent
        if parent is None or parent.type not in _GO_DECLS:
            return node
        if _has_peer(node, _GO_SPECS):
            return node
        node = parent
    return node


_C_WRAPPERS = frozenset({"type_definition", "declaration", "field_declaration"})


def _climb_c(node: Node) -> Node:
    if node.type in _C_TYPE_KINDS:
        parent = node.parent
        if parent is not None and parent.type in _C_WRAPPERS:
            type_node = parent.child_by_field_name("type")
            if type_node is not None and type_node.start_byte == node.start_byte:
                node = parent
    # C++: `template <...>` belongs to what it declares (possibly nested templates).
    while node.parent is not None and node.parent.type == "template_declaration":
        node = node.parent
    return node


def _climb_none(node: Node) -> Node:
    return node


_CLIMBERS: dict[str, Callable[[Node], Node]] = {
    "python": _climb_python,
    "javascript": _climb_js,
    "typescript": _climb_js,
    "tsx": _climb_js,
    "go": _climb_go,
    "c": _climb_c,
    "cpp": _climb_c,
}


def _content_end(data: bytes, end: int, floor: int) -> int:
    while end > floor and data[end - 1] in _WS:
        end -= 1
    return end


def _own_line(data: bytes, start: int) -> bool:
    line_start = data.rfind(b"\n", 0, start) + 1
    if line_start == 0 and data.startswith(b"\xef\xbb\xbf"):
        line_start = 3  # a UTF-8 BOM is not code in front of the first line
    return not data[line_start:start].strip(_WS)


def _leading_start(node: Node, spec: LangSpec, data: bytes) -> int:
    """Start of `node` widened over the attributes/decorators and the doc comment block
    right above it (no blank line in between, comment on a line of its own)."""
    start = node.start_byte
    current = node
    while True:
        sibling = current.prev_sibling
        while sibling is not None:
            kind = sibling.type
            if kind in spec.attribute_types:
                start = sibling.start_byte
            elif kind in spec.comment_types:
                gap = data[_content_end(data, sibling.end_byte, sibling.start_byte) : start]
                if (
                    gap.count(b"\n") > 1
                    or gap.strip(_WS)
                    or not _own_line(data, sibling.start_byte)
                ):
                    return start
                if data[sibling.start_byte : sibling.start_byte + 3] in (b"//!", b"/*!"):
                    return start  # Rust inner docs describe the enclosing item
                start = sibling.start_byte
            else:
                return start
            current = sibling
            sibling = sibling.prev_sibling
        # First in its body: Python's `block` and Ruby's `body_statement` start at their first
        # statement, so a comment above that statement is the body's sibling, not its own.
        parent = current.parent
        if parent is None or parent.type not in spec.body_types or parent.start_byte != start:
            return start
        current = parent


def _span(language: str, spec: LangSpec, node: Node, data: bytes) -> tuple[int, int]:
    node = _CLIMBERS.get(language, _climb_none)(node)
    start = _leading_start(node, spec, data)
    end = node.end_byte
    # A `;` right after the node belongs to it (`struct S { ... };`, a TS method signature,
    # a JS class field) though the grammar makes it a sibling.
    after = node.next_sibling
    if (
        after is not None
        and (after.start_byte, after.end_byte) == (end, end + 1)
        and data[end : end + 1] == b";"
    ):
        end = after.end_byte
    return start, _content_end(data, end, start)


# --------------------------------------------------------------------------- extraction
# Everything inside a function, method or anonymous block is local and dropped by `assemble`,
# yet matching the query over the whole tree visits every node in those bodies: in typical
# code, most of the tree (matching was ~30% of extraction on the 50,000-file benchmark).
#
# So a first pass matches only the patterns rooted at most `_SHALLOW_DEPTH` levels down. Every
# other match is rooted deeper, under one node at depth `_SHALLOW_DEPTH + 1`; those nodes are
# matched in full (`_deeper`), except the inside of the local-making nodes the first pass
# found, whose matches `assemble` would drop anyway. Finding a match twice is harmless (see
# `_Definitions`), so the walk may stop early where nothing was captured. The result equals
# one pass over the whole tree (tests/symbols/test_matching.py compares the two ways).
#
# A file with little inside such bodies (a C header, a table of constants) is matched in one
# pass instead: walking its top levels would cost more than it saves.
_SHALLOW_DEPTH = 3
_PRUNE_MIN_SHARE = 0.3  # of the file's bytes inside the bodies found, to take the second way

_LOCAL_KINDS = frozenset({"function", "method"})  # plus BLOCK: see assemble's _LOCAL_MAKERS
_LOCAL_CAPTURES = frozenset({"def.function", "def.method", "block"})

Match = tuple[int, dict[str, list[Node]]]
NodeKey = tuple[int, int, int]


def _key(node: Node) -> NodeKey:
    return (node.start_byte, node.end_byte, node.kind_id)


class _Definitions:
    """The raw definitions of the matches it is given, in the order given. A match given
    twice changes nothing: an equal definition is kept once, and a block twice hides the
    same text."""

    def __init__(self, language: str, spec: LangSpec, data: bytes) -> None:
        self._language = language
        self._spec = spec
        self._data = data
        self._resolve = _RESOLVERS.get(language, _resolve_default)
        self.raws: list[RawDef] = []
        self._seen: set[tuple[int, int, tuple[str, ...]]] = set()
        self._def_nodes: set[NodeKey] = set()
        self._blocks: list[Node] = []
        self._local: dict[NodeKey, Node] = {}  # definitions that make their inside local

    def add(self, matches: list[Match]) -> None:
        data = self._data
        for _pattern, caps in matches:
            kind = ""
            node: Node | None = None
            for cap, nodes in caps.items():
                if cap.startswith("def."):
                    kind, node = cap[4:], nodes[0]
                    break
                if cap == "scope":
                    kind, node = SCOPE, nodes[0]
                    break
                if cap == "block":
                    kind, node = BLOCK, nodes[0]
                    break
            if node is None:
                continue
            if kind == BLOCK:
                self._blocks.append(node)
                continue
            resolved = self._resolve(kind, node, caps, data)
            if not resolved:
                continue
            key = _key(node)
            self._def_nodes.add(key)
            start, end = _span(self._language, self._spec, node, data)
            if end <= start:
                continue
            for res_kind, parts in resolved:
                if not parts:
                    continue
                if res_kind in _LOCAL_KINDS:
                    self._local[key] = node
                seen = (start, end, parts)
                if seen not in self._seen:
                    self._seen.add(seen)
                    self.raws.append(RawDef(start, end, parts, res_kind))

    def local_nodes(self) -> dict[NodeKey, Node]:
        """The nodes whose inside `assemble` drops: local-making definitions and blocks."""
        out = dict(self._local)
        for block in self._blocks:
            key = _key(block)
            if key not in self._def_nodes:
                out[key] = block
        return out

    def finish(self) -> list[RawDef]:
        for block in self._blocks:
            # A lambda that *is* a definition (`const f = () => 1`) is not hidden by itself.
            if _key(block) not in self._def_nodes:
                self.raws.append(RawDef(block.start_byte, block.end_byte, (), BLOCK))
        return self.raws


class _Captured:
    """The spans of every node a list of matches captured, to ask what lies inside a node."""

    def __init__(self, matches: list[Match]) -> None:
        spans = sorted(
            (node.start_byte, node.end_byte, cap in _LOCAL_CAPTURES)
            for _pattern, caps in matches
            for cap, nodes in caps.items()
            for node in nodes
        )
        self._starts = [s for s, _e, _local in spans]
        self._spans = spans

    def body_share(self, size: int) -> float:
        """Roughly how much of the file lies inside captured function bodies and blocks
        (resolution may still reject some: this only picks the way to match)."""
        total = 0
        covered_to = 0
        for start, end, local in self._spans:
            start = max(start, covered_to)
            if local and end > start:
                total += end - start
                covered_to = end
        return total / size if size else 0.0

    def any_within(self, start: int, end: int) -> bool:
        """Whether a captured node lies within the node spanning these bytes (or might: this
        errs towards yes)."""
        spans = self._spans
        i = bisect_left(self._starts, start)
        while i < len(spans) and spans[i][0] <= end:
            if spans[i][1] <= end:
                return True
            i += 1
        return False


def _spans_whole(node: Node) -> bool:
    """Whether a child spans all of `node`: `assemble` takes such a child for a sibling, not a
    descendant. Only the children that start where `node` does are looked at (usually one)."""
    start, end = node.start_byte, node.end_byte
    for i in range(node.child_count):
        child = node.child(i)
        if child is None or child.start_byte != start:
            return False
        if child.end_byte == end:
            return True
    return False


def _deeper(
    root: Node, depth: int, local: dict[NodeKey, Node], captured: _Captured
) -> list[tuple[Node, bool]]:
    """Where to look for the matches whose pattern root lies more than `depth` levels below
    `root`, given the matches rooted higher (`captured`): (node, whether to match its whole
    subtree or only the patterns rooted at the node itself), in document order.

    - The inside of a `local` node is left out: `assemble` drops everything in it. A `local`
      node `depth + 1` down is still matched at itself: a pattern rooted there is not in the
      first pass.
    - A node with nothing captured inside has no match of the first pass rooted in it: all of
      it is matched at once, instead of walking down to `depth + 1` (a big win on attributes,
      imports and tables at the top of a file); not at all if it is too small to reach below
      `depth`.
    """
    out: list[tuple[Node, bool]] = []
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, level = stack.pop()
        start, end = node.start_byte, node.end_byte
        if not captured.any_within(start, end):
            # Nothing of the first pass inside: match all of it, unless all of it lies within
            # the first pass's depth (a keyword, a brace, a comment: most of these nodes). A
            # subtree of n nodes is at most n - 1 levels deep.
            if node.descendant_count - 1 > depth - level:
                out.append((node, True))
            continue
        key: NodeKey = (start, end, node.kind_id)  # `_key(node)`, with the span read once
        inside_dropped = key in local and not _spans_whole(node)
        if level > depth:
            out.append((node, not inside_dropped))
        elif not inside_dropped:
            stack.extend(zip(reversed(node.children), repeat(level + 1)))
    return out


def _matches(query: Query, root: Node, found: _Definitions, size: int, prune_share: float) -> None:
    shallow = QueryCursor(query)
    shallow.set_max_start_depth(_SHALLOW_DEPTH)
    top = shallow.matches(root)
    captured = _Captured(top)
    if captured.body_share(size) < prune_share:
        found.add(QueryCursor(query).matches(root))
        return
    found.add(top)
    whole = QueryCursor(query)
    at_node = QueryCursor(query)
    at_node.set_max_start_depth(0)
    for node, entire in _deeper(root, _SHALLOW_DEPTH, found.local_nodes(), captured):
        found.add((whole if entire else at_node).matches(node))


@lru_cache(maxsize=64)
def extract_tree_sitter(language: str, data: bytes) -> Extraction:
    return _extract(language, data, _PRUNE_MIN_SHARE)


def _extract(language: str, data: bytes, prune_share: float) -> Extraction:
    """`prune_share`: 0 always leaves bodies out, infinity always matches the whole tree (the
    tests compare the two)."""
    spec = SPECS[language]
    root = _parse(language, data).root_node
    query = _cached_query(_DEF_QUERIES, language, spec.query)
    found = _Definitions(language, spec, data)
    _matches(query, root, found, len(data), prune_share)
    symbols: tuple[Symbol, ...] = assemble(found.finish(), spec.method_containers)
    error = _first_error(root)
    return Extraction(
        language=language,
        method=METHOD_TREE_SITTER,
        symbols=symbols,
        clean=error is None,
        reason=None if error is None else _error_reason(language, error, data),
    )
