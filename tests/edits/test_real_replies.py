"""The reply corpus against real files of public projects (see realcorpus.py)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from tests.edits.realcorpus import Case, judge, load_cases, repos_for

CASES = load_cases()


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("realcode")
    return {group[0].setup: repo for repo, group in repos_for(CASES, base)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_reply(case: Case, repos: dict[str, Path]) -> None:
    verdict = judge(repos[case.setup], case)
    expected = case.expect
    if "applied" in expected:
        assert verdict.outcome == "applied", (verdict.detail, verdict.reasons)
    else:
        assert verdict.outcome == "blocked", (verdict.detail, verdict.reasons)
        words = str(expected["blocked"])
        assert any(words in r for r in verdict.reasons), verdict.reasons


def test_the_corpus_covers_the_languages_and_shapes() -> None:
    languages = collections.Counter(c.language for c in CASES)
    assert len(CASES) >= 40, len(CASES)
    assert len(languages) >= 5, languages
