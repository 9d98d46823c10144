"""Python text that parses but does not compile (audit round 3, item 2): `ast.parse` takes
`await` outside an async function, `return` outside a function...; Gate A and the splicer's
check of a merged text refuse it."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import Initialise, tm_ask
from tests.modelserver import ModelServer
from tinymem.acceptgate import gate_a_reason
from tinymem.edits.splice import Replacement, SpliceError, splice
from tinymem.edits.splice.syntax import compile_problem
from tinymem.proposalrecords import Proposal

REFUSED = {
    "await in a def": b"def f():\n    await g()\n",
    "return at module level": b"x = 1\nreturn x\n",
    "yield in a class body": b"class C:\n    yield 1\n",
    "nonlocal at module level": b"nonlocal x\n",
    "duplicate argument": b"def f(a, a):\n    pass\n",
    "break outside a loop": b"def f():\n    break\n",
    "async for in a def": b"def f():\n    async for x in y:\n        pass\n",
}


def test_compile_problem_refuses_what_the_compiler_refuses() -> None:
    for name, text in REFUSED.items():
        ast.parse(text)  # the parser alone accepts each
        assert compile_problem("python", b"", text) is not None, name
        assert compile_problem("python", None, text) is not None, name
    assert compile_problem("python", None, b"async def f():\n    await g()\n") is None
    assert compile_problem("python", None, b"x = ...\nprint(x, 'a' is 'a')\n") is None
    # Not Python, or a file that did not compile already: not held to it.
    assert compile_problem("javascript", None, b"return 1\n") is None
    assert compile_problem("python", b"return 0\n", b"return 1\n") is None


CLIENT = (
    b"class Client:\n    async def fetch(self, url):\n        resp = await self.get(url)\n"
    b"        return resp\n"
)


def test_a_splice_that_leaves_await_outside_async_is_refused() -> None:
    # The block leaves `async` out; keeping the file's is branch fix3b's (splice/prefix.py):
    # until then the merged text is refused, never written.
    block = b"def fetch(self, url):\n    resp = await self.get(url)\n    return resp.text\n"
    try:
        result = splice("src/client.py", CLIENT, [Replacement("Client.fetch", block)])
    except SpliceError as exc:
        assert "'await' outside async function at line 3" in str(exc)
    else:
        assert compile_problem("python", CLIENT, result.data) is None, result.data


def test_ask_accept_writes_no_await_outside_async(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # A function the file has as a plain `def`, given an `await`: no `async` of the file's to
    # keep (a block leaving out the file's `async` gets it back: test_modifiers.py).
    initialised({"src/client.py": SYNC_CLIENT.decode()})
    server.add("src/client.py\n```python\ndef close(self):\n    await self.session.aclose()\n```\n")
    proc = tm_ask(repo, server, "make Client.close close the session", "--accept", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    assert "'await' outside async function" in proc.stdout + proc.stderr
    assert (repo / "src/client.py").read_bytes() == SYNC_CLIENT


SYNC_CLIENT = CLIENT + b"\n    def close(self):\n        self.session = None\n"


def test_accept_gate_a_refuses_a_merged_text_that_does_not_compile() -> None:
    # What accept writes is judged again (a whole file's complete symbols, an edit applied
    # again to the file as it is now): the same rule as at ask time.
    p = Proposal("p1", "e1", "src/client.py", "whole-file", "CONFIRMED", None, [], None, None)
    dropped = CLIENT.replace(b"async def", b"def")
    reason = gate_a_reason("src/client.py", CLIENT, dropped, {}, p, False)
    assert reason == "the merged file does not compile: 'await' outside async function at line 3"
    assert gate_a_reason("src/client.py", CLIENT, CLIENT, {}, p, False) is None
    # A file that did not compile before is not held to it.
    assert gate_a_reason("src/client.py", dropped, dropped, {}, p, False) is None
