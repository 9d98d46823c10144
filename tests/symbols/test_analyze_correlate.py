"""`analyze` (syntax health for the gates), `identifiers` and `correlate`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinymem.symbols import analyze, correlate, extract, identifiers
from tinymem.symbols.correlate import defined_names

DATA = Path(__file__).parent / "data"

GRAMMAR_SAMPLES = {
    "sample.py": "python",
    "sample.js": "javascript",
    "sample.ts": "typescript",
    "sample.tsx": "tsx",
    "sample.go": "go",
    "sample.rs": "rust",
    "sample.java": "java",
    "sample.c": "c",
    "sample.cpp": "cpp",
    "sample.rb": "ruby",
}


def read(name: str) -> bytes:
    path = DATA / name
    return (path if path.exists() else DATA / f"{name}.txt").read_bytes()


# ----------------------------------------------------------------------------- analyze


@pytest.mark.parametrize(("name", "language"), sorted(GRAMMAR_SAMPLES.items()))
def test_analyze_clean_sample(name: str, language: str) -> None:
    syntax = analyze(language, read(name))
    assert syntax.clean is True
    assert syntax.reason is None
    assert syntax.node_count > 100


@pytest.mark.parametrize(("name", "language"), sorted(GRAMMAR_SAMPLES.items()))
def test_node_count_drops_for_a_stub(name: str, language: str) -> None:
    """A model that replaces a file by a stub shows up as a collapse of the tree."""
    data = read(name)
    stub = b"\n".join(data.splitlines()[:6]) + b"\n"
    assert analyze(language, stub).node_count < analyze(language, data).node_count // 4


def test_analyze_broken() -> None:
    good = analyze("python", b"def f(x):\n    return x\n")
    bad = analyze("python", b"def f(x):\n    return x +* 2 $\n")
    assert good.clean and good.reason is None
    assert not bad.clean
    assert bad.reason == "invalid syntax at line 2, column 15"  # CPython's words


def test_analyze_missing_node() -> None:
    syntax = analyze("java", b"class A { void m() { int x = 1 } }")
    assert not syntax.clean
    assert syntax.reason == "missing ';' at line 1, column 31"


def test_analyze_counts_named_nodes_only() -> None:
    # module > expression_statement is hidden in this grammar: module, assignment, identifier,
    # integer -> 4 named nodes; "=" is anonymous.
    assert analyze("python", b"x = 1\n").node_count == 4


def test_analyze_unknown_language() -> None:
    with pytest.raises(ValueError, match="no tree-sitter grammar"):
        analyze("lua", b"x = 1")


# ----------------------------------------------------------------------------- identifiers


def test_identifiers_tree_sitter_skip_strings_and_comments() -> None:
    data = b'total = price * qty  # comment_word\nlabel = "not_an_identifier"\n'
    assert identifiers("python", data) == {"total", "price", "qty", "label"}


def test_identifiers_tree_sitter_types_and_fields() -> None:
    data = b"package p\nfunc (s *Server) Start(ctx context.Context) { s.addr = 1 }\n"
    ids = identifiers("go", data)
    assert {"Server", "Start", "ctx", "context", "Context", "s", "addr"} <= ids
    assert "p" in ids  # package identifier


def test_identifiers_js_private_names_are_bare() -> None:
    ids = identifiers("javascript", b"class A { #count = 0; inc() { this.#count++; } }")
    assert {"A", "count", "inc"} <= ids
    assert "#count" not in ids


def test_identifiers_regex_fallback() -> None:
    data = "local größe = helper_1(x) -- 2nd\n".encode()
    assert identifiers("lua", data) == {"local", "größe", "helper_1", "x"}
    assert identifiers(None, b"a+b_c 9z _") == {"a", "b_c", "_"}


# ----------------------------------------------------------------------------- correlate


def _candidates(name: str) -> dict[str, frozenset[str]]:
    data = read(name)
    ex = extract(name, data)
    assert ex.language is not None
    return {
        f"src/{name}::{s.name}": identifiers(ex.language, data[s.start : s.end]) for s in ex.symbols
    }


def test_correlate_picks_the_rewritten_method() -> None:
    block = b"""\
def get(self, path: str) -> str:
    if not path.startswith("/"):
        path = "/" + path
    return self.base_url + path
