"""Aligning blocks with the entities they change: the shapes small models write.

Each test gives a file as it is and a block as a model writes it, and asserts which entity
the block changes (or why it is blocked). Real tree-sitter, no mocks.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tinymem.edits.align import align
from tinymem.edits.alignment import Alignment, Evidence
from tinymem.edits.normalise import parse_block

PY = b'''"""Two clients."""

import os


class Session:
    def __init__(self):
        self.open = True

    @property
    def name(self):
        return "s"

    @name.setter
    def name(self, value):
        self._name = value

    def send(self, request):
        return request

    def close(self):
        """Close it."""
        self.open = False


class Adapter:
    def send(self, request):
        return None


def helper(x):
    return x
'''

CLOSE = '''    def close(self):
        """Close it."""
        self.open = False
        self.cookies = None
'''


def targets(a: Alignment) -> list[tuple[str, str]]:
    assert a.blocked is None, a.blocked
    return [(t.op, t.name) for t in a.targets]


def run(code: str, original: bytes = PY, path: str = "app.py", **evidence: object) -> Alignment:
    return align(path, code.encode(), original, Evidence(**evidence))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "code",
    [
        CLOSE,  # with its class indentation
        textwrap.dedent(CLOSE),  # dedented, the way a model copies a hydrated method
        "# app.py\n" + CLOSE,  # a first comment naming the file
        textwrap.dedent(CLOSE).replace("    ", "  "),  # two spaces in a four-space file
        textwrap.dedent(CLOSE).replace("    ", "\t"),  # tabs
        # only the first line dedented (a span cut from its file)
        CLOSE.lstrip(),
        "class Session:\n    ⋮\n" + CLOSE + "    ⋮\n",  # tm's own excerpt, copied back
    ],
)
def test_a_method_alone_modifies_its_member(code: str) -> None:
    assert targets(run(code)) == [("modify", "Session.close")]


def test_decorated_method_with_only_its_first_line_dedented() -> None:
    # What the old hydration showed: the decorator at column 0, the def twelve columns in.
    code = "@property\n            def name(self):\n                return 'n'\n"
    assert targets(run(code)) == [("modify", "Session.name")]


def test_getter_and_setter_of_one_name_are_told_apart_by_signature() -> None:
    code = "@name.setter\ndef name(self, value):\n    self._name = str(value)\n"
    assert targets(run(code)) == [("modify", "Session.name#2")]


def test_two_methods_of_one_class_each_aligned() -> None:
    code = "def __init__(self):\n    self.open = 1\n\ndef close(self):\n    self.open = 0\n"
    assert targets(run(code)) == [("modify", "Session.__init__"), ("modify", "Session.close")]


def test_same_name_in_two_classes_is_blocked_with_the_candidates() -> None:
    a = run("def send(self, request):\n    return request.prepare()\n")
    assert a.targets == [] and a.blocked is not None
    assert "ambiguous" in a.blocked and "Session.send" in a.blocked and "Adapter.send" in a.blocked
    assert "tm ask" in a.blocked  # the command that resolves it


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [
        ({"qualified": frozenset({"Adapter.send"})}, "Adapter.send"),  # named in the request
        ({"hydrated": frozenset({"Session.send"})}, "Session.send"),  # shown in the prompt
        ({"hydrated": frozenset({"Adapter"})}, "Adapter.send"),  # its class shown in full
    ],
)
def test_same_name_decided_by_evidence(evidence: dict[str, frozenset[str]], expected: str) -> None:
    code = "def send(self, request):\n    return request.prepare()\n"
    assert targets(run(code, **evidence)) == [("modify", expected)]


def test_the_blocks_own_class_line_decides() -> None:
    code = "class Session:\n    def send(self, request):\n        return 1\n"
    assert targets(run(code)) == [("modify", "Session.send")]
    # Adapter has no other member: its class line and `send` are all of it, replaced whole.
    whole = "class Adapter:\n    def send(self, request):\n        return 1\n"
    assert targets(run(whole)) == [("modify", "Adapter")]


def test_request_evidence_comes_before_the_hydrated_entity() -> None:
    code = "def send(self, request):\n    return 2\n"
    a = run(code, qualified=frozenset({"Adapter.send"}), hydrated=frozenset({"Session.send"}))
    assert targets(a) == [("modify", "Adapter.send")]


def test_a_method_no_class_has_is_blocked_never_added_at_top_level() -> None:
    a = run("def flush(self):\n    pass\n")
    assert a.targets == [] and a.blocked is not None
    assert "written as a method" in a.blocked and "flush" in a.blocked


def test_a_new_function_is_added_at_top_level() -> None:
    assert targets(run("def other(y):\n    return y\n")) == [("add", "other")]


def test_a_new_method_inside_a_class_excerpt_is_added_to_that_class() -> None:
    code = "class Session:\n    def flush(self):\n        pass\n"
    assert targets(run(code)) == [("add", "Session.flush")]


def test_a_class_given_with_all_its_members_is_replaced_whole() -> None:
    text = PY.decode()
    adapter = text[text.index("class Adapter:") : text.index("\n\n\ndef helper")]
    assert targets(run(adapter + "\n")) == [("modify", "Adapter")]


def test_the_whole_file_is_a_whole_file() -> None:
    a = run(PY.decode().replace("return x", "return -x"))
    assert a.whole_file and ("modify", "helper") in targets(a)


def test_a_file_with_one_method_missing_is_not_a_whole_file() -> None:
    text = PY.decode()
    start = text.index("    def send(self, request):\n        return request")
    end = text.index("    def close")
    a = run(text[:start] + text[end:])
    assert not a.whole_file
    assert ("modify", "Session.send") not in targets(a)  # left out, so kept as it is


def test_lines_outside_the_definitions_are_reported() -> None:
    a = run("import time\n\n" + textwrap.dedent(CLOSE))
    assert targets(a) == [("modify", "Session.close")]
    assert any("not applied" in n and "import time" in n for n in a.notes)


def test_a_broken_elided_class_around_a_complete_function() -> None:
    code = "def helper(x):\n    return x * 2\n\n\nclass Session:\n    # ... rest unchanged\n"
    a = run(code)
    assert a.problem is None and targets(a) == [("modify", "helper")]
    assert any("does not parse outside" in n for n in a.notes)


def test_a_syntax_error_inside_the_target_stays() -> None:
    a = run("def close(self):\n    self.open = (\n")
    assert a.problem is not None


# --- other languages -------------------------------------------------------------------------

RUST = b"""pub struct Chain { n: usize }

