"""A modifier the block removed stays removed; modifiers go on the member they belong to.

Review rev4 of the "keep the modifiers a block leaves out" fix (fix3b): leaving a word out is
also how a block removes it. `async def fetch` rewritten as `def fetch(...): return
requests.get(url)` was written async again (callers got a coroutine), a C# `async` came back
onto a method returning `Task.FromResult`, a C++ `template <typename T>` header onto
`double twice(double v)` (g++ refused it). Overloads were paired by position (`f`, `f#2`),
so `static` went onto the overload the block put first; and a TS abstract method whose
parameter types hold `=>` or `{` was read as having a body, so implementing it was refused.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import Initialise, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer
from tinymem.edits.splice import Replacement, splice
from tinymem.edits.splice.prefix import keep_prefix
from tinymem.symbols import analyze, extract, language_for_path

SESSIONS = "src/requests/sessions.py"
RUNNER = "src/lib/AbstractChatCompletionRunner.ts"
OPTION = "include/CLI/Option.hpp"


def _symbol(path: str, data: bytes, name: str) -> tuple[int, int]:
    (sym,) = [s for s in extract(path, data).symbols if s.name == name]
    return sym.start, sym.end


def _clean(path: str, data: bytes) -> None:
    language = language_for_path(path)
    assert language is not None and analyze(language, data).clean
    if language == "python":
        compile(data, path, "exec")


def _async_sessions() -> bytes:
    data = (CODE / "requests" / SESSIONS).read_bytes()
    old = b"    def close(self) -> None:\n"
    assert data.count(old) == 1
    return data.replace(old, b"    async def close(self) -> None:\n")


# ---------------------------------------------------------------- 1. async / template


def test_async_is_not_put_back_on_a_body_that_no_longer_awaits() -> None:
    """requests' Session.close made async, then given back synchronous: written as given."""
    data = _async_sessions()
    start, end = _symbol(SESSIONS, data, "Session.close")
    old = data[start:end]
    assert old.startswith(b"async def close") and b"await" not in old
    block = old.replace(b"async def", b"def")
    result = splice(SESSIONS, data, [Replacement("Session.close", block)])
    assert result.data == data[:start] + block + data[end:]
    assert result.kept == {}
    _clean(SESSIONS, result.data)


@pytest.mark.parametrize(
    ("body", "kept"),
    [
        ("await v.aclose()", True),
        ("async with v.lock:\n                v.close()", True),
        ("v.close()\n        [x async for x in self.pending]", True),
        # An await inside a nested function is that function's, not close's.
        ("async def shut():\n                await v.aclose()\n            run(shut())", False),
        ("v.close()  # await v.aclose() once the adapters are async", False),
        ('v.close("await")', False),
    ],
    ids=["await", "async-with", "async-comprehension", "nested-def", "comment", "string"],
)
def test_async_comes_back_only_when_the_own_body_awaits(body: str, kept: bool) -> None:
    data = _async_sessions()
    start, end = _symbol(SESSIONS, data, "Session.close")
    old = data[start:end]
    block = old.replace(b"async def", b"def").replace(b"v.close()", body.encode())
    result = splice(SESSIONS, data, [Replacement("Session.close", block)])
    written = block.replace(b"def", b"async def", 1) if kept else block
    assert result.data == data[:start] + written + data[end:]
    assert result.kept == ({"Session.close": ("`async`",)} if kept else {})


def test_a_class_given_whole_with_a_sync_wrapper_loses_async() -> None:
    """The reviewer's sync-wrapper form: `fetch` calls `asyncio.run(self._fetch(url))`."""
    data = b"""import asyncio


class Client:
    async def fetch(self, url):
        resp = await self.session.get(url)
        return resp

    def close(self):
        pass
"""
    block = b"""class Client:
    def fetch(self, url):
        return asyncio.run(self._fetch(url))

    async def _fetch(self, url):
        resp = await self.session.get(url)
        return resp

    def close(self):
        pass
"""
    result = splice("src/client.py", data, [Replacement("Client", block)])
    assert result.data == data.replace(data[data.index(b"class") :], block)
    _clean("src/client.py", result.data)


