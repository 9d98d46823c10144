"""The docs that can be among a request's best, without scoring every doc its terms hit.

Hydration keeps at most `keep` docs (by score, then id), and none under `cut` times the best
score. On a repository whose few words run through everything (50,000 synthetic files, 60
words: a prompt hit ~46,000 docs) scoring every hit cost most of a prompt. Here each term's
postings are read best impact first (`Corpus.by_impact`, a bound of what a posting can add to
its doc's score), every doc met is scored exactly (all its terms, by the caller), and reading
stops once the bounds of what is still unread add up to less than the `keep`-th best score or
`cut` times the best: no unread doc can make either. A doc met whose known impact plus the
bounds of the other terms is already below that is never scored. This is the threshold
algorithm (Fagin et al.) with MaxScore's per-doc pruning; exact, not approximate: every doc
that could be kept is scored, with the scores the full ranking gives.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence

from tinymem.hydration.corpus import Corpus

__all__ = ["top_docs"]

_FIRST_PAGE = 64
_LAST_PAGE = 4096
# Bounds and scores are sums of the same products in another order: an ulp apart at most.
_SLACK = 1 + 1e-9
# Docs scored one by one before their bounds are summed by the corpus instead (`above`).
_SCORED_BOUND = 500
_BATCH = 64  # docs scored at once by their bounds: each batch may raise the threshold


class _Best:
    """The `keep` best scores met, and the least score a doc must reach to matter."""

    def __init__(self, keep: int, cut: float) -> None:
        self.keep = keep
        self.cut = cut
        self.heap: list[float] = []
        self.best = 0.0

    def note(self, s: float) -> None:
        if s <= 0:
            return  # never kept as relevant, whatever the rest
        self.best = max(self.best, s)
        if len(self.heap) < self.keep:
            heapq.heappush(self.heap, s)
        elif s > self.heap[0]:
            heapq.heapreplace(self.heap, s)

    @property
    def threshold(self) -> float:
        t = self.best * self.cut
        if len(self.heap) >= self.keep:
            t = max(t, self.heap[0])
        return t


def top_docs(
    corpus: Corpus,
    terms: Sequence[str],
    weights: Mapping[str, float],
    scale: float,
    *,
    keep: int,
    cut: float,
    scored: dict[int, float],
    exact: Callable[[list[int]], dict[int, float]],
) -> dict[int, float]:
    """`scored` (the docs scored already: those the request names, which no impact bounds)
    and every doc the postings of `terms` hold that could be among the `keep` best or reach
    `cut` times the best, each with its exact score (`exact`, for a batch of doc ids).

    A doc not in `scored` scores at most `scale` times the sum over its terms of the term's
    weight (idf) times the posting's impact: `scale` holds whatever factor greater than one
    the caller may still apply."""
    best = _Best(keep, cut)
    for s in scored.values():
        best.note(s)
    scale *= _SLACK
    named = len(scored)
    bound = {t: math.inf for t in terms}  # what an unread posting of t can add, at most
    after: dict[str, tuple[float, int] | None] = dict.fromkeys(terms)
    page = dict.fromkeys(terms, _FIRST_PAGE)
    passed: set[int] = set()  # met, and could not reach the threshold
    live = [t for t in terms if weights[t] > 0]
    if live and corpus.bounds_at_hand(live):
        # Each doc's bound costs no reading: the docs with the highest come first, and the
        # threshold rises with the first of them.
        _by_bounds(corpus, terms, weights, scale, keep, best, scored, exact)
        return scored
    while live:
        threshold = best.threshold
        if len(scored) - named > _SCORED_BOUND:
            _by_bounds(corpus, terms, weights, scale, keep, best, scored, exact)
            break
        if sum(bound[t] for t in live) * scale < threshold:
            break  # no doc left unread can reach the threshold
        t = max(live, key=bound.__getitem__)
        rows = corpus.by_impact(t, after[t], page[t])
        if len(rows) < page[t]:
            live.remove(t)
            bound[t] = 0.0
        page[t] = min(page[t] * 2, _LAST_PAGE)
        if rows:
            after[t] = rows[-1]
        weight = weights[t]
        others = sum(bound[u] for u in live if u != t)
        new: list[int] = []
        for impact, i in rows:
            if i in scored or i in passed:
                continue
            # Not met in another list yet: there it adds at most that list's bound.
            if (weight * impact + others) * scale < threshold:
                passed.add(i)
            else:
                new.append(i)
        if rows and t in live:
            bound[t] = weight * rows[-1][0]
        _score(new, exact, scored, best)
    return scored


def _score(
    ids: list[int],
    exact: Callable[[list[int]], dict[int, float]],
    scored: dict[int, float],
    best: _Best,
) -> None:
    """Score `ids` exactly into `scored`, each score raising the threshold as it may."""
    found = exact(ids)
    scored.update(found)
    for s in found.values():
        best.note(s)


def _by_bounds(
    corpus: Corpus,
    terms: Sequence[str],
    weights: Mapping[str, float],
    scale: float,
    keep: int,
    best: _Best,
    scored: dict[int, float],
    exact: Callable[[list[int]], dict[int, float]],
) -> None:
    """The best are not certain after reading this far: the words run through the corpus.
    Each doc's own bound, its postings' impacts summed by the corpus in one pass, then
    names the few worth scoring: the highest bounds first, a batch at a time, until the next
    bound is under the threshold their scores raised."""
    weighed = {t: weights[t] for t in terms}
    limit = 2 * keep
    rows = corpus.above(weighed, best.threshold / scale, limit)
    if not _score_down(rows, scale, exact, scored, best) and len(rows) == limit:
        rest = corpus.above(weighed, best.threshold / scale, None)
        _score_down(rest, scale, exact, scored, best)


def _score_down(
    rows: list[tuple[float, int]],
    scale: float,
    exact: Callable[[list[int]], dict[int, float]],
    scored: dict[int, float],
    best: _Best,
) -> bool:
    """Score the docs of `rows` (bound, doc; highest bound first) a batch at a time; True
    once the next bound cannot reach the threshold: neither can any after it."""
    for start in range(0, len(rows), _BATCH):
        batch = rows[start : start + _BATCH]
        if batch[0][0] * scale < best.threshold:
            return True
        _score([i for _, i in batch if i not in scored], exact, scored, best)
    return False
