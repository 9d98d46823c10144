"""Ranking that reads postings best impact first and stops once the best are certain (#29):
exactly the docs hydration keeps, with exactly their scores, on random corpora and prompts,
on a list in memory and on the index file; and it stops early on common words."""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import git, tm, write
from tinymem.hydration import hydrate, topk
from tinymem.hydration import index as index_module
from tinymem.hydration.corpus import FLAG_NONCODE, FLAG_STUB, FLAG_TEST, MemoryCorpus
from tinymem.hydration.index import RelevanceIndex
from tinymem.hydration.relevance import Request, score
from tinymem.ledger import current
from tinymem.repository import open_repo

REALCODE = Path(__file__).resolve().parents[1] / "data" / "realcode"
WORDS = ["cache", "token", "session", "retry", "get", "send", "parse", "node", "test", "make"]
DIRS = ["src", "lib", "tests", "vendor", "docs", "src/core", "typeshed/stdlib"]


def kept(
    found: Mapping[int, float], paths: Mapping[int, str], given: set[str], keep: int, cut: float
) -> dict[int, float]:
    """What `hydrate._score` keeps of a ranking (its loop, ids for keys)."""
    floor = max(found.values(), default=0.0) * cut
    out: dict[int, float] = {}
    for i in sorted(found, key=lambda i: (-found[i], i)):
        strong = found[i] > 0 and found[i] >= floor and len(out) < keep
        if strong or paths[i] in given:
            out[i] = found[i]
    return out


@st.composite
def corpora(draw: st.DrawFn) -> tuple[MemoryCorpus, list[str]]:
    corpus = MemoryCorpus()
    n_files = draw(st.integers(1, 8))
    paths = []
    for k in range(n_files):
        ext = draw(st.sampled_from(["py", "py", "pyi", "md", "ts"]))
        where = draw(st.sampled_from(["", *DIRS]))
        name = draw(st.sampled_from(WORDS)) + f"_{k}.{ext}"
        paths.append(f"{where}/{name}" if where else name)
    for _ in range(draw(st.integers(1, 40))):
        path = draw(st.sampled_from(paths))
        parts = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
        symbol = draw(st.sampled_from(["", "Cls.", "Other.Inner."])) + "_".join(parts)
        if draw(st.booleans()):
            symbol += draw(st.sampled_from(["#2", "#3"]))
        if draw(st.integers(0, 9)) == 0:
            symbol = "@file"
        counts = Counter(draw(st.lists(st.sampled_from(WORDS), max_size=30)))
        counts.update(parts * 3)
        flags = draw(st.sampled_from([0, 0, 0, FLAG_TEST, FLAG_STUB, FLAG_NONCODE]))
        corpus.add(path, symbol, counts, flags)
    return corpus, paths


prompts = st.lists(
    st.one_of(
        st.sampled_from(WORDS),
        st.sampled_from(WORDS).map(lambda w: f"`{w}`"),
        st.sampled_from(["Cls.get", "Other.Inner.send_cache", "src", "vendor", "lib/"]),
        st.sampled_from(["cache_1.py", "src/core", "the", "tests", "retry_token"]),
    ),
    min_size=1,
    max_size=6,
).map(" ".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpora(),
    prompts,
    st.integers(1, 12),
    st.sampled_from([0.0, 0.1, 0.5]),
    st.lists(st.integers(0, 7), max_size=2),
    st.sampled_from([0, 3, 1000]),
)
def test_the_docs_kept_and_their_scores_are_those_of_the_full_ranking(
    made: tuple[MemoryCorpus, list[str]],
    prompt: str,
    keep: int,
    cut: float,
    picks: list[int],
    one_by_one: int,
) -> None:
    """`one_by_one`: how many docs are scored as their postings are read before the rest
    is found by each doc's summed bound (`topk._SCORED_BOUND`): both ways are exact."""
    corpus, paths = made
    files = [paths[k % len(paths)] for k in picks]
    full = score(corpus, prompt, files=files)
    saved = topk._SCORED_BOUND
    topk._SCORED_BOUND = one_by_one
    try:
        pruned = score(corpus, prompt, files=files, keep=keep, cut=cut)
    finally:
        topk._SCORED_BOUND = saved
    assert all(pruned[i] == full[i] for i in pruned)  # the same floats, bit for bit
    where = {d.id: d.path for d in corpus.docs}
    want = kept(full, where, set(files), keep, cut)
    assert kept(pruned, where, set(files), keep, cut) == want


def _big_corpus(n: int) -> MemoryCorpus:
    """Entities named by two or three of twelve words, bodies of the same words: each word
    hits a large share of all docs, as on the 50k synthetic tree (#29)."""
    rng = random.Random(7)
    vocab = [*WORDS, "queue", "batch"]
    corpus = MemoryCorpus()
    for k in range(n):
        parts = rng.sample(vocab, rng.randint(2, 3))
        counts = Counter(rng.choice(vocab) for _ in range(rng.randint(0, 12)))
        counts.update(parts * 3)
        corpus.add(f"src/m{k % 50}.py", "_".join(parts) + f"_{k}", counts, 0)
    return corpus


