"""Matching without function bodies finds exactly what matching the whole tree finds.

`treesitter._extract(language, data, 0.0)` always leaves out the bodies that the first,
shallow pass found; `math.inf` always matches the whole tree in one pass. Their results must
be equal for any input bytes: nested definitions at every depth, and broken code too.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tree_sitter import Node

from tinymem.symbols.languages import GRAMMAR_LANGUAGES, language_for_path
from tinymem.symbols.treesitter import (
    _SHALLOW_DEPTH,
    Match,
    _Captured,
    _deeper,
    _extract,
    _key,
    _parse,
)

DATA = Path(__file__).parent / "data"

# Per language: (opening, closing) templates that nest, and leaves. `{i}` makes names unique.
# Whether the result parses cleanly does not matter: both ways see the same tree.
NESTING: dict[str, tuple[list[tuple[str, str]], list[str]]] = {
    "python": (
        [
            ("class C{i}:", ""),
            ("def f{i}(self):", ""),
            ("@dec\ndef g{i}():", ""),
            ("if x:", ""),
            ("try:", ""),
            ("async def h{i}():", ""),
        ],
        ["X{i} = 1", "Y{i} = lambda: 0", "pass", "# note", '"""doc"""'],
    ),
    "javascript": (
        [
            ("class C{i} {{", "}}"),
            ("function f{i}() {{", "}}"),
            ("m{i}() {{", "}}"),
            ("if (x) {{", "}}"),
            ("const g{i} = () => {{", "}};"),
            ("export default class {{", "}}"),
            ("export function e{i}() {{", "}}"),
            ("(function () {{", "}})();"),
            ("{{", "}}"),
        ],
        ["let v{i} = 1;", "x = function () {{}};", "// c\n", "/** doc */\n", "p{i} = () => 1;"],
    ),
    "typescript": (
        [
            ("class C{i} {{", "}}"),
            ("function f{i}() {{", "}}"),
            ("namespace N{i} {{", "}}"),
            ('declare module "m{i}" {{', "}}"),
            ("abstract class A{i} {{", "}}"),
            ("export const k{i} = () => {{", "}};"),
            ("m{i}(): void {{", "}}"),
        ],
        [
            "interface I{i} {{ m{i}(): void; }}",
            "type T{i} = number;",
            "enum E{i} {{ A }}",
            "function s{i}(): void;",
            "f{i} = (a: number) => a;",
        ],
    ),
    "go": (
        [
            ("func f{i}() {{", "}}"),
            ("func (r *T{i}) m{i}() {{", "}}"),
            ("if x {{", "}}"),
            ("go func() {{", "}}()"),
            ("type T{i} struct {{", "}}"),
        ],
        [
            "const c{i} = 1",
            "var v{i} = func() {{}}",
            "type A{i} = int",
            "// c",
            "const (\na{i} = 1\nb{i} = 2\n)",
        ],
    ),
    "rust": (
        [
            ("fn f{i}() {{", "}}"),
            ("impl T{i} {{", "}}"),
            ("mod m{i} {{", "}}"),
            ("trait Tr{i} {{", "}}"),
            ("let c = |x| {{", "}};"),
            ("#[cfg(test)]\nmod t{i} {{", "}}"),
            ("unsafe {{", "}}"),
        ],
        [
            "const C{i}: u8 = 1;",
            "struct S{i};",
            "fn sig{i}();",
            "/// doc\n",
            "macro_rules! m{i} {{ () => {{}} }}",
        ],
    ),
    "c": (
        [
            ("int f{i}(void) {{", "}}"),
            ("#ifdef X{i}\n", "\n#endif\n"),
            ("struct S{i} {{", "}};"),
            ("if (x) {{", "}}"),
            ("typedef struct {{", "}} T{i};"),
        ],
        ["#define M{i} 1\n", "typedef int T{i};", "int v{i};", "enum E{i} {{ A{i} }};"],
    ),
    "cpp": (
        [
            ("int f{i}() {{", "}}"),
            ("namespace n{i} {{", "}}"),
            ("class K{i} {{ public:", "}};"),
            ('extern "C" {{', "}}"),
            ("template <typename T> T t{i}() {{", "}}"),
            ("#if X{i}\n", "\n#endif\n"),
        ],
        [
            "auto l{i} = [](){{ return 1; }};",
            "void A::b{i}() {{}}",
            "using U{i} = int;",
            "int v{i};",
        ],
    ),
    "java": (
        [
            ("class C{i} {{", "}}"),
            ("void m{i}() {{", "}}"),
            ("interface I{i} {{", "}}"),
            ("Object o{i} = new Object() {{", "}};"),
            ("if (x) {{", "}}"),
            ("record R{i}() {{", "}}"),
        ],
        ["int f{i};", "Runnable r{i} = () -> {{}};", "C{i}() {{}}", "enum E{i} {{ A, B }}"],
    ),
    "csharp": (
        [
            ("namespace N{i} {{", "}}"),
            ("class C{i} {{", "}}"),
            ("void M{i}() {{", "}}"),
            ("interface I{i} {{", "}}"),
            ("struct S{i} {{", "}}"),
            ("if (x) {{", "}}"),
            ("Action a{i} = () => {{", "}};"),
        ],
        ["int f{i};", "int P{i} {{ get; set; }}", "C{i}() {{}}", "enum E{i} {{ A, B }}"],
    ),
    "ruby": (
        [
            ("class C{i}", "end"),
            ("module M{i}", "end"),
            ("def m{i}", "end"),
            ("def self.s{i}", "end"),
            ("if x", "end"),
            ("l{i} = lambda do", "end"),
        ],
        ["X{i} = 1", "# c", "attr_reader :a{i}"],
    ),
}
NESTING["tsx"] = NESTING["typescript"]
EXTENSION = {
    "python": ".py", "javascript": ".js", "typescript": ".ts", "tsx": ".tsx", "go": ".go",
    "rust": ".rs", "c": ".c", "cpp": ".cpp", "java": ".java", "ruby": ".rb", "csharp": ".cs",
}  # fmt: skip


def test_every_grammar_language_is_generated() -> None:
    assert set(NESTING) == GRAMMAR_LANGUAGES
    assert {language_for_path("f" + ext) for ext in EXTENSION.values()} == GRAMMAR_LANGUAGES


Tree = tuple[int, list["Tree"]] | int  # a container (template, children) or a leaf


def _trees(width: int) -> st.SearchStrategy[list[Tree]]:
    leaf: st.SearchStrategy[Tree] = st.integers(0, 100)
    node = st.recursive(
        leaf,
        lambda inner: st.tuples(st.integers(0, 100), st.lists(inner, max_size=width)),
        max_leaves=40,
    )
    return st.lists(node, min_size=1, max_size=width)


def _render(language: str, trees: list[Tree]) -> bytes:
    containers, leaves = NESTING[language]
    counter = iter(range(1_000_000))
    indented = language == "python"

    def render(tree: Tree, level: int) -> list[str]:
        pad = "    " * level if indented else ""
        if isinstance(tree, int):
            return [pad + leaves[tree % len(leaves)].format(i=next(counter))]
        which, children = tree
        opening, closing = containers[which % len(containers)]
        i = next(counter)
        lines = [pad + line for line in opening.format(i=i).split("\n")]
        for child in children or [len(leaves) * 1000 + 2]:  # a body is never empty
            lines += render(child, level + 1)
        if closing:
            lines.append(pad + closing.format(i=i))
        return lines

    return "\n".join(line for tree in trees for line in render(tree, 0)).encode() + b"\n"


def _both_ways_equal(language: str, data: bytes) -> None:
    assert _extract(language, data, 0.0) == _extract(language, data, math.inf)


@pytest.mark.parametrize("language", sorted(GRAMMAR_LANGUAGES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees=_trees(width=4))
def test_nested_definitions_found_alike(language: str, trees: list[Tree]) -> None:
    _both_ways_equal(language, _render(language, trees))


@pytest.mark.parametrize("language", sorted(GRAMMAR_LANGUAGES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_broken_samples_found_alike(language: str, data: st.DataObject) -> None:
    samples = [
        p.read_bytes()
        for p in sorted(DATA.iterdir())
        if language_for_path(p.name.removesuffix(".txt")) == language
    ] or [_render(language, [(0, [(1, [0, 1]), 2]), (2, [3])])]
    text = data.draw(st.sampled_from(samples))
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, min(len(text), a + 200)))
    junk = data.draw(st.sampled_from([b"", b"{", b"}", b"(", b"\n", b"end\n", b"def ", b":"]))
    _both_ways_equal(language, text[:a] + junk + text[b:])


def test_generated_code_reaches_below_the_shallow_pass() -> None:
    # The generator must nest deeper than the first pass looks, or the tests above prove little.
    deep: Tree = 0
    for _ in range(_SHALLOW_DEPTH + 3):
        deep = (0, [deep, 1])
    text = _render("python", [deep])
    names = [s.name for s in _extract("python", text, 0.0).symbols]
    assert len([n for n in names if n.count(".") >= _SHALLOW_DEPTH]) > 0, names


GRAMMAR_SAMPLES = [
    p for p in sorted(DATA.iterdir()) if language_for_path(p.name.removesuffix(".txt")) is not None
]


@pytest.mark.parametrize("path", GRAMMAR_SAMPLES, ids=lambda p: p.name)
def test_samples_found_alike(path: Path) -> None:
    language = language_for_path(path.name.removesuffix(".txt"))
    assert language is not None
    _both_ways_equal(language, path.read_bytes())


def _tree(language: str, text: bytes) -> Node:
    return _parse(language, text).root_node


def test_a_local_node_one_level_below_the_pass_is_matched_at_itself_only() -> None:
    # program > export_statement > class_declaration > class_body > method_definition: the
    # method is found by a pattern rooted at the class body, within the first pass; below
    # it only patterns rooted at the method itself may still count, and its body is skipped.
    text = b"export class A {\n  m() { function inner() {} }\n}\n"
    root = _tree("javascript", text)
    method = root.children[0].children[1].children[2].named_children[0]
    assert method.type == "method_definition"
    matches: list[Match] = [(0, {"def.method": [method]})]
    places = _deeper(root, 3, {_key(method): method}, _Captured(matches))
    assert (method.id, False) in [(n.id, entire) for n, entire in places]
    inside = [n for n, _e in places if method.start_byte < n.start_byte < method.end_byte]
    assert inside == []


def test_a_child_spanning_all_of_a_local_node_is_still_searched() -> None:
    # `assemble` treats equal spans as siblings, so such a child is not inside the dropped
    # body. (No grammar here yields a function with one child, so the case is built by hand.)
    text = b"f()\n"  # no `;`: the statement and the call span the same bytes
    root = _tree("javascript", text)
    statement = root.children[0]
    call = statement.children[0]
    assert (call.start_byte, call.end_byte) == (statement.start_byte, statement.end_byte)
    captured = _Captured([(0, {"def.function": [statement]})])
    local = {_key(statement): statement}
    assert [(n.id, e) for n, e in _deeper(root, 0, local, captured)] == [(statement.id, True)]
    assert [n.id for n, _e in _deeper(root, 1, local, captured)] == [call.id]
