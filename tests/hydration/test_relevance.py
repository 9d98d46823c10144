"""Ranking: qualified names first, common English words and vendored code count little."""

from __future__ import annotations

from tinymem.hydration.relevance import Doc, rank, vendored


def _docs() -> list[Doc]:
    return [
        Doc(
            "mypy/errors.py::Errors.is_errors",
            "mypy/errors.py",
            "Errors.is_errors",
            "def is_errors",
        ),
        Doc("mypy/errors.py::Errors.report", "mypy/errors.py", "Errors.report", "def report"),
        Doc(
            "mypy/typeshed/stdlib/dis.pyi::Instruction.make",
            "mypy/typeshed/stdlib/dis.pyi",
            "Instruction.make",
            "def make",
        ),
        Doc("mypy/build.py::Builder.make", "mypy/build.py", "Builder.make", "def make"),
    ]


def test_a_common_word_in_the_request_is_little_evidence() -> None:
    scores = rank(_docs(), "make Errors.is_errors return early when there are none")
    best = max(scores, key=scores.__getitem__)
    assert best == "mypy/errors.py::Errors.is_errors"
    assert scores["mypy/build.py::Builder.make"] < 20
    assert scores["mypy/typeshed/stdlib/dis.pyi::Instruction.make"] < 20


def test_a_common_word_in_backticks_counts_in_full() -> None:
    plain = rank(_docs(), "fix make so it caches")["mypy/build.py::Builder.make"]
    quoted = rank(_docs(), "fix `make` so it caches")["mypy/build.py::Builder.make"]
    assert quoted > plain + 30


def test_vendored_code_ranks_below_the_projects_own() -> None:
    scores = rank(_docs(), "fix `make`")
    assert (
        scores["mypy/build.py::Builder.make"]
        > 2 * scores["mypy/typeshed/stdlib/dis.pyi::Instruction.make"]
    )


def test_vendored_paths() -> None:
    assert vendored("node_modules/ky/index.js")
    assert vendored("src/vendor/lib.go")
    assert vendored("mypy/typeshed/stdlib/os/__init__.pyi")
    assert vendored("types/index.d.ts")
    assert not vendored("src/vendors.py") and not vendored("app/views.py")
