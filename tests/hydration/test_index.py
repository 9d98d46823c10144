"""The persistent relevance index: rebuilt silently when damaged, brought to a new State Map
tip by the change alone, and ranking from it as from a list in memory."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import git, tm, write
from tinymem.hydration.corpus import MemoryCorpus
from tinymem.hydration.index import (
    INDEX_VERSION,
    RelevanceIndex,
    corpus_for,
    open_index,
    ranking_with,
)
from tinymem.hydration.relevance import score
from tinymem.ledger import current
from tinymem.repository import open_repo

REALCODE = Path(__file__).resolve().parents[1] / "data" / "realcode"


def _init(repo: Path) -> None:
    shutil.copytree(REALCODE / "requests", repo / "requests")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0


def _index_file(repo: Path) -> Path:
    return repo / ".git" / "tinymem" / "relevance.sqlite"


def _ranked(repo: Path, prompt: str) -> list[tuple[str, str, float]]:
    r = open_repo(str(repo))
    corpus = corpus_for(current(r), r.cache_dir)
    found = score(corpus, prompt)
    info = corpus.info(found)
    return sorted(((info[i].path, info[i].symbol, round(s, 6)) for i, s in found.items()))


def _ranked_in_turn(repo: Path, prompt: str) -> list[tuple[str, str, float]]:
    r = open_repo(str(repo))
    with ranking_with(current(r), r.cache_dir) as corpus:
        found = score(corpus, prompt)
        info = corpus.info(found)
    return sorted(((info[i].path, info[i].symbol, round(s, 6)) for i, s in found.items()))


def _fresh(repo: Path, prompt: str) -> list[tuple[str, str, float]]:
    """The same ranking from an index built in memory from the State Map."""
    r = open_repo(str(repo))
    corpus = corpus_for(current(r), None)
    assert isinstance(corpus, MemoryCorpus)
    found = score(corpus, prompt)
    info = corpus.info(found)
    return sorted(((info[i].path, info[i].symbol, round(s, 6)) for i, s in found.items()))


PROMPT = "make Session.send retry on a ConnectionError, see adapters.py"


def test_the_index_ranks_as_the_state_map_in_memory_does(repo: Path) -> None:
    _init(repo)
    assert _ranked(repo, PROMPT) == _fresh(repo, PROMPT)
    assert _index_file(repo).exists()


@pytest.mark.parametrize("damage", ["truncate", "garble", "other-version", "delete"])
def test_a_damaged_index_is_rebuilt_without_a_word(repo: Path, damage: str) -> None:
    _init(repo)
    expected = _fresh(repo, PROMPT)
    assert _ranked(repo, PROMPT) == expected
    open_index(open_repo(str(repo)).cache_dir).close()
    path = _index_file(repo)
    if damage == "truncate":
        with open(path, "r+b") as f:
            f.truncate(4096 + 100)
    elif damage == "garble":
        data = bytearray(path.read_bytes())
        data[:4096] = os.urandom(4096)
        path.write_bytes(bytes(data))
    elif damage == "other-version":
        # Another version's tables, with other columns.
        db = sqlite3.connect(path)
        db.execute("UPDATE info SET value = '0' WHERE key = 'version'")
        db.execute("DROP TABLE docs")
        db.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT)")
        db.commit()
        db.close()
    else:
        path.unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    proc = tm(repo, "ask", PROMPT, "--dry-run", "--json")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert _ranked(repo, PROMPT) == expected
    assert isinstance(open_index(open_repo(str(repo)).cache_dir), RelevanceIndex)
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM info WHERE key = 'version'").fetchone() == (INDEX_VERSION,)
    db.close()


def test_a_new_tip_is_applied_as_its_change(repo: Path) -> None:
    _init(repo)
    index = RelevanceIndex(str(_index_file(repo)))
    r = open_repo(str(repo))
    index.refresh(current(r))
    db = sqlite3.connect(_index_file(repo))
    before = dict(db.execute("SELECT path || '::' || symbol, id FROM docs"))
    # One file changes, one is added: only their docs are written again.
    models = repo / "requests" / "src" / "requests" / "certs.py"
    models.write_text(models.read_text() + "\n\ndef brand_new_helper():\n    return 1\n")
    write(repo, "extra.py", "def zebra_quux():\n    return 2\n")
    assert tm(repo, "adopt", "requests/src/requests/certs.py", "extra.py").returncode == 0
    index.refresh(current(open_repo(str(repo))))
    after = dict(db.execute("SELECT path || '::' || symbol, id FROM docs"))
    changed = {k for k in after if before.get(k) != after[k]}
    assert changed, "the new entities are indexed"
    assert all(k.startswith(("requests/src/requests/certs.py::", "extra.py::")) for k in changed)
    assert "extra.py::zebra_quux" in after
    unchanged = [k for k in before if not k.startswith("requests/src/requests/certs.py::")]
    assert all(after[k] == before[k] for k in unchanged)
    db.close()
    # And it ranks as an index built from nothing.
    index.close()
    assert _ranked(repo, "zebra_quux and brand_new_helper") == _fresh(
        repo, "zebra_quux and brand_new_helper"
    )


def test_an_index_is_kept_per_cache_directory(tmp_path: Path) -> None:
    assert open_index(str(tmp_path)) is open_index(str(tmp_path))


def test_request_threads_share_one_index_and_take_turns(repo: Path) -> None:
    """`tm serve` answers on several threads: one index per thread held a connection and up to
    200,000 decoded docs each. They share one now, one prompt's ranking at a time, and rank
    as one thread alone does."""
    from concurrent.futures import ThreadPoolExecutor

    _init(repo)
    cache_dir = open_repo(str(repo)).cache_dir
    alone = _ranked(repo, PROMPT)
    with ThreadPoolExecutor(max_workers=4) as pool:
        indexes = set(pool.map(lambda _: id(open_index(cache_dir)), range(8)))
        ranked = list(pool.map(lambda _: _ranked_in_turn(repo, PROMPT), range(8)))
    assert indexes == {id(open_index(cache_dir))}
    assert all(r == alone for r in ranked)


def test_an_index_built_a_few_files_at_a_time_is_the_same_index(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first prompt builds the index in batches of files (a long-lived process kept the
    peak of holding every doc and posting at once: 921 MB of RSS at 50k files, 260 MB in
    batches); the rows are those of one pass, but for the postings' impacts, computed at the
    first batch's mean length (a bound, whatever mean it assumes)."""
    import tinymem.hydration.index as index_module

    _init(repo)
    r = open_repo(str(repo))

    def rows(path: str) -> list[list[tuple[object, ...]]]:
        db = sqlite3.connect(path)
        try:
            return [
                sorted(db.execute(query).fetchall())
                for query in (
                    "SELECT * FROM docs",
                    "SELECT term, doc, tf FROM postings",
                    "SELECT * FROM df",
                    "SELECT * FROM terms",
                    "SELECT * FROM info WHERE key != 'impact_avgdl'",
                )
            ]
        finally:
            db.close()

    whole = RelevanceIndex(str(repo / "whole.sqlite"))
    whole.refresh(current(r))
    whole.close()
    monkeypatch.setattr(index_module, "_FILES_PER_BATCH", 1)
    batched = RelevanceIndex(str(repo / "batched.sqlite"))
    batched.refresh(current(r))
    batched.close()
    assert rows(str(repo / "batched.sqlite")) == rows(str(repo / "whole.sqlite"))
    assert rows(str(repo / "whole.sqlite"))[0]  # docs were written


def test_only_the_last_few_indexes_stay_open(tmp_path: Path) -> None:
    """The suite runs tm in process over hundreds of repositories: connections are closed."""
    opened = []
    for k in range(10):
        d = tmp_path / str(k)
        d.mkdir()
        index = open_index(str(d))
        index._open()
        opened.append(index)
    assert sum(i._db is not None for i in opened) <= 4
