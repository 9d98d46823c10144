"""Per-doc sums of many small integers, added in C by CPython's big integers.

Ranking a prompt whose words run through a large tree (50,000 files: four words in ~40,000
docs each) sums ~160,000 postings by doc. SQLite's GROUP BY took ~0.15 s of it, most of it
handing each row to Python; a dict in Python is no faster. Here a term's postings are one
integer of 32-bit lanes, lane `doc` holding the posting's impact rounded up to a small
integer: adding two terms is one addition of two integers, weighting a term one
multiplication, and no lane carries into the next while the lanes' sum stays below 2**32.
The docs with the highest sums are then found in the sum's bytes: the top byte of each lane
by C-level counting and matching, the few lanes near the cut read one by one.

What a lane holds only ever rounds up, so a doc's sum here is an upper bound of its sum in
floats: callers that score the docs they get exactly stay exact.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence

__all__ = ["QUANT", "best_lanes", "multipliers", "vector"]

QUANT = 4096  # a lane of one term holds 1..QUANT
_LANE_BYTES = 4
_LANE_MAX = 2**32 - 1
# The top byte of a lane, at its offset in the lane's bytes.
_TOP = _LANE_BYTES - 1 if sys.byteorder == "little" else 0
# C's unsigned int is 4 bytes wherever CPython runs today; unsigned long is the fallback.
_UINT = memoryview(bytes(8)).cast("I").itemsize == _LANE_BYTES
# Weights rounded to integers no coarser than 1/_MIN_STEPS of the largest: past this many
# terms in one sum, lanes would have to be wider (the caller sums another way).
_MIN_STEPS = 256
_STRIDE = 16


def vector(pairs: Iterable[tuple[int, int]], lanes: int) -> int:
    """The integer whose lane `doc` holds `q`, for each (doc, q) (0 < q <= QUANT, doc <
    lanes); every other lane 0."""
    buf = bytearray(_LANE_BYTES * lanes)
    view = _lanes(buf)
    for doc, q in pairs:
        view[doc] = q
    view.release()
    return int.from_bytes(buf, sys.byteorder)


def multipliers(ratios: Sequence[float]) -> tuple[list[int], float] | None:
    """Integer multipliers of terms whose lanes hold up to QUANT, and the scale `c` they
    stand for: multiplier k >= ratios[k] * c, so a lane's weighted sum is at least `c` times
    the sum of ratio times lane; their lanes' sum stays below 2**32. None when there are too
    many terms for lanes this wide (or a ratio that is not positive)."""
    if not ratios or min(ratios) <= 0:
        return None
    steps = _LANE_MAX // (len(ratios) * QUANT)
    if steps < _MIN_STEPS:
        return None
    # One step kept spare: a float product a hair over `steps` would round up past it.
    c = (steps - 1) / max(ratios)
    return [min(steps, max(1, math.ceil(r * c))) for r in ratios], c


def best_lanes(total: int, at_least: int, limit: int | None) -> list[tuple[int, int]]:
    """(value, lane) of the lanes of `total` whose value is positive and at least
    `at_least`, highest value first (ties: the higher lane first); the `limit` first of
    them (all with None)."""
    floor = max(at_least, 1)
    if floor > _LANE_MAX or total <= 0:
        return []
    size = -(-total.bit_length() // (8 * _LANE_BYTES)) * _LANE_BYTES
    data = total.to_bytes(size, sys.byteorder)
    values = _lanes(data)
    tops = data[_TOP::_LANE_BYTES]
    low = floor >> 24
    cut = low if limit is None else max(low, _guess(tops, low, limit))
    found = _from(tops, cut)
    if limit is not None and len(found) < limit and cut > low:
        # The sample guessed high. Any cut with `limit` lanes at or above it is sound: the
        # lanes below it come after all of those.
        seen = len(found)
        while cut > low and seen < limit:
            cut -= 1
            seen += tops.count(cut)
        found = _from(tops, cut)
    best = [(values[i], i) for i in found if values[i] >= floor]
    best.sort(reverse=True)
    return best if limit is None else best[:limit]


def _guess(tops: bytes, low: int, limit: int) -> int:
    """A top byte with about twice `limit` lanes at or above it, from every 16th lane's."""
    counts = Counter(tops[::_STRIDE])
    seen = 0
    for top in sorted(counts, reverse=True):
        seen += counts[top] * _STRIDE
        if seen >= 2 * limit or top <= low:
            return top
    return low


def _from(tops: bytes, cut: int) -> list[int]:
    """The lanes whose top byte is `cut` or more (matched in C)."""
    pattern = re.compile(b"[" + re.escape(bytes([cut])) + b"-\xff]")
    return [m.start() for m in pattern.finditer(tops)]


def _lanes(data: bytes | bytearray) -> memoryview[int]:
    return memoryview(data).cast("I") if _UINT else memoryview(data).cast("L")
