from __future__ import annotations

import os
from pathlib import Path

from tinymem.statcache import StatCache, stat_key

_TREE_A = "a" * 40
_TREE_B = "b" * 40


def _listing(n: int) -> dict[str, str]:
    return {f"d/f{i:03}.py": f"{i:040x}" for i in range(n)}


def test_round_trip_with_the_count_in_the_header(tmp_path: Path) -> None:
    cache = StatCache(str(tmp_path))
    cache.set_listing(_TREE_A, _listing(300))
    f = tmp_path / "w"
    f.write_text("x")
    key = stat_key(os.stat(f))
    cache.store("d/f007.py", key, "c" * 40)
    cache.save()
    again = StatCache(str(tmp_path))
    assert (again.tree, again.count, again.loaded) == (_TREE_A, 300, False)
    assert again.listing_of(_TREE_A) and again.loaded
    assert again.snapshots_for(["d/f001.py", "nope.py"]) == {"d/f001.py": f"{1:040x}"}
    assert len(again.listing()) == 300


def test_columns_from_a_cache_replaced_after_the_header_was_read_are_not_used(
    tmp_path: Path,
) -> None:
    first = StatCache(str(tmp_path))
    first.set_listing(_TREE_A, _listing(3))
    first.save()
    reader = StatCache(str(tmp_path))  # header of tree A read, columns not yet
    writer = StatCache(str(tmp_path))
    writer.set_listing(_TREE_B, _listing(5))
    writer.save()
    assert not reader.listing_of(_TREE_A)  # columns are tree B's now: the cache is empty
    assert reader.tree is None and reader.snapshots_for(["d/f001.py"]) == {}


def test_garbage_and_truncated_caches_are_empty(tmp_path: Path) -> None:
    cache = StatCache(str(tmp_path))
    cache.set_listing(_TREE_A, _listing(50))
    cache.save()
    data = (tmp_path / "statcache").read_bytes()
    (tmp_path / "statcache").write_bytes(data[: len(data) // 2])
    truncated = StatCache(str(tmp_path))
    assert not truncated.listing_of(_TREE_A)
    (tmp_path / "statcache").write_bytes(b"\x00garbage")
    assert StatCache(str(tmp_path)).tree is None
