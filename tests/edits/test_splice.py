"""tinymem.edits.splice: exact byte-for-byte splicing with real tree-sitter (no mocks).

Every literal case also goes through `_assert_outside_unchanged`: the original with the
replaced spans cut out must equal the result with the new spans (and, for insertions, the new
span with the line breaks and indentation that introduce it) cut out.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tinymem.edits.splice import (
    Replacement,
    SpliceError,
    SpliceResult,
    delete_symbols,
    splice,
    whole_file_symbols,
)
from tinymem.errors import TinymemError
from tinymem.symbols import Symbol, analyze, extract, language_for_path

R = Replacement


# --------------------------------------------------------------------------- helpers


def _parses(path: str, data: bytes) -> bool:
    language = language_for_path(path)
    assert language is not None
    if not analyze(language, data).clean:
        return False
    if language == "python":  # tree-sitter-python accepts empty blocks and bad indentation
        try:
            compile(data, path, "exec", flags=0x400, dont_inherit=True)  # PyCF_ONLY_AST
        except SyntaxError:
            return False
    return True


def _symbols(path: str, data: bytes) -> tuple[Symbol, ...]:
    """`extract(...).symbols` with offsets into `data`, blind to a leading BOM: with a BOM,
    tinymem.symbols does not attach a doc comment on the first line to the definition below
    it (a bug reported separately), which would make a moved definition look changed."""
    bom = b"\xef\xbb\xbf"
    if not data.startswith(bom):
        return extract(path, data).symbols
    return tuple(
        Symbol(s.name, s.kind, s.start + 3, s.end + 3, s.parent)
        for s in extract(path, data[3:]).symbols
    )


def _outermost(symbols: list[Symbol]) -> list[Symbol]:
    return [
        s
        for s in symbols
        if not any(
            o is not s
            and o.start <= s.start
            and s.end <= o.end
            and (o.start, o.end) != (s.start, s.end)
            for o in symbols
        )
    ]


def _cut(data: bytes, spans: list[tuple[int, int, bytes]], *, eat_lead: set[bytes]) -> bytes:
    """`data` with each span replaced by its marker; for markers in `eat_lead` also the
    indentation and line breaks right before the span (an insertion's separator)."""
    out = bytearray()
    pos = 0
    for start, end, marker in sorted(spans):
        piece = data[pos:start]
        if marker in eat_lead:  # an insertion: it and its separator vanish entirely
            out += piece.rstrip(b" \t").rstrip(b"\r\n")
        else:
            out += piece + b"\x00" + marker + b"\x00"
        pos = end
    out += data[pos:]
    return bytes(out)


def _assert_outside_unchanged(path: str, original: bytes, result: SpliceResult) -> None:
    before = {s.name: s for s in _symbols(path, original)}
    after = {s.name: s for s in _symbols(path, result.data)}
    replaced = _outermost([before[n] for n in result.replaced if n in before])
    names = {s.name for s in replaced}
    old = [(s.start, s.end, s.name.encode()) for s in replaced]
    new_replaced = [after[n] for n in names]
    added = [after[n] for n in result.added]
    new_spans = _outermost(new_replaced + added)
    new = [(s.start, s.end, s.name.encode()) for s in new_spans]
    inserted = {s.name.encode() for s in new_spans if s.name not in names}
    assert _cut(original, old, eat_lead=set()) == _cut(result.data, new, eat_lead=inserted)


def _check(path: str, original: bytes, reps: list[Replacement], expected: bytes) -> SpliceResult:
    result = splice(path, original, reps)
    assert result.data == expected, result.data
    assert _parses(path, result.data)
    _assert_outside_unchanged(path, original, result)
    return result


# --------------------------------------------------------------------------- Python

PY = b"""import os

# Fetches a user.
@cache
def fetch_user(uid):
    return os.environ[uid]


class Client:
    \"\"\"A client.\"\"\"

    # The getter.
    @property
    def get(self):
        return 1

    class Inner:
        def deep(self):
            pass


LIMIT = 10

if __name__ == "__main__":
    fetch_user("x")
"""


def test_python_replace_top_level_function_keeps_everything_else() -> None:
    text = (
        b"# Fetches a user, twice.\n@cache\ndef fetch_user(uid):\n    return os.environ[uid] * 2\n"
    )
    result = _check(
        "app.py",
        PY,
        [R("fetch_user", text)],
        PY.replace(
            b"# Fetches a user.\n@cache\ndef fetch_user(uid):\n    return os.environ[uid]\n",
            text,
        ),
    )
    assert result.replaced == ("fetch_user",)
    assert result.added == ()
    assert result.placements == {"fetch_user": "replaced in place"}


def test_python_replace_decorated_method_written_dedented() -> None:
    text = (
        b"# The getter.\n@property\ndef get(self):\n    if self:\n        return 2\n    return 3\n"
    )
    _check(
        "app.py",
        PY,
        [R("Client.get", text)],
        PY.replace(
            b"    # The getter.\n    @property\n    def get(self):\n        return 1\n",
            b"    # The getter.\n    @property\n    def get(self):\n        if self:\n"
            b"            return 2\n        return 3\n",
        ),
    )


@pytest.mark.parametrize(
    "text",
    [
        # as `extract` cuts the span: first line without its indentation
        b"# The getter.\n    @property\n    def get(self):\n        return 1",
        # as written inside the class
        b"    # The getter.\n    @property\n    def get(self):\n        return 1\n",
        # dedented to column 0, with CRLF and a stray leading blank line
        b"\r\n# The getter.\r\n@property\r\ndef get(self):\r\n    return 1\r\n",
    ],
    ids=["span-cut", "indented", "dedented-crlf"],
)
def test_python_method_with_its_own_text_is_byte_identical(text: bytes) -> None:
    result = _check("app.py", PY, [R("Client.get", text)], PY)
    assert result.replaced == ("Client.get",)


def test_python_nested_class_method() -> None:
    _check(
        "app.py",
        PY,
        [R("Client.Inner.deep", b"def deep(self):\n    return 'deep'\n")],
        PY.replace(
            b"        def deep(self):\n            pass\n",
            b"        def deep(self):\n            return 'deep'\n",
        ),
    )


def test_python_new_symbols_are_placed_by_the_file_conventions() -> None:
    result = _check(
        "app.py",
        PY,
        [
            R("Client.post", b"def post(self, body):\n    return body\n"),
            R("Client.Inner.deeper", b"def deeper(self):\n    pass\n"),
            R("retry", b"def retry(n):\n    return n\n"),
            R("parse", b"def parse(s):\n    return s\n", after="fetch_user"),
        ],
        b"""import os

# Fetches a user.
@cache
def fetch_user(uid):
    return os.environ[uid]


def parse(s):
    return s


class Client:
    \"\"\"A client.\"\"\"

    # The getter.
    @property
    def get(self):
        return 1

    class Inner:
        def deep(self):
            pass

        def deeper(self):
            pass

    def post(self, body):
        return body


LIMIT = 10


def retry(n):
    return n

if __name__ == "__main__":
    fetch_user("x")
""",
    )
    assert result.added == ("Client.post", "Client.Inner.deeper", "retry", "parse")
    assert result.placements == {
        "Client.post": "inside class Client, after Inner",
        "Client.Inner.deeper": "inside class Client.Inner, after deep",
        "retry": "after LIMIT",
        "parse": "after fetch_user",
    }


def test_python_new_symbols_chain_after_each_other_and_unknown_after_falls_back() -> None:
    src = b"def a():\n    pass\n\n\ndef b():\n    pass\n"
    result = _check(
        "m.py",
        src,
        [
            R("x", b"def x():\n    pass\n", after="a"),
            R("y", b"def y():\n    pass\n", after="x"),
            R("z", b"def z():\n    pass\n", after="no_such_symbol"),
        ],
        b"def a():\n    pass\n\n\ndef x():\n    pass\n\n\ndef y():\n    pass\n\n\n"
        b"def b():\n    pass\n\n\ndef z():\n    pass\n",
    )
    assert result.placements == {"x": "after a", "y": "after x", "z": "end of file"}


def test_python_new_member_of_a_class_without_members() -> None:
    result = _check(
        "m.py",
        b'class E:\n    """Doc."""\n\n\ndef f():\n    pass\n',
        [R("E.m", b"def m(self):\n    return 1\n")],
        b'class E:\n    """Doc."""\n\n    def m(self):\n        return 1\n\n\ndef f():\n    pass\n',
    )
    assert result.placements == {"E.m": "inside class E, at the end of its body"}


def test_python_member_gap_follows_the_class() -> None:
    src = b"class C:\n    def a(self):\n        pass\n    def b(self):\n        pass\n"
    _check(
        "m.py",
        src,
        [R("C.c", b"def c(self):\n    pass")],
        src + b"    def c(self):\n        pass\n",
    )


def test_class_replacement_wins_over_its_own_member() -> None:
    src = b"class C:\n    def m(self):\n        return 1\n\n    def k(self):\n        return 0\n"
    result = _check(
        "m.py",
        src,
        [
            R("C.m", b"def m(self):\n    return 'dropped'\n"),
            R("C", b"class C:\n    def m(self):\n        return 2\n"),
        ],
        b"class C:\n    def m(self):\n        return 2\n",
    )
    assert result.replaced == ("C.m", "C")
    assert result.removed == ("C.k",)
    assert result.placements["C.m"] == "contained in the replacement of C"


def test_member_dropped_by_its_class_replacement_is_reported_removed_not_replaced() -> None:
    src = b"class C:\n    def m(self):\n        return 1\n"
    result = splice("m.py", src, [R("C.m", b"def m(self): pass"), R("C", b"class C:\n    pass")])
    assert result.data == b"class C:\n    pass\n"
    assert result.replaced == ("C",)
    assert result.removed == ("C.m",)


def test_new_member_of_a_replaced_class_goes_into_its_new_text() -> None:
    src = b"class C:\n    def m(self):\n        return 1\n"
    new_class = (
        b"class C:\n    def m(self):\n        return 2\n\n    def k(self):\n        return 0\n"
    )
    result = _check(
        "m.py",
        src,
        [
            R("C", new_class),
            R("C.n", b"def n(self):\n    return 3\n"),
            R("C.m2", b"def m2(self):\n    return 4\n", after="C.m"),
        ],
        b"class C:\n    def m(self):\n        return 2\n\n    def m2(self):\n        return 4\n"
        b"\n    def k(self):\n        return 0\n\n    def n(self):\n        return 3\n",
    )
    assert result.added == ("C.n", "C.m2")
    assert result.placements["C.n"] == "inside the new text of C, inside class C, after k"


def test_new_member_already_in_its_replaced_class_is_contained() -> None:
    src = b"class C:\n    pass\n"
    result = splice(
        "m.py",
        src,
        [
            R("C", b"class C:\n    def n(self):\n        return 1\n"),
            R("C.n", b"def n(self):\n    return 'ignored'\n"),
        ],
    )
    assert result.data == b"class C:\n    def n(self):\n        return 1\n"
    assert result.placements["C.n"] == "contained in the new text of C"


def test_multiline_string_lines_are_never_reindented() -> None:
    src = b'class C:\n    def m(self):\n        s = """\nabc\n  def\n"""\n        return s\n'
    # dedented method: the string's lines at column 0 stay exactly where they are
    _check(
        "m.py",
        src,
        [R("C.m", b'def m(self):\n    s = """\nabc\n  def\n"""\n    return s + "!"\n')],
        b'class C:\n    def m(self):\n        s = """\nabc\n  def\n"""\n        return s + "!"\n',
    )


def test_docstrings_are_reindented_with_the_code() -> None:
    src = b"class C:\n    def m(self):\n        pass\n"
    _check(
        "m.py",
        src,
        [R("C.m", b'def m(self):\n    """Summary.\n\n    Details.\n    """\n    return 1\n')],
        b'class C:\n    def m(self):\n        """Summary.\n\n        Details.\n        """\n'
        b"        return 1\n",
    )


def test_crlf_file_stays_crlf() -> None:
    src = (
        b"import os\r\n\r\n\r\ndef f():\r\n    return 1\r\n\r\n\r\n"
        b"class C:\r\n    def m(self):\r\n        return 2\r\n"
    )
    result = _check(
        "w.py",
        src,
        [
            R("f", b"def f():\n    return 10\n"),
            R("C.n", b"def n(self):\n    pass"),
            R("g", b"def g():\r\n    pass\r\n"),
        ],
        b"import os\r\n\r\n\r\ndef f():\r\n    return 10\r\n\r\n\r\n"
        b"class C:\r\n    def m(self):\r\n        return 2\r\n\r\n"
        b"    def n(self):\r\n        pass\r\n\r\n\r\ndef g():\r\n    pass\r\n",
    )
    assert b"\n" not in result.data.replace(b"\r\n", b"")


def test_bom_is_kept_and_offsets_are_bytes() -> None:
    src = "\ufeffdef f():\n    return 'é'\n".encode()
    _check(
        "b.py",
        src,
        [R("f", "def f():\n    return 'ü'\n".encode()), R("g", b"def g(): pass")],
        "\ufeffdef f():\n    return 'ü'\n\n\ndef g(): pass\n".encode(),
    )


def test_no_final_newline_stays_absent() -> None:
    src = b"def f():\n    return 1\n\n\ndef g():\n    return 2"
    _check(
        "n.py",
        src,
        [R("g", b"def g():\n    return 3\n"), R("h", b"def h():\n    return 4\n")],
        b"def f():\n    return 1\n\n\ndef g():\n    return 3\n\n\ndef h():\n    return 4",
    )


def test_unicode_before_and_inside_spans() -> None:
    src = "# ünïcödé ✓\ndef f():\n    s = 'ß∂ƒ'\n    return s\n\n\ndef g():\n    return '日本'\n"
    _check(
        "u.py",
        src.encode(),
        [R("g", "def g():\n    return '中文字符'\n".encode())],
        src.replace("日本", "中文字符").encode(),
    )


def test_trailing_whitespace_and_comments_outside_spans_survive() -> None:
    src = b"def f():  \n    return 1\n\n# loose comment   \n\n\ndef g():\n    return 2\n   \n"
    _check(
        "t.py",
        src,
        [R("f", b"def f():\n    return 9\n"), R("g", b"def g():\n    return 8\n")],
        b"def f():\n    return 9\n\n# loose comment   \n\n\ndef g():\n    return 8\n   \n",
    )


def test_empty_file_gets_the_new_symbol_and_a_final_newline() -> None:
    result = splice("e.py", b"", [R("f", b"def f():\n    pass")])
    assert result.data == b"def f():\n    pass\n"
    assert result.placements == {"f": "end of file"}


def test_no_replacements_returns_the_original() -> None:
    assert splice("e.py", PY, []).data == PY


# --------------------------------------------------------------------------- JavaScript / TS

JS = b"""// utilities
export function fetchUser(id) {
  return api.get(id);
}

class Client {
  get(x) {
    return x;
  }

  static make() {
    return new Client();
  }
}

export default Client;
"""


def test_javascript_methods_and_exported_functions() -> None:
    result = _check(
        "client.js",
        JS,
        [
            R("Client.get", b"get(x) {\n  return x * 2;\n}"),
            R("Client.retry", b"async retry(n) {\n  return n;\n}"),
            R("helper", b"export function helper() {\n  return 1;\n}"),
            R(
                "fetchUser",
                b"// utilities\nexport function fetchUser(id) {\n  return api.get(`${id}`);\n}",
            ),
        ],
        b"""// utilities
export function fetchUser(id) {
  return api.get(`${id}`);
}

class Client {
  get(x) {
    return x * 2;
  }

  static make() {
    return new Client();
  }

  async retry(n) {
    return n;
  }
}

export function helper() {
  return 1;
}

export default Client;
""",
    )
    assert result.placements == {
        "Client.get": "replaced in place",
        "fetchUser": "replaced in place",
        "Client.retry": "inside class Client, after make",
        "helper": "after Client",
    }


def test_javascript_method_written_inside_its_class_is_unwrapped() -> None:
    _check(
        "client.js",
        JS,
        [R("Client.get", b"class Client {\n  get(x) {\n    return -x;\n  }\n}\n")],
        JS.replace(b"    return x;\n", b"    return -x;\n"),
    )


def test_typescript_members_and_empty_class_body() -> None:
    src = b"export class K {\n  a(): number {\n    return 1;\n  }\n}\n\nclass E {}\n"
    result = splice(
        "k.ts",
        src,
        [
            R("K.a", b"a(): number {\n  return 2;\n}"),
            R("K.b", b"  b(): number {\n    return 3;\n  }"),
            R("E.m", b"m(): void {}"),
        ],
    )
    assert result.data == (
        b"export class K {\n  a(): number {\n    return 2;\n  }\n\n  b(): number {\n    return 3;\n"
        b"  }\n}\n\nclass E {\n  m(): void {}\n}\n"
    )
    assert result.placements["E.m"] == "inside class E, at the end of its body"
    assert _parses("k.ts", result.data)


# --------------------------------------------------------------------------- Go

GO = b"""package main

import "fmt"

// S is a thing.
type S struct {
\tn int
}

// Get returns n.
func (s *S) Get() int {
\treturn s.n
}

func main() {
\tfmt.Println(1)
}
"""


def test_go_functions_and_methods_by_receiver() -> None:
    result = _check(
        "main.go",
        GO,
        [
            R("S.Get", b"// Get returns n twice.\nfunc (s *S) Get() int {\n\treturn s.n * 2\n}"),
            R("S.Set", b"func (s *S) Set(n int) {\n\ts.n = n\n}"),
            R("helper", b"func helper() {}"),
            R("main", b"func main() {\n\tfmt.Println(2)\n}\n"),
        ],
        b"""package main

import "fmt"

// S is a thing.
type S struct {
\tn int
}

// Get returns n twice.
func (s *S) Get() int {
\treturn s.n * 2
}

func (s *S) Set(n int) {
\ts.n = n
}

func main() {
\tfmt.Println(2)
}

func helper() {}
""",
    )
    assert result.placements["S.Set"] == "after S.Get"
    assert result.placements["helper"] == "end of file"


def test_go_method_without_receiver_is_refused() -> None:
    with pytest.raises(SpliceError, match=r"does not define S\.Bad .*it defines Bad"):
        splice("main.go", GO, [R("S.Bad", b"func Bad() {}")])


# --------------------------------------------------------------------------- Rust

RS = b"""struct S {
    n: i32,
}

impl S {
    /// Get n.
    fn get(&self) -> i32 {
        self.n
    }
}

impl std::fmt::Display for S {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}", self.n)
    }
}

struct T;
"""


def test_rust_impl_methods_replace_and_add() -> None:
    result = _check(
        "lib.rs",
        RS,
        [
            R("S.get", b"/// Get n plus one.\nfn get(&self) -> i32 {\n    self.n + 1\n}"),
            R("S.set", b"fn set(&mut self, n: i32) {\n    self.n = n;\n}"),
        ],
        RS.replace(
            b"    /// Get n.\n    fn get(&self) -> i32 {\n        self.n\n    }\n",
            b"    /// Get n plus one.\n    fn get(&self) -> i32 {\n        self.n + 1\n    }\n\n"
            b"    fn set(&mut self, n: i32) {\n        self.n = n;\n    }\n",
        ),
    )
    assert result.placements["S.set"] == "inside impl S, after get"


def test_rust_method_written_in_its_impl_block_is_unwrapped() -> None:
    _check(
        "lib.rs",
        RS,
        [R("S.get", b"impl S {\n    fn get(&self) -> i32 {\n        self.n + 2\n    }\n}\n")],
        # The doc comment the text leaves out stays (prefix.py).
        RS.replace(b"        self.n\n", b"        self.n + 2\n"),
    )


def test_rust_new_member_goes_to_the_impl_block_the_model_named() -> None:
    result = _check(
        "lib.rs",
        RS,
        [R("S.extra", b"impl std::fmt::Display for S {\n    fn extra(&self) {}\n}")],
        RS.replace(
            b"self.n)\n    }\n}\n",
            b"self.n)\n    }\n\n    fn extra(&self) {}\n}\n",
        ),
    )
    assert result.placements["S.extra"] == "inside impl std::fmt::Display for S, after fmt"


def test_rust_new_impl_blocks_are_created_once_per_header() -> None:
    result = splice(
        "lib.rs",
        RS,
        [
            R("T.new", b"fn new() -> T {\n    T\n}"),
            R("T.other", b"fn other(&self) {}"),
            R(
                "S.clone",
                b"impl Clone for S {\n    fn clone(&self) -> S {\n"
                b"        S { n: self.n }\n    }\n}",
            ),
        ],
    )
    assert result.data == RS.replace(
        b"struct T;\n",
        b"struct T;\n\nimpl T {\n    fn new() -> T {\n        T\n    }\n\n"
        b"    fn other(&self) {}\n}\n",
    ).replace(
        b"self.n)\n    }\n}\n",
        b"self.n)\n    }\n}\n\nimpl Clone for S {\n    fn clone(&self) -> S {\n"
        b"        S { n: self.n }\n    }\n}\n",
    )
    assert result.placements == {
        "T.new": "in a new impl T block after T",
        "T.other": "in a new impl T block",
        "S.clone": "in a new impl Clone for S block after impl std::fmt::Display for S",
    }
    assert _parses("lib.rs", result.data)


def test_java_method_added_after_the_last_one() -> None:
    src = b"class A {\n    int f() {\n        return 1;\n    }\n}\n"
    result = _check(
        "A.java",
        src,
        [R("A.g", b"int g() {\n    return 2;\n}")],
        b"class A {\n    int f() {\n        return 1;\n    }\n\n    int g() {\n        return 2;\n"
        b"    }\n}\n",
    )
    assert result.placements == {"A.g": "inside class A, after f"}


def test_after_naming_a_member_places_a_top_level_symbol_after_its_class() -> None:
    result = _check(
        "app.py",
        PY,
        [R("helper", b"def helper():\n    pass\n", after="Client.get")],
        PY.replace(
            b"            pass\n\n\nLIMIT",
            b"            pass\n\n\ndef helper():\n    pass\n\n\nLIMIT",
        ),
    )
    assert result.placements == {"helper": "after Client"}


def test_several_symbols_into_an_empty_file() -> None:
    result = splice("e.rs", b"", [R("f", b"fn f() {}"), R("g", b"fn g() {}")])
    assert result.data == b"fn f() {}\n\nfn g() {}\n"


# --------------------------------------------------------------------------- refusals


def test_syntax_error_names_the_symbol() -> None:
    with pytest.raises(SpliceError, match=r"Client\.get") as info:
        splice("app.py", PY, [R("Client.get", b"def get(self):\n    return (\n")])
    assert info.value.exit_code == 5
    assert isinstance(info.value, TinymemError)


def test_reindentation_error_is_caught_even_where_tree_sitter_is_lenient() -> None:
    # tree-sitter-python parses `class E: pass` + an indented def without an ERROR node.
    with pytest.raises(SpliceError, match=r"splicing E\.m into m\.py breaks its syntax"):
        splice("m.py", b"class E: pass\n", [R("E.m", b"def m(self):\n    return 1\n")])


def test_text_defining_a_different_name_is_refused() -> None:
    with pytest.raises(
        SpliceError, match=r"new text for fetch_user does not define fetch_user .*load"
    ):
        splice("app.py", PY, [R("fetch_user", b"def load(uid):\n    pass\n")])


def test_text_defining_an_extra_symbol_is_refused() -> None:
    with pytest.raises(SpliceError, match=r"also defines helper"):
        splice(
            "app.py",
            PY,
            [R("fetch_user", b"def fetch_user(u):\n    pass\n\n\ndef helper():\n    pass\n")],
        )
    with pytest.raises(SpliceError, match=r"also defines helper"):
        splice(
            "app.py",
            PY,
            [R("Client.get", b"def get(self):\n    pass\n\ndef helper(self):\n    pass\n")],
        )


def test_text_with_code_outside_the_definition_is_refused() -> None:
    with pytest.raises(SpliceError, match="has code outside the definition of fetch_user"):
        splice("app.py", PY, [R("fetch_user", b"import sys\n\ndef fetch_user(u):\n    pass\n")])
    with pytest.raises(SpliceError, match="has code outside the definition of main"):
        splice("main.go", GO, [R("main", b"package main\n\nfunc main() {}\n")])
    # a member wrapped in a class that carries more than its header is not unwrapped
    with pytest.raises(SpliceError, match=r"Client\.get"):
        splice(
            "app.py",
            PY,
            [R("Client.get", b"class Client:\n    x = 1\n\n    def get(self):\n        pass\n")],
        )


def test_missing_container_and_leaf_container_are_refused() -> None:
    with pytest.raises(SpliceError, match=r"it has no Nope"):
        splice("app.py", PY, [R("Nope.m", b"def m(self):\n    pass\n")])
    with pytest.raises(SpliceError, match=r"fetch_user is a function"):
        splice("app.py", PY, [R("fetch_user.inner", b"def inner():\n    pass\n")])


def test_bad_arguments_raise_value_error() -> None:
    with pytest.raises(ValueError, match="twice"):
        splice("app.py", PY, [R("retry", b"def retry(): pass"), R("retry", b"def retry(): pass")])
    with pytest.raises(ValueError, match="empty"):
        splice("app.py", PY, [R("retry", b" \n\n ")])
    with pytest.raises(ValueError, match="not a symbol name"):
        splice("app.py", PY, [R("@file", b"x = 1")])


def test_file_without_grammar_is_refused() -> None:
    with pytest.raises(SpliceError, match="no grammar"):
        splice("README.md", b"# hi\n", [R("x", b"x")])


def test_result_is_not_checked_against_a_broken_original() -> None:
    broken = b"def f(:\n    pass\n\n\ndef g():\n    return 1\n"
    result = splice("b.py", broken, [R("g", b"def g():\n    return 2\n")])
    assert result.data == broken.replace(b"return 1", b"return 2")


# --------------------------------------------------------------------------- delete_symbols

DEL = b"""import os


def a():
    pass


def b():
    pass


class C:
    def m(self):
        pass

    def n(self):
        pass


def d():
    pass
"""


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["a"], DEL.replace(b"def a():\n    pass\n\n\n", b"")),
        (["b"], DEL.replace(b"def b():\n    pass\n\n\n", b"")),
        (["d"], DEL.replace(b"\n\n\ndef d():\n    pass\n", b"\n")),
        (["C.m"], DEL.replace(b"    def m(self):\n        pass\n\n", b"")),
        (["C.n"], DEL.replace(b"\n    def n(self):\n        pass\n", b"")),
        (
            ["C"],
            DEL.replace(
                b"class C:\n    def m(self):\n        pass\n\n    def n(self):\n        pass\n\n\n",
                b"",
            ),
        ),
        (["a", "b"], DEL.replace(b"def a():\n    pass\n\n\ndef b():\n    pass\n\n\n", b"")),
        (["C", "d"], b"import os\n\n\ndef a():\n    pass\n\n\ndef b():\n    pass\n"),
        (
            ["C", "C.m"],
            DEL.replace(
                b"class C:\n    def m(self):\n        pass\n\n    def n(self):\n        pass\n\n\n",
                b"",
            ),
        ),
    ],
)
def test_delete_symbols_removes_exactly_the_spans_and_their_separation(
    names: list[str], expected: bytes
) -> None:
    result = delete_symbols("d.py", DEL, names)
    assert result == expected
    assert _parses("d.py", result)
    left = {s.name for s in _symbols("d.py", result)}
    gone = {s.name for s in _symbols("d.py", DEL)} - left
    assert gone == {
        n
        for n in {s.name for s in _symbols("d.py", DEL)}
        if any(n == x or n.startswith(x + ".") for x in names)
    }


