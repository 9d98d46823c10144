"""Property: for any member of a real corpus file, a reply carrying that member with a changed
body — indented, dedented, re-indented, inside tm's excerpt, as a unified diff, as a
SEARCH/REPLACE block — changes exactly that member and nothing else."""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.edits.realcorpus import CODE, make_repo
from tinymem.accept import plan
from tinymem.edits.proposals import build
from tinymem.edits.reply import parse_reply
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.hydration.excerpts import render
from tinymem.ledger import current
from tinymem.records import entity_key
from tinymem.repository import open_repo
from tinymem.symbols import Symbol, analyze, extract, language_for_path

FILES = sorted(
    str(p.relative_to(CODE))
    for p in CODE.rglob("*")
    if p.is_file() and "licenses" not in p.parts and p.suffix != ".md"
)
SHAPES = ["indented", "dedented", "reindented", "excerpt", "udiff", "search-replace"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One repository holding every corpus file at `<project>/<path>`."""
    where = tmp_path_factory.mktemp("props") / "repo"
    return make_repo(where, FILES, keep_project=True)


def _members(file: str) -> list[Symbol]:
    data = (CODE / file).read_bytes()
    return [
        s
        for s in extract(file, data).symbols
        if s.parent is not None and data.count(b"\n", s.start, s.end) >= 2
    ]


def _lines_of(data: bytes, sym: Symbol) -> tuple[int, int]:
    """Byte range of the whole lines holding `sym`."""
    start = data.rfind(b"\n", 0, sym.start) + 1
    end = data.find(b"\n", sym.end)
    return start, len(data) if end < 0 else end + 1


def _changed(file: str, data: bytes, sym: Symbol) -> bytes | None:
    """The file with a comment line put before the member's last line."""
    language = language_for_path(file)
    lead = b"#" if language in ("python", "ruby") else b"//"
    last = data.rfind(b"\n", sym.start, sym.end) + 1
    # At the indentation of the line it precedes, as a model writes a comment: a comment
    # at column 0 inside a method is valid Python that no one writes.
    closing = data[last : sym.end]
    indent = closing[: len(closing) - len(closing.lstrip(b" \t"))]
    new = data[:last] + indent + lead + b" tm-property changed\n" + data[last:]
    names = [s.name for s in extract(file, data).symbols]
    if [s.name for s in extract(file, new).symbols] != names:
        return None
    return new if analyze(language or "", new).clean else None


def _reindent(text: str) -> str:
    """Another indentation unit, as an editor converts it: tabs become four spaces; in a text
    indented by fours each four becomes two, else each two becomes four (alignment spaces
    past the last whole unit are kept)."""
    widths = [len(x) - len(x.lstrip(" ")) for x in text.split("\n") if x.strip()]
    fours = all(w % 4 == 0 for w in widths)
    out = []
    for line in text.split("\n"):
        stripped = line.lstrip(" \t")
        ws = line[: len(line) - len(stripped)]
        if "\t" in ws:
            ws = ws.replace("\t", "    ")
        elif fours:
            ws = "  " * (len(ws) // 4)
        else:
            ws = "    " * (len(ws) // 2) + " " * (len(ws) % 2)
        out.append(ws + stripped)
    return "\n".join(out)


def _reply(shape: str, file: str, old: bytes, new: bytes, sym: Symbol, new_sym: Symbol) -> str:
    path = file
    start, end = _lines_of(new, new_sym)
    member = new[start:end].decode()
    if shape == "indented":
        return f"```code path={path}\n{member}```\n"
    if shape == "dedented":
        return f"```code path={path}\n{textwrap.dedent(member)}```\n"
    if shape == "reindented":
        return f"```code path={path}\n{_reindent(textwrap.dedent(member))}```\n"
    if shape == "excerpt":
        text = render(language_for_path(path), new, [(new_sym.start, new_sym.end)])
        return f"```code path={path}\n{text}\n```\n"
    if shape == "udiff":
        lines = difflib.unified_diff(
            [x + "\n" for x in old.decode().split("\n")[:-1]],
            [x + "\n" for x in new.decode().split("\n")[:-1]],
            f"a/{path}",
            f"b/{path}",
        )
        return "```diff\n" + "".join(lines) + "```\n"
    o_start, o_end = _lines_of(old, sym)
    search = old[o_start:o_end].decode()
    return f"{path}\n```\n<<<<<<< SEARCH\n{search}=======\n{member}>>>>>>> REPLACE\n```\n"


def _normal(text: bytes) -> list[bytes]:
    return [line.strip() for line in text.split(b"\n") if line.strip()]


def _check(repo: Path, file: str, sym: Symbol, shape: str) -> None:
    old = (CODE / file).read_bytes()
    new = _changed(file, old, sym)
    assert new is not None
    new_sym = {s.name: s for s in extract(file, new).symbols}[sym.name]
    reply = _reply(shape, file, old, new, sym, new_sym)

    handle = open_repo(str(repo))
    view = current(handle)
    meta = view.meta(file)
    assert meta is not None
    shown = {entity_key(file, sym.name): meta.entities[sym.name].artifact}
    writer = ObjectWriter(handle.git)
    outcome = build(
        view, writer, handle.workdir, parse_reply(reply), verify(handle, view), shown, "p"
    )
    writer.flush()
    proposals = [p for p in outcome.proposals if p.path == file]
    assert proposals, (shape, sym.name, reply[:300])
    result = plan(handle, view, proposals)
    assert all(c.ok for c in result.checks), [
        (c.blocked.gate, c.blocked.detail) for c in result.checks if c.blocked
    ]
    after = result.files[file].after
    assert after is not None
    if shape in ("indented", "excerpt", "udiff", "search-replace"):
        assert after == new, (shape, sym.name)
        return
    # Dedented or re-indented: written back in the file's indentation. Every other
    # definition keeps its bytes; the member holds the new text (up to whitespace).
    before_syms = {s.name: old[s.start : s.end] for s in extract(file, old).symbols}
    after_syms = {s.name: after[s.start : s.end] for s in extract(file, after).symbols}
    assert set(after_syms) == set(before_syms)
    for name, text in before_syms.items():
        inside = name == sym.name or name.startswith(sym.name + ".")
        if not inside and not sym.name.startswith(name + "."):
            assert after_syms[name] == text, (shape, sym.name, name)
    assert _normal(after_syms[sym.name]) == _normal(new[new_sym.start : new_sym.end])
    language = language_for_path(file)
    assert analyze(language or "", after).clean


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_changed_member_changes_exactly_that_member(repo: Path, data: st.DataObject) -> None:
    file = data.draw(st.sampled_from(FILES), label="file")
    sym = data.draw(st.sampled_from(_members(file)), label="member")
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    assume(_changed(file, (CODE / file).read_bytes(), sym) is not None)
    _check(repo, file, sym, shape)


# Cases the property found (each once wrote wrong code or blocked a right reply), kept so
# they are tried on every run, not only when hypothesis happens to draw them.
FOUND = [
    # a namespace given without the file's `using` lines was taken as the whole file
    ("pythonnet/src/runtime/PythonException.cs", "Python.Runtime", "indented"),
    # a class excerpt holding its only method replaced the class, docstring and fields gone
    ("mypy/mypy/errors.py", "CompileError.__init__", "excerpt"),
    # the file's own comment "... the template here" was read as an elision marker
    ("cli11/include/CLI/Option.hpp", "CLI.Option", "indented"),
    # lines inside a template literal's `${...}` lost their indentation
    (
        "openai-node/src/lib/AbstractChatCompletionRunner.ts",
        "AbstractChatCompletionRunner._runFunctions",
        "indented",
    ),
    # a Rust trait method's signature, written alone, parses only inside a trait
    ("anyhow/src/context.rs", "ext.StdError.ext_context", "dedented"),
    ("anyhow/src/context.rs", "ext.StdError.ext_context", "reindented"),
]


@pytest.mark.parametrize(("file", "name", "shape"), FOUND)
def test_found_by_the_property(repo: Path, file: str, name: str, shape: str) -> None:
    sym = {s.name: s for s in extract(file, (CODE / file).read_bytes()).symbols}[name]
    _check(repo, file, sym, shape)
