"""BM25 is summed over each term's postings, not by looking every hit doc up in every
term's postings (#29: on mypy a prompt of common words hits ~10k docs); the sums are the
same floats as doc by doc."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tinymem.hydration import relevance
from tinymem.hydration.corpus import MemoryCorpus, doc_flags
from tinymem.hydration.relevance import Request, doc_counts, score, terms
from tinymem.symbols import extract

REALCODE = Path(__file__).resolve().parents[1] / "data" / "realcode"
PROMPTS = [
    "explain how the session sends a request and follows redirects",
    "In `Flask.make_response`, accept a bytes body returned with a status",
    "make is_errors count warnings; Errors.report should keep the column",
    "the test of the case insensitive dict",
]


class _Counting(dict[int, int]):
    gets = 0

    def get(self, key: int, default: int | None = None) -> int | None:  # type: ignore[override]
        _Counting.gets += 1
        return super().get(key, default)


class _CountingCorpus(MemoryCorpus):
    def postings(self, term: str) -> dict[int, int]:
        return _Counting(super().postings(term))


def _corpus(corpus: MemoryCorpus) -> MemoryCorpus:
    for path in sorted(REALCODE.rglob("*.py")):
        rel = str(path.relative_to(REALCODE))
        data = path.read_bytes()
        for sym in extract(rel, data).symbols:
            text = data[sym.start : sym.end].decode("utf-8", "replace")
            counts = doc_counts(rel, sym.name, Counter(terms(text)))
            corpus.add(rel, sym.name, counts, doc_flags(rel, data[sym.start : sym.start + 200]))
    return corpus


@pytest.mark.parametrize("prompt", PROMPTS)
def test_the_sums_are_those_doc_by_doc(prompt: str) -> None:
    corpus = _corpus(MemoryCorpus())
    n, avgdl = corpus.size, corpus.avgdl
    postings = {t: corpus.postings(t) for t in Request.parse(prompt).terms}
    idf = {t: relevance._idf(n, len(p)) for t, p in postings.items()}
    docs = corpus.info({i for p in postings.values() for i in p} | {0, 1, 2})
    got = relevance._bm25(postings, idf, docs, avgdl)
    k1, b = relevance.K1, relevance.B
    hit = 0
    for i, d in docs.items():
        s = 0.0  # as `score` summed before: every doc against every term
        for t, p in postings.items():
            f = p.get(i)
            if f:
                s += idf[t] * f * (k1 + 1) / (f + k1 * (1 - b + b * d.length / avgdl))
        assert got.get(i, 0.0) == s
        hit += s > 0
    assert hit > 10


def test_postings_are_walked_not_probed() -> None:
    corpus = _corpus(_CountingCorpus())
    _Counting.gets = 0
    found = score(corpus, PROMPTS[0])
    assert sum(s > 0 for s in found.values()) > 50
    assert _Counting.gets == 0