"""
    found = correlate(block, _candidates("sample.py"), language="python")
    assert found is not None
    key, score = found
    assert key == "src/sample.py::Client.get"
    assert 0.45 < score <= 1.0


def test_correlate_prefers_the_defined_name_over_a_mentioned_one() -> None:
    # The block calls `fetch_user` but defines `close`; no language: regex identifiers.
    candidates = {
        "m.py::fetch_user": frozenset({"fetch_user", "user_id", "str", "id", "name"}),
        "m.py::Client.close": frozenset({"close", "self", "None"}),
    }
    block = b"async def close(self) -> None:\n    fetch_user(1)\n    return None\n"
    # block ids: async def close self None fetch_user return -> 3 of 7 shared with close.
    assert correlate(block, candidates) == ("m.py::Client.close", pytest.approx(0.4 + 0.6 * 3 / 7))


def test_correlate_mention_alone_is_not_enough() -> None:
    # A new function that calls an existing one must not be aligned with it.
    candidates = _candidates("sample.py")
    block = b"def report(uid):\n    user = fetch_user(uid)\n    print(user)\n"
    assert correlate(block, candidates, language="python") is None


def test_correlate_renamed_entity_with_high_overlap() -> None:
    candidates = {
        "m.py::load_config": frozenset({"load_config", "path", "open", "f", "json", "loads"}),
        "m.py::save": frozenset({"save", "path", "open", "f", "write"}),
    }
    block = b"def read_config(path):\n    with open(path) as f:\n        return json.loads(f)\n"
    # Python identifiers of the block: read_config path open f json loads -> 5 of 7 shared.
    found = correlate(block, candidates, language="python")
    assert found == ("m.py::load_config", pytest.approx(0.6 * 5 / 7))


def test_correlate_lone_typescript_method() -> None:
    candidates = _candidates("sample.ts")
    block = b"  clear(): void {\n    this.store.clear();\n    this.hits = 0;\n  }\n"
    found = correlate(block, candidates, language="typescript")
    assert found is not None and found[0] == "src/sample.ts::Cache.clear"


def test_correlate_none_when_nothing_matches() -> None:
    candidates = _candidates("sample.py")
    assert correlate(b"SELECT id FROM users WHERE age > 3;", candidates) is None
    assert correlate(b"", candidates) is None
    assert correlate(b"def anything(): pass", {}) is None


def test_correlate_none_on_tie() -> None:
    ids = frozenset({"render", "self", "props"})
    candidates = {"a.py::View.render": ids, "b.py::View.render": ids}
    assert correlate(b"def render(self):\n    return self.props\n", candidates) is None


def test_correlate_strips_duplicate_suffix_from_defining_name() -> None:
    candidates = {
        "a.go::init": frozenset({"init", "setup"}),
        "a.go::init#2": frozenset({"init", "register", "handlers"}),
    }
    block = b"func init() {\n\tregister(handlers)\n}\n"
    # regex identifiers: func init register handlers; `func init` defines init.
    assert correlate(block, candidates) == ("a.go::init#2", pytest.approx(0.4 + 0.6 * 3 / 4))


def test_correlate_file_level_entity_uses_overlap_only() -> None:
    candidates = {"README.md": frozenset({"Install", "pip", "tinymem"})}
    found = correlate(b"Install: pip install tinymem", candidates)
    assert found == ("README.md", pytest.approx(0.6 * 3 / 4))


@pytest.mark.parametrize(
    ("language", "block", "expected"),
    [
        ("python", b"    @property\n    def status(self):\n        return 1\n", {"status"}),
        (
            "java",
            b"    @Override\n    public V get(String key) {\n        return null;\n    }",
            {"get"},
        ),
        ("go", b"func (s *Server) Start() error {\n\treturn nil\n}\n", {"Start"}),
        ("javascript", b"  static create() {\n    return 1;\n  }\n", {"create"}),
        (None, b"local function M.new()\nend\nfunction M:push(x)\nend\n", {"new", "push"}),
        (None, b"pub(crate) fn build() {}\nimpl Foo {}\n", {"build", "Foo"}),
        (None, b"x = compute(1)\n", set()),
    ],
)
def test_defined_names(language: str | None, block: bytes, expected: set[str]) -> None:
    assert defined_names(block, language) == expected
