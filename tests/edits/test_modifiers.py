"""Modifiers a block leaves out stay in the file (splice/modifiers.py), on real files.

Small models rewrite a method from its return type or name: `static`, `async`, `override`, a
C++ `template <...>` header were deleted with the old line (audit 3, item 2: `async def fetch`
came back `def fetch` with `await` in its body, and the module no longer imported; a static
C# method in a static class no longer compiled). Where the vendored corpus has no instance of
a language's modifier (Rust `const`, Java `synchronized`, Python `async`), the real file is
used with that one word added to one definition, as `_derived` says.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import Initialise, tm, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer
from tinymem.edits.splice import Replacement, splice
from tinymem.edits.splice.prefix import keep_prefix
from tinymem.symbols import analyze, extract, language_for_path

SESSIONS = ("requests", "src/requests/sessions.py")
CLOSE = b"    def close(self) -> None:\n"
ASYNC_CLOSE = b"    async def close(self) -> None:\n"


def _derived(project: str, path: str, old: bytes, new: bytes) -> bytes:
    data = (CODE / project / path).read_bytes()
    assert data.count(old) == 1
    return data.replace(old, new)


def _real(project: str, path: str) -> bytes:
    return (CODE / project / path).read_bytes()


@dataclass(frozen=True)
class Case:
    path: str
    data: bytes
    name: str
    line: bytes  # the definition's line as the file has it, from its first modifier
    left_out: bytes  # what the block's line leaves out of it
    edit: tuple[bytes, bytes]  # the block's change to the body
    kept: tuple[str, ...]


PYEXC = "src/runtime/PythonException.cs"
OPTION = "include/CLI/Option.hpp"
RUNNER = "src/lib/AbstractChatCompletionRunner.ts"
HEADERS = "lib/web/fetch/headers.js"
CHAIN = "src/chain.rs"
CALLBACK = "framework/src/org/apache/cordova/CallbackContext.java"
CASES = [
    Case(
        PYEXC,
        _real("pythonnet", PYEXC),
        "Python.Runtime.PythonException.FetchCurrent",
        b"internal static Exception FetchCurrent()",
        b"internal static ",
        (b'"No exception is set"', b'"No Python exception is set"'),
        ("`internal`", "`static`"),
    ),
    Case(
        PYEXC,
        _real("pythonnet", PYEXC),
        "Python.Runtime.PythonException.TryGetDispatchInfo",
        b"private static ExceptionDispatchInfo? TryGetDispatchInfo(",
        b"static ",
        (b"if (exception.IsNull) return null;", b"if (exception.IsNull) return default;"),
        ("`static`",),
    ),
    Case(
        PYEXC,
        _real("pythonnet", PYEXC),
        "Python.Runtime.PythonException.GetObjectData",
        b"public override void GetObjectData(",
        b"override ",
        (b"info.AddValue(nameof(Traceback), Traceback);", b'info.AddValue("tb", Traceback);'),
        ("decorators", "`override`"),
    ),
    Case(
        OPTION,
        _real("cli11", OPTION),
        "CLI.OptionBase.copy_to",
        b"template <typename T> void copy_to(T *other) const {",
        b"template <typename T> ",
        (b"other->delimiter(delimiter_);\n", b""),
        ("comments", "`template <typename T>`"),
    ),
    Case(
        OPTION,
        _real("cli11", OPTION),
        "CLI.Option.operator bool",
        b"explicit operator bool() const {",
        b"explicit ",
        (b"!empty() || force_callback_", b"force_callback_ || !empty()"),
        ("comments", "`explicit`"),
    ),
    Case(
        RUNNER,
        _real("openai-node", RUNNER),
        "AbstractChatCompletionRunner._createChatCompletion",
        b"protected async _createChatCompletion(",
        b"protected async ",
        (b"this._connected();", b"this._connected();\n    this._checkConnected?.();"),
        ("`protected`", "`async`"),
    ),
    Case(
        RUNNER,
        _real("openai-node", RUNNER),
        "AbstractChatCompletionRunner.totalUsage",
        b"async totalUsage(): Promise<CompletionUsage> {",
        b"async ",
        (b"await this.done();", b"await this.done();\n    await this.done();"),
        ("`async`",),
    ),
    Case(
        RUNNER,
        _real("openai-node", RUNNER),
        "AbstractChatCompletionRunner._emitFinal",
        b"protected override _emitFinal(",
        b"override ",
        (b"this._emit('totalUsage'", b"void this._emit('totalUsage'"),
        ("`override`",),
    ),
    Case(
        HEADERS,
        _real("undici", HEADERS),
        "Headers.getHeadersGuard",
        b"static getHeadersGuard (o) {",
        b"static ",
        (b"return o.#guard", b"return o?.#guard"),
        ("`static`",),
    ),
    Case(
        CHAIN,
        _derived("anyhow", CHAIN, b"    pub fn new(head", b"    pub const fn new(head"),
        "Chain.new",
        b"pub const fn new(head: &'a (dyn StdError + 'static)) -> Self {",
        b"pub const ",
        (b"Some(head)", b"Option::Some(head)"),
        ("decorators", "`pub`", "`const`"),
    ),
    Case(
        CALLBACK,
        _derived(
            "cordova-android",
            CALLBACK,
            b"    public boolean isFinished() {",
            b"    public final synchronized boolean isFinished() {",
        ),
        "CallbackContext.isFinished",
        b"public final synchronized boolean isFinished() {",
        b"final synchronized ",
        (b"return finished;", b"return this.finished;"),
        ("`final`", "`synchronized`"),
    ),
    Case(
        SESSIONS[1],
        _derived(*SESSIONS, CLOSE, ASYNC_CLOSE),
        "Session.close",
        b"async def close(self) -> None:",
        b"async ",
        (b"v.close()", b"await v.aclose()"),
        ("`async`",),
    ),
]


def _symbol(path: str, data: bytes, name: str) -> tuple[int, int]:
    (sym,) = [s for s in extract(path, data).symbols if s.name == name]
    return sym.start, sym.end


def _line_start(data: bytes, at: int) -> int:
    return data.rfind(b"\n", 0, at) + 1


@pytest.mark.parametrize("column0", [True, False], ids=["column-0", "indented"])
@pytest.mark.parametrize("case", CASES, ids=[c.name.rsplit(".", 1)[-1] for c in CASES])
def test_the_modifiers_a_block_leaves_out_stay(case: Case, column0: bool) -> None:
    """The method alone, from its line without the words left out: the file's line comes
    back byte for byte, the block's body with it, and the file still parses."""
    data = case.data
    start, end = _symbol(case.path, data, case.name)
    at = data.index(case.line, start, end)
    old = data[_line_start(data, at) : end]  # the definition from its line, indented
    assert old.count(case.edit[0]) == 1
    changed = old.replace(case.edit[0], case.edit[1])
    block = changed.replace(case.left_out, b"", 1)
    if column0:
        block = textwrap.dedent(block.decode()).encode()
    result = splice(case.path, data, [Replacement(case.name, block.lstrip())])
    assert result.data == data[:start] + data[start:end].replace(*case.edit) + data[end:]
    assert result.kept == {case.name: case.kept}
    language = language_for_path(case.path)
    assert language is not None
    assert analyze(language, result.data).clean
    if language == "python":
        compile(result.data, case.path, "exec")  # `await` in a def that is not async fails


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.name.rsplit(".", 1)[-1] in ("FetchCurrent", "totalUsage", "close")],
    ids=["csharp", "typescript", "python"],
)
def test_a_member_of_a_class_given_whole_keeps_its_modifiers(case: Case) -> None:
    """The whole class, as models also write it, with one method's modifiers left out: the
    method keeps them (the container's own line was the only one looked at before)."""
    data = case.data
    holder = case.name.rsplit(".", 1)[0]
    start, end = _symbol(case.path, data, holder)
    old = data[start:end]
    changed = old.replace(case.edit[0], case.edit[1])
    block = changed.replace(case.line, case.line.replace(case.left_out, b"", 1), 1)
    assert block != changed
    result = splice(case.path, data, [Replacement(holder, block)])
    assert result.data == data[:start] + changed + data[end:]
    modifiers = tuple(k for k in case.kept if k.startswith("`"))
    assert result.kept == {case.name: modifiers}
    language = language_for_path(case.path)
    assert language is not None and analyze(language, result.data).clean


