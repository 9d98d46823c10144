"""The symbol cache: extraction by blob id, so re-indexing an unchanged file is a lookup."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier
from pathlib import Path

from tinymem.gitobjects import blob_id
from tinymem.symbols import EXTRACTOR_VERSION, Extraction, Symbol, extract
from tinymem.symcache import SymbolCache

CODE = b"def f():\n    return 1\n"
# Not what extracting CODE gives: served from the cache only if it is looked up there.
MARKED = Extraction(
    "python", "tree-sitter", (Symbol("marked", "function", 0, 3, None),), True, None
)


def test_what_was_extracted_is_looked_up_by_blob_id_next_time(tmp_path: Path) -> None:
    oid = blob_id(CODE)
    first = SymbolCache(str(tmp_path))
    assert first.extract("a.py", oid, CODE) == extract("a.py", CODE)
    first.close()
    # Seed the row for that blob with a marked value: a second cache returns it unparsed.
    seeded = SymbolCache(str(tmp_path))
    seeded.put(seeded.key("a.py", oid), MARKED)
    seeded.close()
    again = SymbolCache(str(tmp_path))
    again.prefetch([("b.py", oid)])  # another path with the same content and language
    assert again.extract("b.py", oid, CODE) == MARKED
    assert again.extract("c.py", oid, CODE) == MARKED  # without prefetch: one query
    # The language is part of the key: the same bytes as Ruby are extracted anew.
    assert again.extract("a.rb", oid, CODE) == extract("a.rb", CODE)
    again.close()


def test_a_cache_with_nothing_of_this_version_is_not_asked(tmp_path: Path) -> None:
    oid = blob_id(CODE)
    old = SymbolCache(str(tmp_path))
    old.put(f"symbols-0+old:python:{oid}", MARKED)  # another extractor's row does not count
    old.close()
    assert not EXTRACTOR_VERSION.startswith("symbols-0+")
    fresh = SymbolCache(str(tmp_path))  # a first import: nothing of this version stored
    other = SymbolCache(str(tmp_path))
    other.put(other.key("x.py", oid), MARKED)  # another process stores a row meanwhile
    other.close()
    assert fresh.extract("x.py", oid, CODE) == extract("x.py", CODE)  # parsed, not asked
    fresh.close()  # and stored
    later = SymbolCache(str(tmp_path))  # now there are rows of this version: asked
    assert later.extract("x.py", oid, CODE) == extract("x.py", CODE)
    later.put(later.key("y.py", oid), MARKED)
    later.commit()
    assert later.extract("y.py", oid, CODE) == MARKED
    later.close()


def test_an_unreadable_cache_is_a_miss_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "symbols.sqlite").write_bytes(b"not a database" * 100)
    cache = SymbolCache(str(tmp_path))
    assert cache.extract("a.py", blob_id(CODE), CODE) == extract("a.py", CODE)
    cache.close()


def _open_extract_close(cache_dir: str, start: Barrier, code: bytes) -> None:
    start.wait()
    cache = SymbolCache(cache_dir)
    cache.extract("a.py", blob_id(code), code)
    cache.close()


def test_processes_opening_a_new_cache_at_once_all_store_what_they_extract(
    tmp_path: Path,
) -> None:
    # The workers of a first `tm init` open the new cache together; turning on WAL takes a
    # lock that SQLite refuses the losers at once (about one open in fifteen, measured),
    # which used to leave them without a cache for their whole life.
    ctx = multiprocessing.get_context("fork")
    for round_ in range(25):
        cache_dir = tmp_path / str(round_)
        cache_dir.mkdir()
        codes = [f"def f{round_}_{i}():\n    return {i}\n".encode() for i in range(4)]
        start = ctx.Barrier(len(codes))
        procs = [
            ctx.Process(target=_open_extract_close, args=(str(cache_dir), start, code))
            for code in codes
        ]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
            assert proc.exitcode == 0
        reader = SymbolCache(str(cache_dir))
        keys = [reader.key("a.py", blob_id(code)) for code in codes]
        assert sorted(reader.get_many(keys)) == sorted(keys)
        reader.close()


def test_files_with_nothing_to_extract_are_not_stored(tmp_path: Path) -> None:
    # Markdown has no grammar and no regex patterns: one entity whatever it holds, which
    # costs less to say than to look up.
    text = b"# Title\n\nSome prose.\n"
    cache = SymbolCache(str(tmp_path))
    assert cache.extract("README.md", blob_id(text), text) == extract("README.md", text)
    assert cache.extract("a.py", blob_id(CODE), CODE) == extract("a.py", CODE)
    cache.close()
    reader = SymbolCache(str(tmp_path))
    keys = [reader.key("README.md", blob_id(text)), reader.key("a.py", blob_id(CODE))]
    assert list(reader.get_many(keys)) == [keys[1]]
    reader.close()