def test_delete_symbols_edge_layouts() -> None:
    assert (
        delete_symbols("x.py", b"def a():\n    pass\n\n\ndef b():\n    pass", ["b"])
        == b"def a():\n    pass"
    )
    assert delete_symbols("x.py", b"def a():\n    pass\n", ["a"]) == b""
    crlf_bom = b"\xef\xbb\xbfdef a():\r\n    pass\r\n\r\n\r\ndef b():\r\n    pass\r\n"
    assert delete_symbols("x.py", crlf_bom, ["a"]) == b"\xef\xbb\xbfdef b():\r\n    pass\r\n"
    js = b"class C {\n  a() {}\n\n  b() {}\n}\n"
    assert delete_symbols("x.js", js, ["C.b"]) == b"class C {\n  a() {}\n}\n"
    assert delete_symbols("x.js", js, ["C.a"]) == b"class C {\n  b() {}\n}\n"
    go = GO
    assert delete_symbols("main.go", go, ["S.Get"]) == go.replace(
        b"// Get returns n.\nfunc (s *S) Get() int {\n\treturn s.n\n}\n\n", b""
    )
    assert delete_symbols("lib.rs", RS, ["S.get"]) == RS.replace(
        b"    /// Get n.\n    fn get(&self) -> i32 {\n        self.n\n    }\n", b""
    )