impl Iterator for Chain {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, None)
    }
}

impl DoubleEndedIterator for Chain {
    fn next_back(&mut self) -> Option<usize> {
        None
    }
}

impl ExactSizeIterator for Chain {
    fn len(&self) -> usize {
        self.n
    }
}

impl Chain {
    fn len(&self) -> usize {
        0
    }
}
"""


def test_rust_fn_alone_modifies_its_impl_member() -> None:
    code = "fn size_hint(&self) -> (usize, Option<usize>) {\n    (self.n, Some(self.n))\n}\n"
    assert targets(run(code, RUST, "src/chain.rs")) == [("modify", "Chain.size_hint")]


def test_rust_same_name_in_two_impls_decided_by_the_impl_header() -> None:
    code = "impl ExactSizeIterator for Chain {\n    fn len(&self) -> usize {\n        1\n    }\n}\n"
    assert targets(run(code, RUST, "src/chain.rs")) == [("modify", "Chain.len")]
    inherent = "impl Chain {\n    fn len(&self) -> usize {\n        2\n    }\n}\n"
    assert targets(run(inherent, RUST, "src/chain.rs")) == [("modify", "Chain.len#2")]


TS = b"""export class Ky {
\tstatic create(input: string): Ky {
\t\treturn new Ky(input);
\t}

\tconstructor(private readonly input: string) {}

\tget size(): number {
\t\treturn 1;
\t}

\tset size(value: number) {
\t\tthis.input.length;
\t}

\tasync fetch(): Promise<void> {
\t\tawait this.#retry();
\t}

\t#isJsonContentType(type: string): boolean {
\t\treturn type.includes('json');
\t}

\tasync #retry(): Promise<void> {}
}
"""


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("#isJsonContentType(type: string): boolean {\n\treturn /json/.test(type);\n}\n",
         "Ky.#isJsonContentType"),
        ("    static create(input: string): Ky {\n        return new Ky(input.trim());\n    }\n",
         "Ky.create"),
        ("async fetch(): Promise<void> {\n  await this.#retry();\n  return;\n}\n", "Ky.fetch"),
        ("set size(value: number) {\n\tconsole.log(value);\n}\n", "Ky.size#2"),
    ],
)  # fmt: skip
def test_typescript_members_alone(code: str, expected: str) -> None:
    assert targets(run(code, TS, "source/core/Ky.ts")) == [("modify", expected)]


JAVA = b"""package a;

public class Store {
    public int get(int id) {
        return id;
    }

    public int get(String key) {
        return key.length();
    }

    private void reset() {
    }
}
"""


def test_java_method_alone_and_overloads_by_signature() -> None:
    code = "public int get(String key) {\n    return key.hashCode();\n}\n"
    assert targets(run(code, JAVA, "src/Store.java")) == [("modify", "Store.get#2")]
    changed = "public int get(String key, int d) {\n    return d;\n}\n"
    a = run(changed, JAVA, "src/Store.java")
    assert a.blocked is not None and "Store.get#2" in a.blocked  # signature changed: ambiguous


CSHARP = b"""namespace Shop
{
    public class Cart
    {
        public void Add(int id) { }

        public int Count() => 0;
    }
}
"""


def test_csharp_method_alone() -> None:
    code = "public int Count()\n{\n    return 1;\n}\n"
    assert targets(run(code, CSHARP, "Cart.cs")) == [("modify", "Shop.Cart.Count")]


RUBY = b"""class Response
  def initialize(body)
    @body = body
  end

  def finish
    @body
  end
