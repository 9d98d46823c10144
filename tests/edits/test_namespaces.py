"""A new C++ or C# definition given without the `namespace … {` its file wraps everything in
goes inside that block, beside the file's definitions of the same class (`namespaces.py`),
never after its closing brace (audit 3, item 4: `double Square::perimeter()` appended after
`}  // namespace geo` no longer compiled). When the file's definitions sit in several
namespaces, the block is held, naming them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Initialise, tm, tm_ask
from tests.modelserver import ModelServer
from tinymem.edits.align import align
from tinymem.edits.alignment import Evidence
from tinymem.edits.splice import Replacement, splice
from tinymem.symbols import extract
from tinymem.symbols.treesitter import parse_root

HPP = b"""#pragma once
#include <string>

namespace geo {

class Shape {
  public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
};

class Square : public Shape {
  public:
    explicit Square(double s);
    double area() const override;
    double perimeter() const;
    std::string name() const;
  private:
    double side_;
};

double total(const Square& s);

}  // namespace geo
"""
CPP = b"""#include "shape.hpp"

namespace geo {

Square::Square(double s) : side_(s) {}

double Square::area() const {
    return side_ * side_;
}

std::string Square::name() const {
    return "square";
}

}  // namespace geo
"""
PERIMETER = b"double Square::perimeter() const {\n    return 4 * side_;\n}\n"
TOTAL = b"double total(const Square& s) {\n    return s.area();\n}\n"
CS = b"""using System;

namespace App
{
    public class Calc
    {
        public int Add(int a, int b)
        {
            return a + b;
        }
    }
}
"""
CS_NEW = (
    b"public class CalcException : Exception\n{\n"
    b"    public CalcException(string m) : base(m) { }\n}\n"
)


def _applied(path: str, original: bytes, block: bytes) -> tuple[list[str], bytes]:
    """The names the block adds, and the file once they are spliced in (as tm accept does)."""
    found = align(path, block, original, Evidence())
    assert found.blocked is None and found.problem is None, found.blocked or found.problem
    reps = [Replacement(t.name, t.text, t.after) for t in found.targets]
    return [t.name for t in found.targets], splice(path, original, reps).data


def _inside(path: str, data: bytes, namespace: bytes, code: bytes) -> bool:
    """Whether `code` sits in the body of the file's `namespace` block, which parses cleanly."""
    root = parse_root("csharp" if path.endswith(".cs") else "cpp", data)
    assert not root.has_error
    at = data.index(code)
    stack = [root]
    while stack:
        node = stack.pop()
        if (
            node.type in ("namespace_definition", "namespace_declaration")
            and namespace in (node.text or b"").split(b"{")[0]
        ):
            return node.start_byte < at and at + len(code) <= node.end_byte
        stack.extend(node.children)
    return False


def test_an_out_of_class_definition_goes_beside_its_class_inside_the_namespace() -> None:
    names, after = _applied("src/shape.cpp", CPP, PERIMETER)
    assert names == ["geo.Square.perimeter"]
    assert after == CPP.replace(
        b"\n}  // namespace geo", b"\n" + PERIMETER + b"\n}  // namespace geo"
    )
    assert _inside("src/shape.cpp", after, b"geo", PERIMETER)
    assert "geo.Square.perimeter" in {s.name for s in extract("src/shape.cpp", after).symbols}


def test_a_new_free_function_goes_into_the_one_namespace_of_the_file() -> None:
    names, after = _applied("src/shape.cpp", CPP, TOTAL)
    assert names == ["geo.total"]
    assert _inside("src/shape.cpp", after, b"geo", TOTAL)
    assert after.endswith(b'    return "square";\n}\n\n' + TOTAL + b"\n}  // namespace geo\n")