def test_delete_symbols_refusals() -> None:
    with pytest.raises(SpliceError, match=r"deleting C\.m from c\.py breaks its syntax"):
        delete_symbols("c.py", b"class C:\n    def m(self):\n        pass\n", ["C.m"])
    with pytest.raises(ValueError, match="defines no zz"):
        delete_symbols("d.py", DEL, ["zz"])
    with pytest.raises(ValueError, match="twice"):
        delete_symbols("d.py", DEL, ["a", "a"])


# --------------------------------------------------------------------------- whole_file_symbols

WF_ORIGINAL = b"""import os


def a():
    pass


class C:
    def m(self):
        pass

    def n(self):
        pass
"""

WF_PROPOSAL = b"""import os


def a():
    return 1


def new_top():
    pass


class C:
    def m(self):
        return 2

    def added(self):
        return 3

    # ... rest of the methods unchanged
"""


def test_whole_file_symbols_with_original_keeps_what_the_proposal_elided() -> None:
    reps = whole_file_symbols("w.py", WF_PROPOSAL, original=WF_ORIGINAL)
    assert reps == [
        R("a", b"def a():\n    return 1", None),
        R("new_top", b"def new_top():\n    pass", "a"),
        R("C.m", b"    def m(self):\n        return 2", None),
        R("C.added", b"    def added(self):\n        return 3", "C.m"),
    ]
    result = _check(
        "w.py",
        WF_ORIGINAL,
        reps,
        b"""import os


def a():
    return 1


def new_top():
    pass


class C:
    def m(self):
        return 2

    def added(self):
        return 3

    def n(self):
        pass
""",
    )
    assert result.removed == ()