def test_ts_async_on_a_real_file_follows_the_body() -> None:
    """openai-node's `async totalUsage(): Promise<CompletionUsage>`: given without `async`,
    without its `await` and returning `CompletionUsage`, it stays synchronous; given without
    `async` but still awaiting, or still declaring the `Promise` its plain return value meets
    only through `async` (the reply corpus's ts-openai-06), `async` comes back."""
    data = (CODE / "openai-node" / RUNNER).read_bytes()
    name = "AbstractChatCompletionRunner.totalUsage"
    start, end = _symbol(RUNNER, data, name)
    old = data[start:end]
    assert old.startswith(b"async totalUsage(): Promise<CompletionUsage> {")
    assert old.count(b"await this.done();") == 1
    promised = old.replace(b"async ", b"", 1).replace(b"await this.done();", b"this.done();")
    sync = promised.replace(b"Promise<CompletionUsage>", b"CompletionUsage", 1)
    result = splice(RUNNER, data, [Replacement(name, sync)])
    assert result.data == data[:start] + sync + data[end:] and result.kept == {}
    for block in (old.replace(b"async ", b"", 1), promised):
        result = splice(RUNNER, data, [Replacement(name, block)])
        assert result.data == data[:start] + b"async " + block + data[end:]
        assert result.kept == {name: ("`async`",)}


@pytest.mark.parametrize(
    ("language", "old", "new", "first"),
    [
        (
            "csharp",
            b"public async Task<int> CountAsync()\n{\n    return await Task.FromResult(1);\n}\n",
            b"public Task<int> CountAsync()\n{\n    return Task.FromResult(1);\n}\n",
            b"public Task<int> CountAsync()",
        ),
        (
            "csharp",
            b"public async Task<int> CountAsync()\n{\n    return await Task.FromResult(1);\n}\n",
            b"public Task<int> CountAsync()\n{\n    return await Task.FromResult(2);\n}\n",
            b"public async Task<int> CountAsync()",
        ),
        (
            "csharp",  # the lambda's await is the lambda's
            b"public async Task Run()\n{\n    await Go();\n}\n",
            b"public Task Run()\n{\n    return Task.Run(async () => await Go());\n}\n",
            b"public Task Run()",
        ),
        (
            "javascript",
            b"async function load(u) {\n  return await get(u);\n}\n",
            b"function load(u) {\n  return get(u);\n}\n",
            b"function load(u)",
        ),
        (
            "javascript",
            b"async function load(u) {\n  return await get(u);\n}\n",
            b"function load(u) {\n  for await (const x of get(u)) use(x);\n}\n",
            b"async function load(u)",
        ),
        (
            "rust",
            b"pub async fn load(u: &str) -> u8 {\n    get(u).await\n}\n",
            b"pub fn load(u: &str) -> u8 {\n    block_on(async move { get(u).await })\n}\n",
            b"pub fn load(u: &str)",
        ),
        (
            "rust",
            b"pub async fn load(u: &str) -> u8 {\n    get(u).await\n}\n",
            b"pub fn load(u: &str) -> u8 {\n    get(u).await + 1\n}\n",
            b"pub async fn load(u: &str)",
        ),
    ],
    ids=[
        "cs-dropped",
        "cs-still-awaits",
        "cs-lambda",
        "js-dropped",
        "js-for-await",
        "rust-async-block",
        "rust-still-awaits",
    ],
)
def test_async_follows_the_blocks_own_body(
    language: str, old: bytes, new: bytes, first: bytes
) -> None:
    out, _ = keep_prefix(language, old, new)
    assert out.startswith(first), out


HPP = b"""#pragma once

namespace geo {

template <typename T>
T twice(T v) {
    return v + v;
}

inline int thrice(int v) {
    return 3 * v;
}

}  // namespace geo
"""


def test_a_template_header_is_not_put_back_on_a_plain_function() -> None:
    """`T twice(T v)` given back as `double twice(double v)`: no `template` line above it
    (g++: a template parameter list for a function that uses none is an error)."""
    block = b"double twice(double v) {\n    return v + v;\n}\n"
    result = splice("src/m.hpp", HPP, [Replacement("geo.twice", block)])
    assert result.data == HPP.replace(
        b"template <typename T>\nT twice(T v)", b"double twice(double v)"
    )
    assert result.kept == {}


def test_a_template_header_comes_back_when_the_block_names_its_parameter() -> None:
    """CLI11's `template <typename T> void copy_to(T *other) const`: a block that still names
    `T` gets the header back; one that takes an `Option *` is a plain member."""
    data = (CODE / "cli11" / OPTION).read_bytes()
    name = "CLI.OptionBase.copy_to"
    start, end = _symbol(OPTION, data, name)
    old = data[start:end]
    at = old.index(b"template <typename T> ")
    typed = old[at:].replace(b"template <typename T> ", b"", 1)
    result = splice(OPTION, data, [Replacement(name, typed)])
    assert result.data == data and "`template <typename T>`" in result.kept[name]
    plain = typed.replace(b"(T *other)", b"(Option *other)")
    result = splice(OPTION, data, [Replacement(name, plain)])
    assert "`template <typename T>`" not in result.kept.get(name, ())
    assert result.data == data[: start + at] + plain + data[end:]
    _clean(OPTION, result.data)