def test_a_different_word_in_the_same_slot_is_the_blocks() -> None:
    """A block that states its own visibility, or `override` where the file has `virtual`, or
    a body for an `abstract` method: the block's line stands as written."""
    cases = [
        ("java", b"private static int f() {\n", b"public int f() {\n", b"public static int f()"),
        ("csharp", b"public virtual int F()\n", b"public override int F()\n", b"public override"),
        ("cpp", b"static int f() {\n", b"virtual int f() {\n", b"virtual int f()"),
        ("java", b"public abstract int f();\n", b"int f() {\n", b"public int f() {"),
        ("csharp", b"static extern int F();\n", b"int F() {\n", b"static int F() {"),
        ("typescript", b"abstract f(): number;\n", b"f(): number {\n", b"f(): number {"),
        ("typescript", b"get size(): number {\n", b"size(): number {\n", b"size(): number {"),
    ]
    for language, old, new, line in cases:
        out, _ = keep_prefix(language, old + b"}\n", new + b"  return 1;\n}\n")
        assert out.split(b"\n", 1)[0].startswith(line), (language, out)


def test_an_added_word_is_kept_and_the_file_order_is_the_languages() -> None:
    out, kept = keep_prefix("csharp", b"public static int F()\n{\n}\n", b"async int F()\n{\n}\n")
    assert out.startswith(b"public static async int F()") and kept == ["`public`", "`static`"]
    # Rust's order: pub const async unsafe extern "C" fn
    old = b'pub(crate) const unsafe extern "C" fn f() {}\n'
    out, kept = keep_prefix("rust", old, b"unsafe fn f() { g() }\n")
    assert out == b'pub(crate) const unsafe extern "C" fn f() { g() }\n'
    assert kept == ["`pub(crate)`", "`const`", '`extern "C"`']
    # A C++ template header on its own line stays on its own line, as the file has it.
    old = b"template <typename T,\n          typename U = std::vector<T>>\nstatic T f(U u) {}\n"
    out, _ = keep_prefix("cpp", old, b"T f(U u) { return u[0]; }\n")
    assert out == old.replace(b"{}", b"{ return u[0]; }")