def test_whole_file_symbols_without_original_lists_every_symbol() -> None:
    reps = whole_file_symbols("w.py", WF_PROPOSAL)
    assert [r.name for r in reps] == ["a", "new_top", "C", "C.m", "C.added"]
    result = splice("w.py", WF_ORIGINAL, reps)
    assert result.removed == ("C.n",)  # the class text won: the caller sees what went


def test_whole_file_symbols_wraps_rust_members_in_their_impl_header() -> None:
    original = b"struct S;\n\nimpl S {\n    fn a(&self) {}\n}\n"
    proposal = (
        b"struct S;\n\nimpl S {\n    fn a(&self) { 1; }\n\n    fn b(&self) {}\n}\n\n"
        b"impl Clone for S {\n    fn clone(&self) -> S { S }\n}\n"
    )
    reps = whole_file_symbols("a.rs", proposal, original=original)
    assert [r.name for r in reps] == ["S", "S.a", "S.b", "S.clone"]
    assert reps[3].text == b"impl Clone for S {\n    fn clone(&self) -> S { S }\n}"
    result = splice("a.rs", original, reps)
    assert result.data == (
        b"struct S;\n\nimpl S {\n    fn a(&self) { 1; }\n\n    fn b(&self) {}\n}\n\n"
        b"impl Clone for S {\n    fn clone(&self) -> S { S }\n}\n"
    )