def test_a_new_csharp_class_goes_into_the_namespace_block_at_its_indentation() -> None:
    names, after = _applied("src/Calc.cs", CS, CS_NEW)
    assert names == ["App.CalcException"]
    indented = b"".join(b"    " + line + b"\n" for line in CS_NEW.splitlines())
    assert after.endswith(b"    }\n\n" + indented + b"}\n")
    assert _inside("src/Calc.cs", after, b"App", indented.strip())


def test_definitions_in_nested_namespaces_take_a_new_one_into_the_outer_one() -> None:
    nested = (
        b"namespace geo {\nnamespace detail {\nint f() { return 1; }\n}\n\n"
        b"int g() { return 2; }\n}\n"
    )
    names, after = _applied("m.cpp", nested, b"int h() { return 3; }\n")
    assert names == ["geo.h"]
    assert after.endswith(b"int g() { return 2; }\n\nint h() { return 3; }\n}\n")


def test_a_file_scoped_csharp_namespace_needs_nothing() -> None:
    scoped = b"namespace App;\n\npublic class Calc\n{\n    public int Add(int a) { return a; }\n}\n"
    names, after = _applied("src/Calc.cs", scoped, CS_NEW)
    assert names == ["CalcException"]
    assert after == scoped + b"\n" + CS_NEW


def test_a_file_without_a_namespace_is_as_before() -> None:
    flat = CPP.replace(b"namespace geo {\n\n", b"").replace(b"\n}  // namespace geo\n", b"")
    names, after = _applied("src/shape.cpp", flat, PERIMETER)
    assert names == ["Square.perimeter"]
    assert after == flat + b"\n" + PERIMETER


@pytest.mark.parametrize(
    ("original", "block", "said"),
    [
        (
            b"namespace a {\nint f() { return 1; }\n}\n\nnamespace b {\nint g() { return 2; }\n}\n",
            b"int h() { return 3; }\n",
            "the file's definitions sit in namespace a, namespace b",
        ),
        (
            # (not `main`: an entry point sits at the top level whatever the namespace)
            b"namespace a {\nint f() { return 1; }\n}\n\nint run() { return 0; }\n",
            b"int h() { return 3; }\n",
            "the file's definitions sit in the top level, namespace a",
        ),
        (
            b"namespace a {\nint S::f() { return 1; }\n}\n\n"
            b"namespace b {\nint S::g() { return 2; }\n}\n",
            b"int S::h() { return 3; }\n",
            "its class is defined in namespace a, namespace b",
        ),
    ],
    ids=["two-namespaces", "namespace-and-top-level", "class-in-two-namespaces"],
)
def test_no_proof_of_the_namespace_holds_the_block(
    original: bytes, block: bytes, said: str
) -> None:
    found = align("m.cpp", block, original, Evidence())
    assert found.blocked is not None and said in found.blocked
    assert "cannot tell which namespace of m.cpp" in found.blocked


MAIN = b"int main() {\n    geo::Square s(2.0);\n    return s.area() > 0 ? 0 : 1;\n}\n"