class _Counted(MemoryCorpus):
    """Counts the docs ranking scores in full and the postings it reads by impact."""

    scored = 0
    read = 0

    def by_impact(
        self, term: str, after: tuple[float, int] | None, limit: int
    ) -> list[tuple[float, int]]:
        rows = super().by_impact(term, after, limit)
        _Counted.read += len(rows)
        return rows

    def tfs(self, ids: Sequence[int], terms: Iterable[str]) -> dict[int, dict[str, int]]:
        found = super().tfs(ids, terms)
        _Counted.scored += len(found)
        return found


@pytest.mark.parametrize(
    "prompt",
    [
        "explain how the session token cache decides when to retry",
        "make `Cls.get` parse the node",  # named: its bonus makes the threshold at once
    ],
)
def test_common_words_are_not_scored_in_every_doc_they_hit(prompt: str) -> None:
    corpus = _big_corpus(15000)
    counted = _Counted()
    counted.__dict__.update(corpus.__dict__)
    full = score(corpus, prompt)
    hits = sum(s > 0 for s in full.values())
    _Counted.scored = 0
    pruned = score(counted, prompt, keep=hydrate.MAX_CANDIDATES, cut=hydrate.MAP_CUT)
    where = {d.id: d.path for d in corpus.docs}
    assert kept(pruned, where, set(), 300, 0.1) == kept(full, where, set(), 300, 0.1)
    assert hits > 10000
    assert _Counted.scored < hits / 3


def test_a_named_entity_stops_the_walk_at_once() -> None:
    """Its bonus (+100) puts the threshold above what the words alone can add: the first
    page of each term's best postings is read, not the thousands of postings they have."""
    corpus = _big_corpus(15000)
    counted = _Counted()
    counted.__dict__.update(corpus.__dict__)
    name = corpus.docs[42].symbol
    prompt = f"make `{name}` retry the session cache"
    full = score(corpus, prompt)
    _Counted.scored = _Counted.read = 0
    pruned = score(counted, prompt, keep=hydrate.MAX_CANDIDATES, cut=hydrate.MAP_CUT)
    where = {d.id: d.path for d in corpus.docs}
    assert kept(pruned, where, set(), 300, 0.1) == kept(full, where, set(), 300, 0.1)
    assert max(pruned.values()) > 100
    assert sum(s > 0 for s in full.values()) > 10000
    terms = len([t for t in Request.parse(prompt).terms if corpus.postings(t)])
    assert _Counted.read <= 64 * terms
    assert _Counted.scored <= 64 * terms


def _init(repo: Path) -> None:
    shutil.copytree(REALCODE / "requests", repo / "requests")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0


INDEX_PROMPTS = [
    "make Session.send retry on a ConnectionError, see adapters.py",
    "explain how the session sends a request and follows redirects",
    "the test of the case insensitive dict `get`",
    "requests get the cookie jar from the response headers",
]


@pytest.mark.parametrize(("one_by_one", "kept_df"), [(1000, 10**9), (0, 10**9), (0, 1)])
def test_the_index_file_keeps_what_the_full_ranking_keeps(
    repo: Path, one_by_one: int, kept_df: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the index file (impact order, `df`, tfs read back, each doc's bound summed in
    lanes), after a change applied as a diff too: the same docs kept, the same scores.
    `kept_df` 1: every term's lanes are kept, so every prompt after the first starts from
    the summed bounds (`bounds_at_hand`)."""
    monkeypatch.setattr(topk, "_SCORED_BOUND", one_by_one)
    monkeypatch.setattr(index_module, "_KEPT_DF", kept_df)
    _init(repo)
    index = RelevanceIndex(str(repo / "index.sqlite"))

    def check() -> None:
        index.refresh(current(open_repo(str(repo))))
        where = {i: d.path for i, d in index.info(range(1, index.size + 400)).items()}
        for prompt in INDEX_PROMPTS:
            full = score(index, prompt)
            for keep, cut in ((3, 0.0), (20, 0.1), (300, 0.1)):
                pruned = score(index, prompt, keep=keep, cut=cut)
                assert all(pruned[i] == full[i] for i in pruned)
                assert kept(pruned, where, set(), keep, cut) == kept(full, where, set(), keep, cut)

    check()
    models = repo / "requests" / "src" / "requests" / "sessions.py"
    models.write_text(models.read_text() + "\n\ndef session_retry_token():\n    return 1\n")
    write(repo, "extra.py", "def zebra_session():\n    return 2\n")
    (repo / "requests" / "src" / "requests" / "certs.py").unlink()
    assert tm(repo, "adopt", "requests/src/requests/sessions.py", "extra.py").returncode == 0
    assert tm(repo, "adopt", "requests/src/requests/certs.py").returncode == 0
    check()
    index.close()
    db = sqlite3.connect(repo / "index.sqlite")
    counted = dict(db.execute("SELECT term, count(*) FROM postings GROUP BY term"))
    kept_df = dict(db.execute("SELECT term, n FROM df WHERE n > 0"))
    db.close()
    assert kept_df == counted  # counted up and down with the postings