# --------------------------------------------------------------------------- properties

_WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "zeta", "iota"]


@st.composite
def _statement_lines(draw: st.DrawFn) -> list[str]:
    """Statement lines at relative indentation (four spaces a level)."""
    kind = draw(st.sampled_from(["pass", "return", "assign", "if", "data", "uni", "comment"]))
    n = draw(st.integers(0, 99))
    if kind == "return":
        return [f"return {n}"]
    if kind == "assign":
        return [f"x = {n}  # note {n}"]
    if kind == "if":
        return ["if x:", f"    return {n}"]
    if kind == "data":  # a multi-line string whose lines sit at column 0 and deeper
        return ['s = """', f"col0 {n}", "    four", '"""']
    if kind == "uni":
        return [f"u = 'ünï {n} ✓'"]
    if kind == "comment":
        return [f"# c {n}", "pass"]
    return ["pass"]


@st.composite
def _body(draw: st.DrawFn, *, docstring: bool = True) -> list[str]:
    lines: list[str] = []
    if docstring and draw(st.booleans()):
        lines.append('"""Doc ✓."""')
    for stmt in draw(st.lists(_statement_lines(), min_size=1, max_size=3)):
        lines += stmt
    return lines


def _indent(lines: list[str], level: int) -> list[str]:
    """Indent code lines; lines inside a `s = \"\"\"` block keep column 0 (string content)."""
    out: list[str] = []
    inside = False
    for line in lines:
        if inside:
            out.append(line)
            if line == '"""':
                inside = False
            continue
        out.append("    " * level + line if line else line)
        if line.endswith('s = """'):
            inside = True
    return out