def _links(tmp_path: Path, files: dict[str, bytes]) -> None:
    """g++ compiles and links `files` into a program (nothing checked without g++)."""
    compiler = shutil.which("g++")
    if compiler is None:
        return
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    sources = [rel for rel in files if rel.endswith(".cpp")]
    done = subprocess.run(
        [compiler, "-std=c++17", "-o", "program", *sources],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("entry", ["main", "wmain", "WinMain", "wWinMain", "DllMain"])
def test_a_new_entry_point_stays_at_the_top_level(entry: str) -> None:
    # rev4 item 3: `int main()` went into `namespace geo`, became geo::main, and the link
    # failed with "undefined reference to main".
    block = MAIN.replace(b"main", entry.encode())
    names, after = _applied("src/shape.cpp", CPP, block)
    assert names == [entry]
    assert after == CPP + b"\n" + block
    assert not _inside("src/shape.cpp", after, b"geo", block)


def test_a_program_given_a_new_main_links(tmp_path: Path) -> None:
    _names, after = _applied("src/shape.cpp", CPP, MAIN)
    _links(tmp_path, {"src/shape.hpp": HPP, "src/shape.cpp": after})


@pytest.mark.parametrize(
    "block",
    [
        b'extern "C" double square_area(double s) {\n    return geo::Square(s).area();\n}\n',
        b'extern "C" {\ndouble square_area(double s) {\n    return geo::Square(s).area();\n}\n}\n',
    ],
    ids=["extern-c-function", "extern-c-block"],
)
def test_a_new_extern_c_function_stays_at_the_top_level(block: bytes) -> None:
    names, after = _applied("src/shape.cpp", CPP, block)
    assert names == ["square_area"]
    assert after.startswith(CPP + b"\n")
    assert b"double square_area(double s) {" in after[len(CPP) :]


@pytest.mark.parametrize(
    "top",
    [
        b"int main() {\n    return 0;\n}\n",
        b'extern "C" int version() {\n    return 1;\n}\n',
        b'extern "C" {\nint version() {\n    return 1;\n}\nint patch() {\n    return 0;\n}\n}\n',
    ],
    ids=["main", "extern-c-function", "extern-c-block"],
)
@pytest.mark.parametrize("first", [False, True], ids=["after", "before"])
def test_the_files_own_top_level_entry_points_say_nothing_of_the_namespace(
    top: bytes, first: bool
) -> None:
    # A file with `namespace geo` and its `main` (or C interface) outside it, after or before
    # it: a new free function still goes into geo (it was held, the file's definitions read
    # as in two places); the namespace after a closed `extern "C" {}` is no part of it.
    original = top + b"\n" + CPP if first else CPP + b"\n" + top
    names, after = _applied("src/shape.cpp", original, TOTAL)
    assert names == ["geo.total"]
    assert _inside("src/shape.cpp", after, b"geo", TOTAL)


def test_an_out_of_class_definition_given_for_the_header_stays_inside_its_namespace() -> None:
    # (tm holds it first as a second definition when a source file defines it: see below)
    header = HPP.replace(b"    double perimeter() const;\n", b"")
    names, after = _applied("src/shape.hpp", header, PERIMETER)
    assert names == ["geo.Square.perimeter"]
    # The body in the header's own indentation unit (two spaces).
    written = PERIMETER.replace(b"    return", b"  return")
    assert _inside("src/shape.hpp", after, b"geo", written)
    assert b"    double side_;\n};\n\n" + written + b"\ndouble total" in after


def test_a_definition_given_for_the_header_that_the_source_file_has_is_held(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"src/shape.hpp": HPP, "src/shape.cpp": CPP})
    server.add(
        "Fix in src/shape.hpp:\n\n```cpp\ndouble Square::area() const {\n"
        "    return side_ * side_ * 1.0;\n}\n```\n"
    )
    proc = tm_ask(repo, server, "fix Square::area to return a double", "--repair", "0", "--accept")
    assert proc.returncode == 0, proc.stderr
    assert (repo / "src/shape.hpp").read_bytes() == HPP
    assert "geo.Square.area is defined in src/shape.cpp already" in proc.stdout


def test_end_to_end_the_written_definition_compiles(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"src/shape.hpp": HPP, "src/shape.cpp": CPP})
    server.add(
        "Add the implementation to src/shape.cpp:\n\n```cpp\n" + PERIMETER.decode() + "```\n"
    )
    proc = tm_ask(
        repo, server, "implement Square::perimeter in src/shape.cpp", "--repair", "0", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    assert tm(repo, "accept", "--all").returncode == 0
    written = (repo / "src/shape.cpp").read_bytes()
    assert _inside("src/shape.cpp", written, b"geo", PERIMETER)
    compiler = shutil.which("g++")
    if compiler is not None:
        done = subprocess.run(
            [compiler, "-std=c++17", "-fsyntax-only", "src/shape.cpp"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