def test_a_member_named_like_a_modifier_is_not_one() -> None:
    old = b"static: number = 1;\n"
    assert keep_prefix("typescript", old, b"static: number = 2;\n")[1] == []
    assert keep_prefix("typescript", b"static {\n  x = 1;\n}\n", b"{\n  x = 2;\n}\n")[1] == []
    # ...while a C# tuple type after the modifiers is the rest of the declaration.
    old = b"public static (int, int) Swap(int a, int b)\n{\n    return (b, a);\n}\n"
    out, kept = keep_prefix(
        "csharp", old, old[len(b"public static ") :].replace(b"(b, a)", b"(a, b)")
    )
    assert out == old.replace(b"(b, a)", b"(a, b)") and kept == ["`public`", "`static`"]
    old = b"async def f():\n    pass\n"
    assert keep_prefix("python", old, b"class f:\n    pass\n")[1] == []
    assert keep_prefix("python", old, b"def g():\n    pass\n")[1] == []  # another function


MODIFIERS = {
    # language: (the file's modifiers in the language's order, the rest of the definition).
    # The async ones await: `async` comes back only to a body that still awaits (fb3).
    "java": (
        ["public ", "static ", "final ", "synchronized "],
        "int f(int v) {\n    return v;\n}\n",
    ),
    "csharp": (
        ["internal ", "static ", "async "],
        "Task<int> F(int v)\n{\n    return await G(v);\n}\n",
    ),
    "typescript": (
        ["public ", "static ", "async "],
        "f(v: number): Promise<number> {\n  return await g(v);\n}\n",
    ),
    "javascript": (["export ", "async "], "function f(v) {\n  return await v;\n}\n"),
    "rust": (["pub(crate) ", "const ", "unsafe ", 'extern "C" '], "fn f(v: u32) -> u32 {\n}\n"),
    "cpp": (["template <typename T>\n", "static ", "inline ", "constexpr "], "T f(T v) {\n}\n"),
    "python": (["async "], "def f(v):\n    return await v\n"),
}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(MODIFIERS)), st.data())
def test_any_modifiers_left_out_come_back_in_the_files_order(
    language: str, data: st.DataObject
) -> None:
    words, rest = MODIFIERS[language]
    given_words = [w for w in words if data.draw(st.booleans(), label=w)]
    body = rest.replace("v", "v + 1", 1) if language == "python" else rest.replace("{", "{ ;", 1)
    old = ("".join(words) + rest).encode()
    new = ("".join(given_words) + body).encode()
    out, kept = keep_prefix(language, old, new)
    assert out == ("".join(words) + body).encode()
    left_out = [w for w in words if w not in given_words]
    assert kept == [f"`{' '.join(w.split())}`" for w in left_out]


def test_ask_then_accept_keeps_async_on_a_real_file(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """The audit's case end to end: `async def close` answered with `def close` and an
    `await` in its body. Before, `tm accept` wrote `def close` and the module no longer
    compiled ('await' outside async function)."""
    path = "src/requests/sessions.py"
    data = _derived(*SESSIONS, CLOSE, ASYNC_CLOSE)
    initialised({path: data.decode()})
    start, end = _symbol(path, data, "Session.close")
    old = data[start:end]
    new = old.replace(b"async def", b"def").replace(b"v.close()", b"await v.aclose()")
    server.add(f"{path}\n```python\n{textwrap.dedent('    ' + new.decode())}\n```\n")
    proc = tm_ask(repo, server, "close the adapters with aclose", "--json")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert prop["gates"]["A"] == "pass", prop
    assert any("`async`" in note for note in prop["notes"]), prop["notes"]
    accepted = tm(repo, "accept", prop["id"])
    assert accepted.returncode == 0, accepted.stderr
    written = (repo / path).read_bytes()
    assert written == data.replace(old, old.replace(b"v.close()", b"await v.aclose()"))
    compile(written, path, "exec")