@st.composite
def _function(draw: st.DrawFn, name: str, *, method: bool) -> list[str]:
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append(f"# About {name}.")
    if draw(st.booleans()):
        lines.append("@staticmethod" if method else "@decorate")
    args = "self" if method and not (lines and lines[-1] == "@staticmethod") else "a"
    lines.append(f"def {name}({args}):")
    lines += _indent(draw(_body()), 1)
    return lines


@st.composite
def _class(draw: st.DrawFn, name: str) -> list[str]:
    lines = [f"class {name}:"]
    members = draw(st.lists(st.sampled_from(_WORDS), unique=True, max_size=3))
    inner = draw(st.booleans())
    head: list[str] = []
    if draw(st.booleans()):
        head.append('"""Class doc."""')
    if draw(st.booleans()):
        head.append("attr = 1")
    if not members and not inner and not head:
        head.append("pass")
    body = list(head)
    for i, member in enumerate(members):
        if body:
            body += [""] * draw(st.integers(0, 2 if i else 1))
        body += draw(_function(f"m_{member}", method=True))
    if inner:
        if body:
            body.append("")
        body.append("class Inner:")
        body += _indent(draw(_function("deep", method=True)), 1)
    if draw(st.booleans()):
        body.append("# trailing comment   ")
    return lines + _indent(body, 1)


