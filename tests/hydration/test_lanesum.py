"""Per-doc sums in the lanes of one integer (`lanesum`, #29): the best lanes are those a sort
finds, weights rounded to integers never round a bound down, and the index's `above` on
them names every doc SQLite's sum names, with a bound no lower."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import tm, write
from tests.hydration.test_topk import _init
from tinymem.hydration import index as index_module
from tinymem.hydration.index import RelevanceIndex
from tinymem.hydration.lanesum import QUANT, best_lanes, multipliers, vector
from tinymem.ledger import current
from tinymem.repository import open_repo

# Values spread over all four bytes of a lane, and bunched near one value (many equal top
# bytes: the cut falls inside one of them).
_values = st.one_of(st.integers(0, 2**32 - 1), st.integers(0, 300), st.integers(2**24, 2**24 + 9))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_values, max_size=400),
    st.one_of(st.integers(0, 2**33), st.integers(0, 400)),
    st.one_of(st.none(), st.integers(1, 50)),
)
def test_the_best_lanes_are_those_a_sort_finds(
    values: list[int], at_least: int, limit: int | None
) -> None:
    total = sum(v << (32 * i) for i, v in enumerate(values))
    want = sorted(((v, i) for i, v in enumerate(values) if v >= max(at_least, 1)), reverse=True)
    if limit is not None:
        want = want[:limit]
    assert best_lanes(total, at_least, limit) == want


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(0, 5000), st.integers(1, QUANT), max_size=200))
def test_a_vector_holds_each_value_in_its_lane(pairs: dict[int, int]) -> None:
    lanes = vector(pairs.items(), 5001)
    assert best_lanes(lanes, 1, None) == sorted(((q, d) for d, q in pairs.items()), reverse=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(1e-6, 1e6), min_size=1, max_size=2000))
def test_rounded_weights_never_round_a_bound_down_nor_overflow_a_lane(
    ratios: list[float],
) -> None:
    made = multipliers(ratios)
    if made is None:
        assert len(ratios) * QUANT * 256 > 2**32
        return
    factors, c = made
    assert all(k >= r * c for k, r in zip(factors, ratios, strict=True))
    assert sum(factors) * QUANT <= 2**32 - 1  # every lane at its most: no carry
    # Fine enough that the bounds stay useful: the largest weight has hundreds of steps.
    assert max(factors) >= 255


def test_weights_that_are_not_positive_are_left_to_another_sum() -> None:
    assert multipliers([1.0, 0.0]) is None
    assert multipliers([]) is None


WEIGHTS = [
    {"session": 1.7, "request": 0.4, "cookie": 2.5},
    {"get": 0.9},
    {"the": 0.01, "response": 3.0, "header": 1.1, "missing_word": 1.0},
]


def _agrees(index: RelevanceIndex) -> None:
    """The lanes' `above` against SQLite's sum: every doc SQLite names, with a bound no
    lower (and only a rounding higher); the docs of the first `limit` are the best."""
    for weights in WEIGHTS:
        summed = {d: b for b, d in index._summed(weights, 0.0, None)}
        db = index._db_open()
        most = {
            t: w
            * (
                db.execute("SELECT max(impact) FROM postings WHERE term = ?", (t,)).fetchone()[0]
                or 0
            )
            for t, w in weights.items()
        }
        # Each term's impact rounds up by 1/QUANT of its highest, its weight by 1/255 at most.
        slack = sum(most.values()) / (QUANT - 1) + len(most) * max(most.values()) / 255
        for at_least in (0.0, 1.0, 4.0):
            got = {d: b for b, d in index.above(weights, at_least, None)}
            want = {d for d, b in summed.items() if b >= at_least}
            assert want <= got.keys()
            for d, b in got.items():
                assert summed[d] * (1 - 1e-9) <= b <= summed[d] + slack
        best = index.above(weights, 0.0, 10)
        bounds = sorted(got_b for got_b, _ in index.above(weights, 0.0, None))[::-1]
        assert [b for b, _ in best] == bounds[:10]


@pytest.mark.parametrize("kept_df", [1, 10**9])
def test_the_index_sums_in_lanes_what_sqlite_sums(
    repo: Path, kept_df: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kept_df` 1: every term's lanes are kept between prompts, and after a change those of
    the terms it touched are made again (a kept one would hold removed docs, or miss new)."""
    monkeypatch.setattr(index_module, "_KEPT_DF", kept_df)
    _init(repo)
    index = RelevanceIndex(str(repo / "index.sqlite"))
    index.refresh(current(open_repo(str(repo))))
    _agrees(index)
    assert bool(index._lanes) == (kept_df == 1)
    # A new file only: no doc removed, the terms of the new docs alone changed.
    write(repo, "extra.py", "def response_session_cookie():\n    return 2\n")
    assert tm(repo, "adopt", "extra.py").returncode == 0
    index.refresh(current(open_repo(str(repo))))
    _agrees(index)
    sessions = repo / "requests" / "src" / "requests" / "sessions.py"
    sessions.write_text(sessions.read_text() + "\n\ndef session_cookie_header():\n    return 1\n")
    (repo / "requests" / "src" / "requests" / "structures.py").unlink()
    assert tm(repo, "adopt", "requests/src/requests/sessions.py").returncode == 0
    assert tm(repo, "adopt", "requests/src/requests/structures.py").returncode == 0
    index.refresh(current(open_repo(str(repo))))
    _agrees(index)
    index.close()


def test_lanes_kept_are_dropped_when_another_process_writes_the_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process (a `tm ask` in another terminal) moving the shared file to its own
    tip: nothing says which terms changed, so no lanes are trusted."""
    monkeypatch.setattr(index_module, "_KEPT_DF", 1)
    _init(repo)
    path = str(repo / "index.sqlite")
    ours, theirs = RelevanceIndex(path), RelevanceIndex(path)
    before = current(open_repo(str(repo)))
    ours.refresh(before)
    _agrees(ours)
    assert ours._lanes
    write(repo, "extra.py", "def response_session_cookie_get():\n    return 2\n")
    assert tm(repo, "adopt", "extra.py").returncode == 0
    theirs.refresh(current(open_repo(str(repo))))
    ours.refresh(current(open_repo(str(repo))))
    assert "session" not in ours._lanes
    _agrees(ours)
    ours.close()
    theirs.close()