# ---------------------------------------------------------------- 2. overloads

UTIL = b"""package a;

public class Util {
    private int offset = 1;

    public static int f(int x) {
        return x + 1;
    }

    public int f(String s) {
        return s.length() + offset;
    }

    public int g() {
        return 2;
    }
}
"""
STATIC_F = b"""    public static int f(int x) {
        return x + 1;
    }
"""
STRING_F = b"""    public int f(String s) {
        return s.length() + offset;
    }
"""
DOUBLE_F = b"""    public int f(double d) {
        return (int) d + offset;
    }
"""


def _whole(data: bytes) -> bytes:
    return data[data.index(b"public class") :].rstrip(b"\n")


def _util(block: bytes) -> bytes:
    result = splice("src/a/Util.java", UTIL, [Replacement("Util", _whole(block))])
    _clean("src/a/Util.java", result.data)
    return result.data


def test_static_stays_on_its_overload_when_a_new_one_comes_first() -> None:
    block = UTIL.replace(STATIC_F, DOUBLE_F + b"\n" + STATIC_F)
    assert _util(block) == block


def test_static_stays_on_its_overload_when_the_two_are_swapped() -> None:
    block = UTIL.replace(STATIC_F + b"\n" + STRING_F, STRING_F + b"\n" + STATIC_F)
    assert _util(block) == block


def test_an_overload_that_left_static_out_gets_it_back_by_its_parameters() -> None:
    """The fix3b case still holds with overloads: paired by `(int x)`, not by position."""
    sans = STATIC_F.replace(b"static ", b"")
    block = UTIL.replace(STATIC_F + b"\n" + STRING_F, DOUBLE_F + b"\n" + STRING_F + b"\n" + sans)
    assert _util(block) == block.replace(sans, STATIC_F)


# ---------------------------------------------------------------- 3. abstract


EMITTER = b"""export abstract class Emitter {
  abstract onChange(cb: (value: number) => void): void;

  protected abstract configure(opts: { verbose: boolean }): void;

  emit(value: number): void {
    console.log(value);
  }
}
"""


@pytest.mark.parametrize(
    ("name", "declared", "block"),
    [
        (
            "Emitter.onChange",
            b"abstract onChange(cb: (value: number) => void): void;",
            b"onChange(cb: (value: number) => void): void {\n  this.listeners.push(cb);\n}",
        ),
        (
            "Emitter.configure",
            b"protected abstract configure(opts: { verbose: boolean }): void;",
            b"protected configure(opts: { verbose: boolean }): void {\n"
            b"  this.verbose = opts.verbose;\n}",
        ),
    ],
    ids=["arrow-type", "object-type"],
)
def test_an_abstract_method_with_arrow_or_object_parameter_types_is_implemented(
    name: str, declared: bytes, block: bytes
) -> None:
    result = splice("src/emitter.ts", EMITTER, [Replacement(name, block)])
    placed = block.replace(b"\n", b"\n  ")
    assert result.data == EMITTER.replace(declared, placed)
    assert result.kept == {}
    _clean("src/emitter.ts", result.data)


def test_a_declaration_given_without_abstract_keeps_it_despite_its_parameter_types() -> None:
    old = b"abstract onChange(cb: (value: number) => void): { ok: boolean };\n"
    new = b"onChange(cb: (value: number) => void, n: number): { ok: boolean };\n"
    out, kept = keep_prefix("typescript", old, new)
    assert out == b"abstract " + new and kept == ["`abstract`"]


# ---------------------------------------------------------------- end to end


def test_ask_accept_writes_the_synchronous_fetch(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    """The reviewer's e_async case: `tm ask --accept` wrote `async def fetch` returning
    `requests.get(url)`; now `def fetch` is written as the reply gives it."""
    path = "src/client.py"
    data = (
        "import requests\n\n\nclass Client:\n    async def fetch(self, url):\n"
        "        resp = await self.session.get(url)\n        return resp\n"
    )
    initialised({path: data})
    reply = "def fetch(self, url):\n    return requests.get(url)\n"
    server.add(f"Here is the synchronous version:\n\n{path}\n```python\n{reply}```\n")
    proc = tm_ask(repo, server, "make Client.fetch synchronous using requests", "--accept")
    assert proc.returncode == 0, proc.stderr
    written = (repo / path).read_text()
    assert written == data.replace(
        data[data.index("    async def") :], textwrap.indent(reply, "    ")
    )
    assert "async" not in written
    compile(written, path, "exec")
