"""Property tests: `extract` never raises and its spans are always well-formed."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tinymem.symbols import KINDS, Extraction, extract

DATA = Path(__file__).parent / "data"

GRAMMAR_EXTENSIONS = [
    ".py", ".pyi", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".go", ".rs",
    ".java", ".cs", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".rb",
]  # fmt: skip
REGEX_EXTENSIONS = [
    ".lua", ".php", ".kt", ".kts", ".swift", ".scala", ".sh", ".bash", ".pl", ".pm", ".ex",
    ".exs", ".hs", ".r", ".dart",
]  # fmt: skip
OTHER = [".md", ".toml", ".json", ".txt", ""]
ALL_PATHS = [f"dir/file{ext}" for ext in GRAMMAR_EXTENSIONS + REGEX_EXTENSIONS + OTHER] + [
    "Rakefile",
    "Gemfile",
]

SAMPLES = [p.read_bytes() for p in sorted(DATA.iterdir())]

# Code-like text: keywords, brackets, names (some non-ASCII), comments, odd line endings.
TOKENS = [
    "def ", "class ", "fn ", "func ", "function ", "struct ", "impl ", "trait ", "enum ",
    "module ", "mod ", "namespace ", "interface ", "type ", "const ", "let ", "var ", "static ",
    "export ", "default ", "template<typename T> ", "typedef ", "#define ", "end", "do", "sub ",
    "local ", "fun ", "object ", "@dec\n", "#[attr]\n", "/// doc\n", "// c\n", "# c\n",
    "/* c */", "{", "}", "(", ")", "[", "]", "<", ">", ";", ":", "::", ".", ",", "=", "=>",
    "->", "\n", "\r\n", "    ", "\t", " ", "'", '"', "`", "Foo", "bar", "x", "größe", "Ünï",
    "self", "*", "&", "|", "\\", "\x00", "\ufeff", "😀",
]  # fmt: skip

code_like = st.lists(st.sampled_from(TOKENS), max_size=120).map(lambda ts: "".join(ts).encode())


@st.composite
def mutated_samples(draw: st.DrawFn) -> bytes:
    """A real sample with a slice removed and random bytes spliced in."""
    data = draw(st.sampled_from(SAMPLES))
    a = draw(st.integers(0, len(data)))
    b = draw(st.integers(a, min(len(data), a + 400)))
    junk = draw(st.binary(max_size=8))
    return data[:a] + junk + data[b:]


contents = st.one_of(st.binary(max_size=600), code_like, mutated_samples())


def check_well_formed(ex: Extraction, data: bytes) -> None:
    assert ex.method in ("tree-sitter", "regex", "none")
    if ex.method == "none":
        assert ex.symbols == () and ex.clean and ex.reason is None and ex.language is None
    if ex.method == "regex":
        assert not ex.clean and ex.reason is not None
    if ex.method == "tree-sitter":
        assert ex.clean == (ex.reason is None)
    names = [s.name for s in ex.symbols]
    assert len(names) == len(set(names)), "qualified names are unique"
    starts = [s.start for s in ex.symbols]
    assert starts == sorted(starts)
    by_name = {s.name: s for s in ex.symbols}
    for s in ex.symbols:
        assert 0 <= s.start < s.end <= len(data)
        assert s.kind in KINDS
        assert s.name and "::" not in s.name
        if s.parent is not None:
            assert s.name.startswith(s.parent + ".")
            parent = by_name.get(s.parent)
            if parent is not None and parent.start <= s.start < parent.end:
                # A lexically nested child lies within its parent.
                assert s.end <= parent.end
    for i, a in enumerate(ex.symbols):
        for b in ex.symbols[i + 1 :]:
            if b.start >= a.end:
                continue  # disjoint
            # Overlap only by nesting: b (starting later or equal) lies within a, and is a
            # descendant of a; equal spans are sibling names of one declaration.
            assert b.end <= a.end, (a, b)
            if (a.start, a.end) != (b.start, b.end):
                assert b.name.startswith(a.name + "."), (a, b)


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(path=st.sampled_from(ALL_PATHS), data=contents)
def test_extract_never_raises_and_spans_are_well_formed(path: str, data: bytes) -> None:
    check_well_formed(extract(path, data), data)


def test_all_samples_under_every_extension() -> None:
    """Every sample parsed as every language: wrong-language input is the worst case."""
    for path in ALL_PATHS:
        for data in SAMPLES:
            check_well_formed(extract(path, data), data)
