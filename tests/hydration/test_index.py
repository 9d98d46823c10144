"""The persistent relevance index: rebuilt silently when damaged, brought to a new State Map
tip by the change alone, and ranking from it as from a list in memory."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import git, tm, write
from tinymem.hydration.corpus import Corpus, DocInfo, MemoryCorpus
from tinymem.hydration.index import (
    INDEX_VERSION,
    RelevanceIndex,
    build_in_child,
    corpus_for,
    open_index,
    rank_with,
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

    def rank(corpus: Corpus) -> tuple[dict[int, float], dict[int, DocInfo]]:
        found = score(corpus, prompt)
        return found, corpus.info(found)

    found, info = rank_with(current(r), r.cache_dir, rank)
    return sorted(((info[i].path, info[i].symbol, round(s, 6)) for i, s in found.items()))


def _rows(path: str) -> list[list[tuple[object, ...]]]:
    """Every row of an index file but the postings' impacts and the mean length they assume
    (bounds computed at the first batch's mean: valid whatever the batches)."""
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

    whole = RelevanceIndex(str(repo / "whole.sqlite"))
    whole.refresh(current(r))
    whole.close()
    monkeypatch.setattr(index_module, "_FILES_PER_BATCH", 1)
    batched = RelevanceIndex(str(repo / "batched.sqlite"))
    batched.refresh(current(r))
    batched.close()
    assert _rows(str(repo / "batched.sqlite")) == _rows(str(repo / "whole.sqlite"))
    assert _rows(str(repo / "whole.sqlite"))[0]  # docs were written


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


@pytest.fixture
def in_child() -> Iterator[None]:
    """Every refresh that changes a file record runs in a child process (`tm serve`'s)."""
    build_in_child(1)
    try:
        yield
    finally:
        build_in_child(None)


def test_a_large_build_runs_in_a_child_and_writes_the_same_index(
    repo: Path, in_child: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tm serve` kept the peak of building a large index for as long as it ran (the
    allocator does not give it back): the child builds it, the server opens the result."""
    import tinymem.hydration.index as index_module

    _init(repo)
    r = open_repo(str(repo))
    build_in_child(None)
    here = RelevanceIndex(str(repo / "here.sqlite"))
    here.refresh(current(r))
    here.close()
    build_in_child(1)

    def not_here(*args: object) -> None:
        raise AssertionError("built in the serving process")

    monkeypatch.setattr(index_module.RelevanceIndex, "_apply", not_here)
    child = RelevanceIndex(str(repo / "child.sqlite"))
    child.refresh(current(r))
    assert child.size > 0
    found = score(child, PROMPT)
    info = child.info(found)
    ranked = sorted((info[i].path, info[i].symbol, round(s, 6)) for i, s in found.items())
    child.close()
    assert _rows(str(repo / "child.sqlite")) == _rows(str(repo / "here.sqlite"))
    assert ranked == _fresh(repo, PROMPT)


def test_a_failing_child_leaves_the_build_to_the_process_itself(
    repo: Path, in_child: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tinymem.hydration.index as index_module

    _init(repo)
    r = open_repo(str(repo))
    children: list[bool] = []
    real = index_module._build_in_child

    def failing(path: str, git_dir: str, commit_id: str) -> bool:
        with monkeypatch.context() as m:
            m.setattr(index_module, "_CHILD", "tinymem.no_such_module")
            children.append(real(path, git_dir, commit_id))
        return children[-1]

    monkeypatch.setattr(index_module, "_build_in_child", failing)
    index = RelevanceIndex(str(_index_file(repo)))
    index.refresh(current(r))
    index.close()
    assert children == [False]
    build_in_child(None)
    here = RelevanceIndex(str(repo / "here.sqlite"))
    here.refresh(current(r))
    here.close()
    assert _rows(str(_index_file(repo))) == _rows(str(repo / "here.sqlite"))
    assert _ranked(repo, PROMPT) == _fresh(repo, PROMPT)


STALLING_CHILD = """
import os, pathlib, sys, time
pathlib.Path({pid_file!r}).write_text(str(os.getpid()))
time.sleep(600)
"""


@pytest.mark.timeout(120)
def test_a_child_that_stalls_is_killed_and_the_prompt_still_gets_its_hydration(
    repo: Path, in_child: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The child builds while the process's turn is held: one that never ends held every
    prompt of `tm serve`, and its stop, for ever. It is killed after `_CHILD_TIMEOUT` and the
    build done by the process itself."""
    import tinymem.hydration.index as index_module

    assert index_module._CHILD_TIMEOUT == 900  # a 50,000-file first build takes ~100 s
    _init(repo)
    where = tmp_path / "stalling"
    where.mkdir()
    pid_file = tmp_path / "child.pid"
    (where / "stalling_indexchild.py").write_text(STALLING_CHILD.format(pid_file=str(pid_file)))
    monkeypatch.setenv("PYTHONPATH", str(where))
    monkeypatch.setattr(index_module, "_CHILD", "stalling_indexchild")
    monkeypatch.setattr(index_module, "_CHILD_TIMEOUT", 5.0)
    children: list[bool] = []
    real = index_module._build_in_child

    def recorded(path: str, git_dir: str, commit_id: str) -> bool:
        children.append(real(path, git_dir, commit_id))
        return children[-1]

    monkeypatch.setattr(index_module, "_build_in_child", recorded)
    assert _ranked_in_turn(repo, PROMPT) == _fresh(repo, PROMPT)
    assert children == [False]
    if pid_file.exists():  # it got as far as its first line (a loaded machine starts slowly)
        with pytest.raises(ProcessLookupError):  # killed and reaped, not left behind
            os.kill(int(pid_file.read_text()), 0)


def test_a_small_change_stays_in_the_process(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tinymem.hydration.index as index_module

    _init(repo)
    index = RelevanceIndex(str(_index_file(repo)))
    index.refresh(current(open_repo(str(repo))))
    write(repo, "extra.py", "def zebra_quux():\n    return 2\n")
    assert tm(repo, "adopt", "extra.py").returncode == 0

    def no_child(*args: object) -> bool:
        raise AssertionError("a child for one file")

    monkeypatch.setattr(index_module, "_build_in_child", no_child)
    build_in_child(2)
    try:
        index.refresh(current(open_repo(str(repo))))
    finally:
        build_in_child(None)
    assert index.named(["zebra_quux"])
    index.close()


def test_docs_another_process_rewrote_are_read_again(repo: Path) -> None:
    """A process kept the docs it had decoded by id while another (the child that builds
    for `tm serve`, or a `tm ask` beside it) moved the file: the same id then named another
    entity, and ranking showed the old one."""
    _init(repo)
    path = str(_index_file(repo))
    mine = RelevanceIndex(path)
    mine.refresh(current(open_repo(str(repo))))
    db = sqlite3.connect(path)
    ((last_path,),) = db.execute("SELECT path FROM docs ORDER BY id DESC LIMIT 1")
    ((first_id,),) = db.execute("SELECT min(id) FROM docs WHERE path = ?", (last_path,))
    db.close()
    seen = mine.info([first_id])[first_id]
    # The file of the last ids is rewritten: its docs are written again from the same first
    # id, which now names another entity.
    (repo / last_path).write_text("def zebra_replacement():\n    return 0\n")
    assert tm(repo, "adopt", last_path).returncode == 0
    other = RelevanceIndex(path)
    other.refresh(current(open_repo(str(repo))))
    truth = other.info([first_id])[first_id]
    other.close()
    mine.refresh(current(open_repo(str(repo))))
    assert truth.symbol == "zebra_replacement" != seen.symbol
    assert mine.info([first_id])[first_id] == truth
    mine.close()
