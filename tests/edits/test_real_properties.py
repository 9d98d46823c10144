"""Property: for any member of a real corpus file, a reply carrying that member with a changed
body — indented, dedented, re-indented, inside tm's excerpt, as a unified diff, as a
SEARCH/REPLACE block — changes exactly that member and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.edits.generated import FILES, SHAPES, changed, members, outcome
from tests.edits.realcorpus import CODE, make_repo
from tinymem.symbols import Symbol, extract


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One repository holding every corpus file at `<project>/<path>`."""
    where = tmp_path_factory.mktemp("props") / "repo"
    return make_repo(where, FILES, keep_project=True)


def _check(repo: Path, file: str, sym: Symbol, shape: str) -> None:
    verdict, detail = outcome(repo, file, sym, shape)
    assert verdict == "applied", (shape, sym.name, detail)


# Files with a class member to change (a module of functions, or of assignments, has none).
WITH_MEMBERS = [f for f in FILES if members(f)]


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_changed_member_changes_exactly_that_member(repo: Path, data: st.DataObject) -> None:
    file = data.draw(st.sampled_from(WITH_MEMBERS), label="file")
    sym = data.draw(st.sampled_from(members(file)), label="member")
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    assume(changed(file, (CODE / file).read_bytes(), sym) is not None)
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