@st.composite
def _module(draw: st.DrawFn) -> tuple[bytes, str]:
    eol = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    parts: list[str] = []
    if draw(st.booleans()):
        parts += ["import os", ""]
    names = draw(st.lists(st.sampled_from(_WORDS), unique=True, min_size=1, max_size=5))
    for i, name in enumerate(names):
        if i:
            parts += [""] * draw(st.integers(0, 3))
            if draw(st.integers(0, 4)) == 0:
                parts += ["# a loose comment  ", ""]
        kind = draw(st.sampled_from(["function", "class", "constant", "twin"]))
        if kind == "twin" and i:  # a second `def` of an earlier name: `f_x#2`
            parts += draw(_function(f"f_{names[0]}", method=False))
        elif kind in ("function", "twin"):
            parts += draw(_function(f"f_{name}", method=False))
        elif kind == "class":
            parts += draw(_class(f"C_{name.title()}"))
        else:
            parts.append(f"K_{name.upper()} = {i}")
    if draw(st.booleans()):
        parts += ["", "", 'if __name__ == "__main__":', "    pass"]
    unit = draw(st.sampled_from(["    ", "    ", "  ", "\t"]))
    if unit != "    ":  # re-indent with another unit; string content changes harmlessly
        parts = [_reunit(line, unit) for line in parts]
    text = eol.join(parts)
    if draw(st.booleans()):
        text += eol
    data = text.encode()
    if draw(st.integers(0, 5)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data, eol


def _reunit(line: str, unit: str) -> str:
    stripped = line.lstrip(" ")
    return (
        unit * ((len(line) - len(stripped)) // 4)
        + " " * ((len(line) - len(stripped)) % 4)
        + stripped
    )


def _new_text(draw: st.DrawFn, sym: Symbol, indent_form: str, n: int) -> bytes:
    leaf = sym.name.rsplit(".", 1)[-1].split("#", 1)[0]
    if sym.kind == "class":
        body = ["def fresh(self):", f"    return {n}"]
        lines = [f"class {leaf}:", *_indent(body, 1)]
    elif sym.kind == "constant":
        lines = [f"{leaf} = {n}"]
    else:
        args = "self" if sym.parent is not None else "a"
        lines = [f"def {leaf}({args}):", *_indent(draw(_body()), 1)]
    if indent_form in ("indented", "cut") and sym.parent is not None:
        lines = _indent(lines, sym.name.count("."))
        if indent_form == "cut":  # as `extract` cuts a span: first line without indentation
            lines[0] = lines[0].lstrip()
    return "\n".join(lines).encode()


def _span_text(data: bytes, sym: Symbol) -> bytes:
    return data[sym.start : sym.end]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_property_splice_is_exact(data: st.DataObject) -> None:
    original, _eol = data.draw(_module())
    path = "gen.py"
    assume(_parses(path, original))
    before = _symbols(path, original)
    chosen = data.draw(st.lists(st.sampled_from(before), unique=True, max_size=4)) if before else []
    reps: list[Replacement] = []
    for i, sym in enumerate(chosen):
        form = data.draw(st.sampled_from(["dedented", "indented", "cut"]))
        reps.append(R(sym.name, _new_text(data.draw, sym, form, i)))
    # New members go to classes that survive: not to one inside a replaced class (its new
    # text need not have it; splice rightly refuses that contradiction).
    classes = [
        s
        for s in before
        if s.kind == "class"
        and not any(o != s and o.start <= s.start and s.end <= o.end for o in chosen)
    ]
    for j in range(data.draw(st.integers(0, 3))):
        if classes and data.draw(st.booleans()):
            owner = data.draw(st.sampled_from(classes))
            reps.append(R(f"{owner.name}.n_{j}", f"def n_{j}(self):\n    return {j}\n".encode()))
        else:
            after = data.draw(st.sampled_from([None, *[s.name for s in before]]))
            reps.append(R(f"g_{j}", f"def g_{j}():\n    return {j}\n".encode(), after))

    try:
        result = splice(path, original, reps)
    except (SpliceError, ValueError) as err:  # pragma: no cover - a failure shows the input
        raise AssertionError(f"valid input refused: {err}\n{original!r}\n{reps!r}") from err

    assert _parses(path, result.data)
    after = {s.name: s for s in _symbols(path, result.data)}
    replaced = [s for s in before if s.name in result.replaced]
    touched = [s for s in before if s.name in {r.name for r in reps}]
    for sym in before:
        inside = any(o.start <= sym.start and sym.end <= o.end for o in touched)
        holds = any(sym.start < o.start and o.end <= sym.end for o in touched) or any(
            r.name.startswith(sym.name + ".") for r in reps
        )
        if inside or holds:
            continue
        assert _span_text(result.data, after[sym.name]) == _span_text(original, sym)
    for name in result.added:
        assert name in after
    assert set(result.replaced) | set(result.removed) >= {s.name for s in replaced}
    _assert_outside_unchanged(path, original, result)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_property_own_text_is_identity(data: st.DataObject) -> None:
    original, _eol = data.draw(_module())
    path = "gen.py"
    assume(_parses(path, original))
    symbols = _symbols(path, original)
    assume(symbols)
    sym = data.draw(st.sampled_from(symbols))
    span = _span_text(original, sym)
    line_start = original.rfind(b"\n", 0, sym.start) + 1
    indent = original[line_start : sym.start].lstrip(b"\xef\xbb\xbf")
    form = data.draw(st.sampled_from(["span", "indented", "lf"]))
    if form == "indented":
        text = indent + span
    elif form == "lf":
        text = span.replace(b"\r\n", b"\n")
    else:
        text = span
    result = splice(path, original, [R(sym.name, text)])
    assert result.data == original
    assert result.replaced == (sym.name,)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_property_delete_removes_exactly_the_named_symbols(data: st.DataObject) -> None:
    original, _eol = data.draw(_module())
    path = "gen.py"
    assume(_parses(path, original))
    symbols = _symbols(path, original)
    assume(symbols)
    names = data.draw(st.lists(st.sampled_from([s.name for s in symbols]), unique=True, min_size=1))
    try:
        result = delete_symbols(path, original, names)
    except SpliceError as err:
        # Only legitimate refusal: a class body left empty.
        assert "breaks its syntax" in str(err)
        return
    assert _parses(path, result)
    removed = {
        s.name for s in symbols if any(s.name == n or s.name.startswith(n + ".") for n in names)
    }
    survivors = [s for s in symbols if s.name not in removed]
    left = list(_symbols(path, result))
    # In source order: deleting `f` turns `f#2` into `f`.
    plain = [s.name.split("#")[0] for s in survivors]
    assert plain == [s.name.split("#")[0] for s in left]
    for sym, now in zip(survivors, left, strict=True):
        if not any(n.startswith(sym.name + ".") for n in names):
            assert _span_text(result, now) == _span_text(original, sym)
    # Nothing went but the removed spans and whitespace (their indentation and separation).
    outer = _outermost([s for s in symbols if s.name in removed])
    without = _cut(original, [(s.start, s.end, b"") for s in outer], eat_lead=set())
    assert _deletes_only_whitespace(without.replace(b"\x00\x00", b""), result)


def _deletes_only_whitespace(longer: bytes, shorter: bytes) -> bool:
    """Whether `shorter` is `longer` with some whitespace bytes deleted."""
    j = 0
    for byte in longer:
        if j < len(shorter) and shorter[j] == byte:
            j += 1
        elif byte not in b" \t\r\n":
            return False
    return j == len(shorter)
