"""The containers of the entities a prompt wants come with them; finding them compares each
entity with the wanted spans that start inside it, not with every wanted one (#29)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import git, tm, write
from tinymem.edits import alignment
from tinymem.hydration import hydrate
from tinymem.ledger import current
from tinymem.records import Confidence, Source, State
from tinymem.repository import open_repo
from tinymem.statemap import EntityRecord, FileMeta, StateView


def _meta(spans: list[tuple[int, int]], states: list[bool]) -> FileMeta:
    entities = {
        f"e{i}": EntityRecord(
            f"e{i}",
            "function",
            start,
            start + length,
            "0" * 40,
            State.AUTHORITATIVE if live else State.TOMBSTONED,
            Confidence.CONFIRMED,
            Source.USER,
            "ep",
            "t",
        )
        for i, ((start, length), live) in enumerate(zip(spans, states, strict=False))
    }
    return FileMeta(
        "a.py", "0" * 40, "code", "python", "tree-sitter", True, None, entities=entities
    )


def _brute(meta: FileMeta, wanted: dict[str, float]) -> list[str]:
    """What `_Pool.add` did before: every live entity against every wanted one."""
    grown = dict(wanted)
    for outer in meta.live_entities():
        if outer.symbol not in grown and any(
            alignment.inside(outer, meta.entities[w]) for w in grown if w in meta.entities
        ):
            grown[outer.symbol] = 0.0
    return [s for s in grown if s not in wanted]


_SPAN = st.tuples(st.integers(0, 60), st.integers(0, 30))


@given(
    st.lists(_SPAN, max_size=14),
    st.lists(st.booleans(), min_size=14, max_size=14),
    st.sets(st.integers(0, 15)),
)
def test_holding_finds_what_comparing_every_pair_found(
    spans: list[tuple[int, int]], live: list[bool], picked: set[int]
) -> None:
    meta = _meta(spans, live)
    wanted = {f"e{i}": 1.0 for i in sorted(picked)}
    assert hydrate._holding(meta, wanted, hydrate._Nesting(meta)) == _brute(meta, wanted)


def _big_class(repo: Path) -> StateView:
    """A class of 400 methods, committed and initialised: the State Map at its tip."""
    methods = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(400))
    write(repo, "big.py", f"class Big:\n{methods}")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    assert tm(repo, "init").returncode == 0
    return current(open_repo(str(repo)))


def test_a_large_file_is_not_compared_pair_by_pair(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A class of 400 methods, 300 of them wanted (the neighbours of a strong match).
    view = _big_class(repo)
    compared = 0

    def counting(outer: EntityRecord, inner: EntityRecord) -> bool:
        nonlocal compared
        compared += 1
        return alignment.inside(outer, inner)

    monkeypatch.setattr(hydrate, "inside", counting)
    monkeypatch.setattr(hydrate, "_READ", {})
    pool = hydrate._Pool(view, set(), frozenset())
    got = pool.add({f"big.py::Big.m{i}": 1.0 for i in range(300)})
    assert {c.rec.symbol for c in got} == {"Big"} | {f"Big.m{i}" for i in range(300)}
    # The file's own containers, once (`_containers`: neighbours in span order); not
    # 401 entities by 300 wanted.
    assert compared <= 401


def test_a_file_read_before_is_not_walked_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tm serve`: the next request wanting members of the same file costs what it wants."""
    view = _big_class(repo)
    monkeypatch.setattr(hydrate, "_READ", {})
    first = hydrate._Pool(view, set(), frozenset()).add({"big.py::Big.m7": 1.0})
    assert {c.rec.symbol for c in first} == {"Big", "Big.m7"}
    bisected = 0
    original = hydrate.bisect_left

    def counting(*args: Any) -> int:
        nonlocal bisected
        bisected += 1
        return original(*args)

    monkeypatch.setattr(hydrate, "bisect_left", counting)
    again = hydrate._Pool(view, set(), frozenset()).add({"big.py::Big.m9": 1.0})
    assert {c.rec.symbol for c in again} == {"Big", "Big.m9"}
    assert bisected == 0  # not once per entity of the file


def test_a_new_tip_with_the_same_records_finds_them_without_a_lookup(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tm serve`: every request records an episode, so each hydrates at a new tip, but an
    ask leaves `meta/` as it was: a file's record is found where the last request found it."""
    write(repo, "pkg/sub/app.py", "class Box:\n    def run(self):\n        return 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    assert tm(repo, "init").returncode == 0
    store = open_repo(str(repo))
    monkeypatch.setattr(hydrate, "_READ", {})
    monkeypatch.setattr(hydrate, "_WHERE", {})
    before = current(store)
    assert hydrate._Pool(before, set(), frozenset()).add({"pkg/sub/app.py::Box.run": 1.0})
    assert tm(repo, "note", "add", "fact", "boxes run once").returncode == 0
    after = current(store)
    assert after.commit_id != before.commit_id
    looked: list[str] = []
    original = StateView.entry

    def counting(self: StateView, top: str, path: str) -> tuple[int, str] | None:
        looked.append(path)
        return original(self, top, path)

    monkeypatch.setattr(StateView, "entry", counting)
    got = hydrate._Pool(after, set(), frozenset()).add({"pkg/sub/app.py::Box.run": 1.0})
    assert {c.rec.symbol for c in got} == {"Box", "Box.run"}
    assert looked == []
