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


def test_listing_updated_by_its_changes_equals_the_listing_built_anew(tmp_path: Path) -> None:
    old = _listing(300)
    new = dict(old)
    del new["d/f000.py"], new["d/f150.py"], new["d/f299.py"]
    new["d/f010.py"] = "e" * 40
    new["a/first.py"] = "f" * 40
    new["d/f150x.py"] = "9" * 40
    new["z/last.py"] = "8" * 40
    changes = [(p, new.get(p)) for p in old.keys() | new.keys() if old.get(p) != new.get(p)]

    cache = StatCache(str(tmp_path))
    cache.set_listing(_TREE_A, old)
    f = tmp_path / "w"
    f.write_text("x")
    os.utime(f, (1000, 1000))  # long before the save: not racy, so lookups trust it
    cache.store("d/f020.py", stat_key(os.stat(f)), "c" * 40)
    cache.save()
    updated = StatCache(str(tmp_path))
    updated.update_listing(_TREE_B, changes)
    assert (updated.tree, updated.count) == (_TREE_B, len(new))
    assert updated.listing() == new
    assert updated.lookup("d/f020.py", stat_key(os.stat(f))) == "c" * 40  # stat data kept
    updated.save()
    again = StatCache(str(tmp_path))
    assert again.listing_of(_TREE_B) and again.listing() == new
