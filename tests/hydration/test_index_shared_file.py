"""One relevance index file, several processes: `tm serve` keeps it open while a `tm ask` in
another terminal brings it to its own tip, and the file may be damaged while it is open.
A long-lived process must rank what its own State Map holds, and never fail on a cache.

The other process is a second `RelevanceIndex` on the same file (its own SQLite connection,
as another process has): what SQLite tells one connection about another's commits is what
it tells a process about another process's."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import git, tm, write
from tinymem.hydration.corpus import Corpus
from tinymem.hydration.index import RelevanceIndex, corpus_for, open_index, rank_with
from tinymem.hydration.relevance import score
from tinymem.ledger import current
from tinymem.repository import open_repo
from tinymem.statemap import StateView

ZZ1 = "def alpha_one(x):\n    return x\n\n\ndef beta_two(y):\n    return y\n"
ZZ2 = "def aardvark_new(z):\n    return z\n\n\n" + ZZ1


def _top(corpus: Corpus, prompt: str) -> list[tuple[str, str, float]]:
    found = score(corpus, prompt)
    info = corpus.info(found)
    return sorted(((info[i].path, info[i].symbol, round(s, 6)) for i, s in found.items()))


def _served(view: StateView, cache_dir: str, prompt: str) -> list[tuple[str, str, float]]:
    """What the long-lived process ranks: its one open index, kept between prompts."""
    return rank_with(view, cache_dir, lambda corpus: _top(corpus, prompt))


def _truth(view: StateView, prompt: str) -> list[tuple[str, str, float]]:
    return _top(corpus_for(view, None), prompt)


def _other_process(cache_dir: str, view: StateView) -> None:
    other = RelevanceIndex(os.path.join(cache_dir, "relevance.sqlite"))
    other.refresh(view)
    other.close()


def _project(repo: Path) -> tuple[str, StateView]:
    write(repo, "aa.py", "def first_thing():\n    return 0\n")
    write(repo, "zz.py", ZZ1)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    r = open_repo(str(repo))
    assert r.cache_dir is not None
    return r.cache_dir, current(r)


def _adopted(repo: Path) -> StateView:
    write(repo, "zz.py", ZZ2)
    assert tm(repo, "adopt", "zz.py").returncode == 0
    return current(open_repo(str(repo)))


def test_docs_decoded_before_another_process_moved_the_file_are_not_used(repo: Path) -> None:
    cache_dir, before = _project(repo)
    open_index(cache_dir).close()  # no earlier test's state
    assert _served(before, cache_dir, "look at alpha_one and beta_two") == _truth(
        before, "look at alpha_one and beta_two"
    )
    after = _adopted(repo)
    # Another terminal's `tm ask` brings the file to the new tip first: the docs of zz.py are
    # written again under reused ids.
    _other_process(cache_dir, after)
    got = _served(after, cache_dir, "fix alpha_one")
    assert got == _truth(after, "fix alpha_one")
    assert ("zz.py", "alpha_one", max(s for _, _, s in got)) in got


def test_the_index_another_process_moved_away_is_brought_back(repo: Path) -> None:
    cache_dir, before = _project(repo)
    open_index(cache_dir).close()
    after = _adopted(repo)
    assert _served(after, cache_dir, "fix aardvark_new") == _truth(after, "fix aardvark_new")
    # Another terminal on another State Map (another branch, an older tip) moves the file
    # there; this process's State Map did not move: its prompt must not rank the other's.
    _other_process(cache_dir, before)
    assert _served(after, cache_dir, "fix aardvark_new") == _truth(after, "fix aardvark_new")
    assert any(sym == "aardvark_new" for _, sym, _ in _served(after, cache_dir, "aardvark_new"))


def test_a_damaged_index_that_still_opens_is_ranked_in_memory_and_rebuilt(repo: Path) -> None:
    cache_dir, view = _project(repo)
    for k in range(30):
        write(
            repo,
            f"m{k}.py",
            "".join(f"def fn_{k}_{j}(x):\n    return x + {j}\n\n\n" for j in range(40)),
        )
    assert tm(repo, "adopt", "--all").returncode == 0
    view = current(open_repo(str(repo)))
    index = open_index(cache_dir)
    index.close()
    want = _truth(view, "fix fn_5_9")
    assert _served(view, cache_dir, "fix fn_3_7") == _truth(view, "fix fn_3_7")
    path = os.path.join(cache_dir, "relevance.sqlite")
    # Checkpointed and closed (what a `tm ask` leaves): the pages live in the main file. The
    # postings' pages are damaged, not the header, schema and docs that opening it checks:
    # the damage shows only once a prompt reads a term.
    assert index._db is not None
    index._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = index._db.execute("PRAGMA page_size").fetchone()[0]
    pages = [n for (n,) in index._db.execute("SELECT pageno FROM dbstat WHERE name = 'postings'")]
    index.close()
    assert pages
    with open(path, "r+b") as f:
        for n in pages:
            f.seek((n - 1) * page)
            f.write(os.urandom(page))
    assert _served(view, cache_dir, "fix fn_5_9") == want  # no error: ranked in memory
    assert _served(view, cache_dir, "fix fn_5_9") == want  # the file built again
    assert index.tip is not None
