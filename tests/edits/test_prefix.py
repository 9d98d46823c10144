"""The comments and decorators above a definition that a replacement leaves out stay in the
file (splice/prefix.py), on real files of public projects."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.edits.realcorpus import CODE
from tinymem.edits.align import align
from tinymem.edits.alignment import Evidence
from tinymem.edits.splice import Replacement, splice
from tinymem.edits.splice.prefix import keep_prefix, prefix_of
from tinymem.symbols import extract

SCAFFOLD = ("flask", "src/flask/sansio/scaffold.py")
CHAIN = ("anyhow", "src/chain.rs")
CALLBACK = ("cordova-android", "framework/src/org/apache/cordova/CallbackContext.java")


def _read(project: str, path: str) -> bytes:
    return (CODE / project / path).read_bytes()


def _symbol_text(path: str, data: bytes, name: str) -> bytes:
    (sym,) = [s for s in extract(path, data).symbols if s.name == name]
    return data[sym.start : sym.end]


def test_a_decorator_the_block_leaves_out_stays() -> None:
    project, path = SCAFFOLD
    data = _read(project, path)
    new = (
        b"def get(self, rule: str, **options: t.Any) -> t.Callable[[T_route], T_route]:\n"
        b'    return self._method_route("GET", rule, dict(options))\n'
    )
    result = splice(path, data, [Replacement("Scaffold.get", new)])
    text = _symbol_text(path, result.data, "Scaffold.get")
    assert text.startswith(b"@setupmethod\n    def get(self")
    assert b"dict(options)" in text and b"versionadded" not in text
    assert result.kept == {"Scaffold.get": ("decorators",)}
    assert result.data.count(b"@setupmethod") == data.count(b"@setupmethod")


def test_a_rust_attribute_and_a_java_doc_comment_stay() -> None:
    project, path = CHAIN
    data = _read(project, path)
    new = (
        b"pub fn new(head: &'a (dyn StdError + 'static)) -> Self {\n"
        b"    Chain { state: ChainState::Linked { next: Some(head) } }\n}\n"
    )
    result = splice(path, data, [Replacement("Chain.new", new)])
    assert b"    #[cold]\n    pub fn new(" in result.data
    project, path = CALLBACK
    data = _read(project, path)
    name = next(
        s.name
        for s in extract(path, data).symbols
        if s.parent is not None and b"error(String message)" in data[s.start : s.end]
    )
    new = b"public void error(String message) {\n    LOG.e(LOG_TAG, message);\n}\n"
    result = splice(path, data, [Replacement(name, new)])
    text = _symbol_text(path, result.data, name)
    assert text.startswith(b"/**\n     * Helper for error callbacks")
    assert b"LOG.e(LOG_TAG, message);" in text


def test_what_the_block_gives_replaces_the_files_own() -> None:
    project, path = SCAFFOLD
    data = _read(project, path)
    new = (
        b"@setupmethod\n# GET only.\n"
        b"def get(self, rule: str, **options: t.Any) -> t.Callable[[T_route], T_route]:\n"
        b'    return self._method_route("GET", rule, options)\n'
    )
    old = _symbol_text(path, data, "Scaffold.get")
    # Interleaved (a comment under a decorator): nothing is kept apart, the block wins.
    assert keep_prefix("python", old, new) == (new, [])


def test_a_licence_header_over_the_only_function_is_not_replaced_by_the_block() -> None:
    original = b"# Copyright 2024 ACME. License: MIT.\ndef f():\n    return 1\n"
    block = b"def f():\n    return 2\n"
    aligned = align("a.py", block, original, Evidence())
    assert not aligned.whole_file and [t.name for t in aligned.targets] == ["f"]
    result = splice("a.py", original, [Replacement("f", block)])
    assert result.data == b"# Copyright 2024 ACME. License: MIT.\ndef f():\n    return 2\n"


@settings(max_examples=80, deadline=None)
@given(
    comments=st.lists(st.sampled_from(["# a", "# b c"]), max_size=2),
    decorators=st.lists(st.sampled_from(["@d", "@e(1,\n  2)"]), max_size=2),
    indent=st.sampled_from(["", "    "]),
)
def test_prefix_parts_are_found_where_they_are(
    comments: list[str], decorators: list[str], indent: str
) -> None:
    lines = [*comments, *decorators, "def f():", "    return 1"]
    text = ("\n" + indent).join("\n".join(lines).split("\n")).encode()
    found = prefix_of("python", text)
    assert found.ordered
    assert text[found.core :].startswith(b"def f():")
    assert found.has_comments == bool(comments)
    assert found.has_decorators == bool(decorators)
    if decorators:
        assert text[found.decorators :].startswith(b"@")


RUNNER = ("openai-node", "src/lib/AbstractChatCompletionRunner.ts")
PYEXC = ("pythonnet", "src/runtime/PythonException.cs")


def test_the_visibility_a_block_leaves_out_stays() -> None:
    """`pub fn` written `fn`, `protected async` written `async`, `internal static` written
    `static`: the definition stays as visible as the file has it (models drop these words
    as they drop decorators, and an unexported function breaks its importers)."""
    project, path = CHAIN
    data = _read(project, path)
    new = b"fn new(head: &'a (dyn StdError + 'static)) -> Self {\n    Chain::from(head)\n}\n"
    result = splice(path, data, [Replacement("Chain.new", new)])
    assert b"    #[cold]\n    pub fn new(head" in result.data
    assert result.kept == {"Chain.new": ("decorators", "`pub`")}
    project, path = RUNNER
    data = _read(project, path)
    name = "AbstractChatCompletionRunner._addMessage"
    old = _symbol_text(path, data, name)
    new = old.replace(b"protected _addMessage(", b"_addMessage(").replace(
        b"emit = true", b"emit = false"
    )
    result = splice(path, data, [Replacement(name, new)])
    assert _symbol_text(path, result.data, name) == old.replace(b"emit = true", b"emit = false")
    assert result.kept == {name: ("`protected`",)}
    project, path = PYEXC
    data = _read(project, path)
    name = "Python.Runtime.PythonException.FetchCurrentRaw"
    new = (
        b"static PythonException FetchCurrentRaw()\n"
        b'    => FetchCurrentOrNullRaw() ?? throw new InvalidOperationException("none");\n'
    )
    result = splice(path, data, [Replacement(name, new)])
    assert b"        internal static PythonException FetchCurrentRaw()\n" in result.data
    assert result.data.count(b"FetchCurrentRaw()\n") == data.count(b"FetchCurrentRaw()\n")


def test_a_block_that_gives_its_own_visibility_keeps_it() -> None:
    project, path = CHAIN
    data = _read(project, path)
    for own in (b"pub(crate) fn", b"pub fn"):
        new = own + b" new(head: &'a (dyn StdError + 'static)) -> Self {\n    todo!()\n}\n"
        result = splice(path, data, [Replacement("Chain.new", new)])
        assert b"    #[cold]\n    " + own + b" new(head" in result.data
        assert result.kept == {"Chain.new": ("decorators",)}
    project, path = PYEXC
    data = _read(project, path)
    name = "Python.Runtime.PythonException.FetchCurrentRaw"
    new = b"static public PythonException FetchCurrentRaw() => null!;\n"
    result = splice(path, data, [Replacement(name, new)])
    assert b"        static public PythonException FetchCurrentRaw()" in result.data
    assert b"internal static public" not in result.data


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["pub ", "pub(crate) ", "pub(super) ", ""]),
    st.sampled_from(["pub ", "pub(crate) ", ""]),
    st.sampled_from(["", "#[inline]\n"]),
)
def test_a_rust_definition_has_one_visibility_after_a_splice(
    was: str, own: str, attribute: str
) -> None:
    old = f"{attribute}{was}fn run(x: u32) -> u32 {{\n    x\n}}\n".encode()
    new = f"{own}fn run(x: u32) -> u32 {{\n    x + 1\n}}\n".encode()
    out, kept = keep_prefix("rust", old, new)
    line = next(ln for ln in out.splitlines() if b"fn run" in ln)
    assert line == f"{own or was}fn run(x: u32) -> u32 {{".encode()
    assert ("`" + was.strip() + "`" in kept) == (bool(was) and not own)


INLINE = [
    (
        "src/app/Money.java",
        b"package app;\n\npublic class Money {\n    private long cents;\n\n"
        b'    @Override public String toString() {\n        return "" + cents;\n    }\n}\n',
        "Money.toString",
        b'@Override String toString() {\n    return cents / 100 + "." + cents % 100;\n}\n',
        b"    @Override public String toString() {\n",
    ),
    (
        "Api/ItemsController.cs",
        b"namespace Api\n{\n    public class ItemsController\n    {\n"
        b"        [HttpGet] public IActionResult Get()\n        {\n            return Ok();\n"
        b"        }\n    }\n}\n",
        "Api.ItemsController.Get",
        b"IActionResult Get()\n{\n    return Ok(items);\n}\n",
        b"        [HttpGet] public IActionResult Get()\n",
    ),
    (
        "src/lib.rs",
        b"pub struct Chain {\n    n: usize,\n}\n\nimpl Chain {\n"
        b"    #[inline] pub fn len(&self) -> usize {\n        self.n\n    }\n}\n",
        "Chain.len",
        b"#[inline] fn len(&self) -> usize {\n    self.n + 1\n}\n",
        b"    #[inline] pub fn len(&self) -> usize {\n",
    ),
]


@pytest.mark.parametrize(("path", "data", "name", "new", "line"), INLINE)
def test_attributes_on_the_definition_line_keep_its_visibility(
    path: str, data: bytes, name: str, new: bytes, line: bytes
) -> None:
    """`@Override public`, `[HttpGet] public`, `#[inline] pub` on one line, rewritten without
    the visibility (or the attribute too): both stay (a review of D7: the C# action went
    private, so its route went away; Java's weaker access does not compile)."""
    result = splice(path, data, [Replacement(name, new)])
    assert line in result.data
    assert result.data.count(line.strip()) == 1
