"""Language detection, versioning, the patterns data file, cheap import."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata, resources
from pathlib import Path

import pytest

from tinymem.symbols import (
    EXTRACTOR_VERSION,
    GRAMMAR_LANGUAGES,
    KINDS,
    Symbol,
    extract,
    grammars,
    language_for_path,
)
from tinymem.symbols.grammars import load_language
from tinymem.symbols.model import GRAMMAR_PACK_VERSION

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a.py", "python"),
        ("pkg/stubs.pyi", "python"),
        ("a.js", "javascript"),
        ("a.mjs", "javascript"),
        ("a.cjs", "javascript"),
        ("a.jsx", "javascript"),
        ("a.ts", "typescript"),
        ("a.mts", "typescript"),
        ("a.cts", "typescript"),
        ("a.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("A.java", "java"),
        ("a.c", "c"),
        ("a.h", "c"),
        ("a.cc", "cpp"),
        ("a.cpp", "cpp"),
        ("a.cxx", "cpp"),
        ("a.hpp", "cpp"),
        ("a.hh", "cpp"),
        ("a.hxx", "cpp"),
        ("lib/a.rb", "ruby"),
        ("Rakefile", "ruby"),
        ("sub/Gemfile", "ruby"),
        ("SRC/MAIN.PY", "python"),
        ("a.lua", None),
        ("README.md", None),
        ("Makefile", None),
        (".py", None),
        ("noext", None),
        ("a.py.bak", None),
    ],
)
def test_language_for_path(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


def test_extractor_version_names_the_installed_grammar_pack() -> None:
    # A grammar upgrade changes trees, hence symbols: it must change the cache key.
    assert metadata.version("tree-sitter-language-pack") == GRAMMAR_PACK_VERSION
    assert GRAMMAR_PACK_VERSION in EXTRACTOR_VERSION


def test_symbol_is_a_frozen_positional_record() -> None:
    s = Symbol("Client.get", "method", 3, 10, "Client")
    assert (s.name, s.kind, s.start, s.end, s.parent) == ("Client.get", "method", 3, 10, "Client")
    with pytest.raises(AttributeError):
        s.name = "x"  # type: ignore[misc]


REQUIRED_REGEX_LANGUAGES = {
    "lua",
    "php",
    "kotlin",
    "swift",
    "scala",
    "shell",
    "perl",
    "elixir",
    "haskell",
    "r",
    "dart",
}


def test_patterns_file_is_package_data_and_valid() -> None:
    raw = resources.files("tinymem").joinpath("data/patterns.json").read_bytes()
    doc = json.loads(raw)
    languages = doc["languages"]
    assert set(languages) >= REQUIRED_REGEX_LANGUAGES
    seen_extensions: set[str] = set()
    for name, entry in languages.items():
        assert entry["patterns"], name
        for ext in entry["extensions"]:
            assert ext.startswith(".") and ext == ext.lower()
            assert ext not in seen_extensions
            assert language_for_path(f"x{ext}") is None  # never shadows a grammar
            seen_extensions.add(ext)
        for pattern in entry["patterns"]:
            assert pattern["kind"] in KINDS
            compiled = re.compile(pattern["regex"], re.MULTILINE)
            assert "name" in compiled.groupindex


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        (
            "a.php",
            "<?php\nclass Foo {\n    public function bar() {\n    }\n}\n",
            ["Foo", "Foo.bar"],
        ),
        ("a.swift", "struct P {\n    func norm() -> Double {\n    }\n}\n", ["P", "P.norm"]),
        ("a.scala", "object Main {\n  def run(): Unit = {\n  }\n}\n", ["Main", "Main.run"]),
        (
            "a.sh",
            "#!/bin/sh\nsetup() {\n  echo hi\n}\nfunction teardown {\n}\n",
            ["setup", "teardown"],
        ),
        ("a.pl", "package Foo::Bar;\nsub new {\n}\n", ["Foo.Bar", "new"]),
        (
            "a.ex",
            "defmodule App.Repo do\n  def get(id) do\n  end\nend\n",
            ["App.Repo", "App.Repo.get"],
        ),
        ("a.hs", "add :: Int -> Int -> Int\nadd x y = x + y\n", ["add"]),
        ("a.R", "normalize <- function(x) {\n  x / sum(x)\n}\n", ["normalize"]),
        ("a.dart", "class A {\n  int f(int x) {\n    return x;\n  }\n}\n", ["A", "A.f"]),
    ],
)
def test_regex_languages(path: str, source: str, expected: list[str]) -> None:
    ex = extract(path, source.encode())
    assert ex.method == "regex" and not ex.clean
    assert [s.name for s in ex.symbols] == expected


def test_every_sample_uses_known_kinds() -> None:
    for sample in DATA.iterdir():
        name = sample.name.removesuffix(".txt")
        for s in extract(name, sample.read_bytes()).symbols:
            assert s.kind in KINDS, (name, s)
            assert "::" not in s.name


def test_import_is_cheap() -> None:
    code = (
        "import sys, tinymem.symbols as s\n"
        "heavy = ('tree_sitter_language_pack', 'litellm', 'tinymem.symbols.treesitter')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "s.extract('a.py', b'def f(): pass\\n')\n"
        "from tinymem.symbols import treesitter\n"
        "print(sorted(treesitter._LANGUAGES), 'litellm' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["[]", "['python'] False"]


def test_a_grammar_loads_without_the_others() -> None:
    """Parsing Python loads the Python grammar alone: not the language pack's package module,
    which imports the C#, YAML and embedded-template grammars and ctypes (~16 ms of every
    pre-commit hook that parses a file, issue 29)."""
    code = (
        "import sys, tinymem.symbols as s\n"
        "s.extract('a.py', b'def f(): pass\\n')\n"
        "heavy = ('tree_sitter_language_pack', 'tree_sitter_c_sharp', 'tree_sitter_yaml',\n"
        "         'tree_sitter_embedded_template', 'ctypes')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]"]


@pytest.mark.parametrize("language", sorted(GRAMMAR_LANGUAGES))
def test_each_grammar_loaded_alone_is_the_packs(language: str) -> None:
    from tree_sitter import Parser
    from tree_sitter_language_pack import get_language

    ours, packs = load_language(language), get_language(language)  # type: ignore[arg-type]
    assert (ours.name, ours.abi_version, ours.node_kind_count) == (
        packs.name,
        packs.abi_version,
        packs.node_kind_count,
    )
    src = b"int f(int x) { return x; }\nclass A { }\ndef g(): pass\n"
    assert str(Parser(ours).parse(src).root_node) == str(Parser(packs).parse(src).root_node)


def test_a_pack_laid_out_otherwise_falls_back_to_its_get_language(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(grammars, "_PACK", "no_such_grammar_pack")
    assert grammars._binding("python") is None
    language = load_language.__wrapped__("python")  # not the one cached in this process
    assert language.name == "python"


def test_a_grammar_is_loaded_once_per_process() -> None:
    """containers() asks for its grammar on every call (hundreds per prompt): one Language."""
    assert load_language("python") is load_language("python")