end
"""


def test_ruby_def_alone_in_a_file_of_classes() -> None:
    code = "def finish\n  @body.to_s\nend\n"
    assert targets(run(code, RUBY, "lib/response.rb")) == [("modify", "Response.finish")]
    a = run("def close\n  nil\nend\n", RUBY, "lib/response.rb")
    assert a.blocked is not None and "written as a method" in a.blocked


CPP = b"""#pragma once
namespace nl {
class lexer {
  public:
    int get() const {
        return current;
    }
  private:
    int current = 0;
};
}
"""


def test_cpp_inline_member_alone() -> None:
    code = "int get() const {\n    return current + 1;\n}\n"
    assert targets(run(code, CPP, "lexer.hpp")) == [("modify", "nl.lexer.get")]


GO = b"""package gin

import "net/http"

type Context struct{ w http.ResponseWriter }

func (c *Context) JSON(code int) {
\tc.w.WriteHeader(code)
}
"""


def test_go_method_with_package_and_imports_around_it() -> None:
    code = (
        'package gin\n\nimport "net/http"\n\nfunc (c *Context) JSON(code int) {\n'
        "\tc.w.WriteHeader(code + 0)\n}\n"
    )
    a = run(code, GO, "context.go")
    assert targets(a) == [("modify", "Context.JSON")]


def test_normalise_reports_line_numbers_of_the_block_as_written() -> None:
    parsed = parse_block("app.py", b"# app.py\n\ndef f(:\n    pass\n")
    assert parsed.problem is not None and "line 3" in parsed.problem


LICENSED = (
    b"# Copyright 2024 Someone. Licensed under the MIT licence.\n\n\ndef helper(x):\n    return x\n"
)


def test_the_only_function_given_alone_keeps_the_licence_header() -> None:
    a = run("def helper(x):\n    return -x\n", LICENSED)
    assert not a.whole_file and targets(a) == [("modify", "helper")]


def test_the_file_given_with_its_header_is_the_whole_file() -> None:
    a = run(LICENSED.decode().replace("return x", "return -x"), LICENSED)
    assert a.whole_file


# --- a parse error outside the changed definitions ------------------------------------------
# Found by bench/bench_repair.py: a block whose broken line is a definition's header was taken
# without that definition (its change silently dropped), or with a "definition" the parser's
# error recovery read out of its body.

REAL = Path(__file__).resolve().parents[1] / "data" / "realcode"


def test_a_broken_method_header_blocks_the_block_not_just_that_method() -> None:
    path = "src/requests/sessions.py"
    before = (REAL / "requests" / path).read_bytes()
    block = (
        b"    def __enter__self) -> Self:\n"
        b'        log.debug("session entered")\n'
        b"        return self\n"
        b"\n"
        b"    def close(self) -> None:\n"
        b'        """Closes all adapters and as such the session"""\n'
        b"        for v in self.adapters.values():\n"
        b"            v.close()\n"
    )
    result = align(path, block, before, Evidence())
    assert result.problem is not None and "line 1" in result.problem


def test_error_recovery_never_invents_the_member_it_changes() -> None:
    path = "src/lib/AbstractChatCompletionRunner.ts"
    before = (REAL / "openai-node" / path).read_bytes()
    block = (
        b"export class AbstractChatCompletionRunner<\n"
        b"  EventTypes extends AbstractChatCompletionRunnerEvents,\n"
        b"  ParsedT,\n"
        b"> extends EventStream<EventTypes> {\n"
        b"  // ...\n"
        b"\n"
        b"  async finalMessage): Promise<ChatCompletionMessage> {\n"
        b"    if (!this.ended) await this.done();\n"
        b"    return this.#getFinalMessage();\n"
        b"  }\n"
        b"\n"
        b"  // ...\n"
        b"}\n"
    )
    result = align(path, block, before, Evidence())
    # Blocked as a whole: the recovered `#getFinalMessage` must never reach a splice.
    assert result.problem is not None and "line 7" in result.problem


def test_a_container_with_none_of_its_members_is_blocked_at_ask_time() -> None:
    # It used to pass as "the file itself" (add @file) and be refused only at accept.
    path = "src/requests/sessions.py"
    before = (REAL / "requests" / path).read_bytes()
    block = (
        b"class Session(SessionRedirectMixin):\n"
        b"    # ... existing methods ...\n"
        b"\n"
        b"    # ... existing code ...\n"
        b'        """Forget cookies and adapters."""\n'
        b"        self.cookies.clear()\n"
    )
    result = align(path, block, before, Evidence())
    assert result.blocked is not None and not result.targets
