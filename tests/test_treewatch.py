"""ETV in a process that watches the work tree (`tm serve`, `tm mcp`): each look checks only
what changed since the last one, and must conclude exactly what a whole look concludes.

Real inotify on real files in a temporary git repository; the oracle is ETV's own whole
comparison (`etv._compare`, what a process without a watch runs)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import git, init_repo, write
from tinymem import etv, treewatch
from tinymem.adopt import adopt
from tinymem.errors import TinymemError
from tinymem.etv import EtvReport, verify
from tinymem.ledger import current
from tinymem.repository import open_repo
from tinymem.sync import open_synced

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


def _body(name: str, n: int) -> str:
    return f"def {name}():\n    return {n}\n\n\ndef {name}_too():\n    return {n + 1}\n"


FILES = {
    "top.py": _body("top", 0),
    "pkg/a.py": _body("a", 1),
    "pkg/b.py": _body("b", 2),
    "pkg/sub/c.py": _body("c", 3),
    "lib/d.py": _body("d", 4),
}
PATHS = sorted(FILES)
DIRS = ["pkg", "pkg/sub", "lib"]


def _drift(report: EtvReport) -> list[tuple[str, str, list[str]]]:
    return [(d.path, d.why, sorted(e.key for e in d.stale)) for d in report.drift]


def _whole(root: Path) -> EtvReport:
    r = open_synced(str(root))
    return etv._compare(r, current(r), None, None)


def _look(root: Path) -> EtvReport:
    """What a `tm serve` request's ETV concludes."""
    r = open_synced(str(root))
    return verify(r, current(r))


@pytest.fixture
def watched(repo: Path) -> Iterator[Path]:
    init_repo(repo, FILES)
    assert treewatch.watch(str(repo)) is not None
    yield repo
    treewatch.stop_all()


@pytest.fixture
def examined(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The paths each look reads from the disk (every file, or the suspects)."""
    seen: list[list[str]] = []
    real = etv._snapshots

    def counting(view, cache, tree, paths):  # type: ignore[no-untyped-def]
        seen.append(list(paths))
        return real(view, cache, tree, paths)

    monkeypatch.setattr(etv, "_snapshots", counting)
    return seen


def test_after_a_whole_look_only_the_written_files_are_read(
    watched: Path, examined: list[list[str]]
) -> None:
    assert _look(watched).clean  # the first look is a whole one (through git)
    examined.clear()
    assert _look(watched).clean
    assert examined == [[]]  # nothing written since: nothing read
    write(watched, "pkg/b.py", _body("b", 20))
    report = _look(watched)
    assert _drift(report) == _drift(_whole(watched))
    assert [d.path for d in report.drift] == ["pkg/b.py"]
    assert report.checked == len(FILES)
    assert examined[1] == ["pkg/b.py"]
    examined.clear()
    # STALE stays STALE with nothing written since: the drifted file is read again.
    assert [d.path for d in _look(watched).drift] == ["pkg/b.py"]
    assert examined == [["pkg/b.py"]]


def test_every_way_a_file_changes_is_seen(watched: Path) -> None:
    assert _look(watched).clean
    root = watched
    # An editor's save: a new file renamed over the old one.
    tmp = root / "pkg" / ".a.py.swp"
    tmp.write_text(_body("a", 11))
    os.replace(tmp, root / "pkg" / "a.py")
    # A file deleted, one truncated in place, one appended to.
    (root / "lib" / "d.py").unlink()
    with open(root / "top.py", "r+") as f:
        f.truncate(10)
    with open(root / "pkg" / "sub" / "c.py", "a") as f:
        f.write("x = 1\n")
    report = _look(root)
    assert _drift(report) == _drift(_whole(root))
    assert {d.path: d.why for d in report.drift} == {
        "lib/d.py": "missing",
        "pkg/a.py": "modified",
        "pkg/sub/c.py": "modified",
        "top.py": "modified",
    }
    # Put back as they were: clean again, file by file.
    for rel in ("lib/d.py", "pkg/a.py", "pkg/sub/c.py", "top.py"):
        write(root, rel, FILES[rel])
    assert _look(root).clean and _whole(root).clean


def test_a_directory_moved_away_and_another_put_in_its_place(
    watched: Path, examined: list[list[str]]
) -> None:
    assert _look(watched).clean
    root = watched
    os.rename(root / "pkg", root / "old")  # its watch now follows `old`
    shutil.copytree(root / "old", root / "pkg")
    report = _look(root)
    assert report.clean and _whole(root).clean
    examined.clear()
    # Written in the directory now at `pkg`: seen under its path.
    write(root, "pkg/sub/c.py", _body("c", 30))
    assert [d.path for d in _look(root).drift] == ["pkg/sub/c.py"]
    assert examined == [["pkg/sub/c.py"]]
    # Written in the one moved away: nothing of the State Map's changed.
    write(root, "old/a.py", _body("a", 31))
    assert [d.path for d in _look(root).drift] == ["pkg/sub/c.py"]


def test_a_directory_created_with_a_file_the_state_map_expects(watched: Path) -> None:
    shutil.rmtree(watched / "lib")
    assert [d.path for d in _look(watched).drift] == ["lib/d.py"]
    write(watched, "lib/d.py", FILES["lib/d.py"])
    assert _look(watched).clean
    # The new directory is watched from then on.
    write(watched, "lib/d.py", _body("d", 40))
    assert [d.path for d in _look(watched).drift] == ["lib/d.py"]


def test_the_state_map_moving_between_looks(watched: Path) -> None:
    assert _look(watched).clean
    write(watched, "pkg/a.py", _body("a", 50))
    write(watched, "lib/new.py", _body("new", 51))  # not the State Map's yet
    assert [d.path for d in _look(watched).drift] == ["pkg/a.py"]
    r = open_repo(str(watched))
    adopt(r, [str(watched / "pkg/a.py"), str(watched / "lib/new.py")])
    assert _look(watched).clean and _whole(watched).clean
    # The adopted new file is watched like the others.
    write(watched, "lib/new.py", _body("new", 52))
    assert [d.path for d in _look(watched).drift] == ["lib/new.py"]


def test_an_overflowing_queue_makes_the_next_look_a_whole_one(
    watched: Path, examined: list[list[str]]
) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip(f"the kernel queues {limit} events: too many to overflow here")
    assert _look(watched).clean
    a, b = watched / "pkg" / "a.py", watched / "pkg" / "b.py"
    # Two files in turn: the kernel merges an event only with an identical one before it.
    for i in range(limit // 2 + 10):
        os.utime(a if i % 2 else b)
        os.utime(b if i % 2 else a)
    write(watched, "lib/d.py", _body("d", 60))
    examined.clear()
    assert [d.path for d in _look(watched).drift] == ["lib/d.py"]
    assert examined[0] != ["lib/d.py"]  # git's comparison named it, not the queue


def test_out_of_watches_every_look_is_a_whole_one(watched: Path) -> None:
    w = treewatch.watching(str(watched))
    assert w is not None
    w.close()  # what running out of watches leaves
    assert treewatch.watching(str(watched)) is None
    write(watched, "top.py", _body("top", 70))
    assert [d.path for d in _look(watched).drift] == ["top.py"]


@pytest.fixture
def whole_looks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per whole look (every watch made again)."""
    seen: list[int] = []
    real = treewatch.TreeWatch.rewatch

    def counting(self, paths):  # type: ignore[no-untyped-def]
        seen.append(1)
        return real(self, paths)

    monkeypatch.setattr(treewatch.TreeWatch, "rewatch", counting)
    return seen


def test_a_directory_made_a_symlink_to_a_sibling_hides_no_edit(watched: Path) -> None:
    """`zz` made a link to `pkg`: `zz/sub` would be watched through it, the same directory
    as `pkg/sub`, and the kernel's one watch for both would report `pkg/sub`'s edits under
    the name it was given last (`zz/sub/c.py`, a file the State Map does not have)."""
    write(watched, "zz/sub/e.py", _body("e", 5))
    adopt(open_synced(str(watched)), [str(watched / "zz/sub/e.py")])
    shutil.rmtree(watched / "zz")
    os.symlink("pkg", watched / "zz")
    assert _drift(_look(watched)) == _drift(_whole(watched))
    write(watched, "pkg/sub/c.py", _body("c", 90))
    report = _look(watched)
    assert _drift(report) == _drift(_whole(watched))
    assert "pkg/sub/c.py" in [d.path for d in report.drift]


def test_a_file_with_another_hard_link_is_looked_at_every_time(
    watched: Path, tmp_path: Path
) -> None:
    """A write through a link outside the work tree is reported to that link's directory:
    such a file cannot be trusted to the watch."""
    elsewhere = tmp_path / "dotfiles-a.py"
    os.link(watched / "pkg" / "a.py", elsewhere)
    assert _look(watched).clean  # the whole look notes the file's second link
    with open(elsewhere, "r+") as f:  # in place, as vim does for a file with two links
        f.write("def a():\n    return 42\n")
    report = _look(watched)
    assert [d.path for d in report.drift] == ["pkg/a.py"]
    assert _drift(report) == _drift(_whole(watched))


def test_a_parent_of_the_work_tree_replaced_by_a_copy(watched: Path) -> None:
    """Every watch follows the directories moved away; the path now names a copy."""
    assert _look(watched).clean
    parent = watched.parent
    os.rename(parent, parent.with_name(parent.name + ".old"))
    shutil.copytree(parent.with_name(parent.name + ".old"), parent, symlinks=True)
    write(watched, "pkg/a.py", _body("a", 91))
    report = _look(watched)
    assert [d.path for d in report.drift] == ["pkg/a.py"]
    assert _drift(report) == _drift(_whole(watched))


def test_gitattributes_written_makes_the_next_look_a_whole_one(
    watched: Path, whole_looks: list[int]
) -> None:
    """It changes how git reads the files below it (line endings, filters) without writing
    any of them."""
    assert _look(watched).clean and whole_looks == [1]
    write(watched, "top.py", _body("top", 92))
    _look(watched)
    assert whole_looks == [1]
    write(watched, "pkg/.gitattributes", "*.py text eol=crlf\n")
    _look(watched)
    assert whole_looks == [1, 1]


def test_a_directory_that_cannot_be_watched_for_a_while(watched: Path) -> None:
    """A symlink loop where a directory was, then the directory back: the watch goes on."""
    assert _look(watched).clean
    os.rename(watched / "lib", watched / "lib.real")
    os.symlink("lib", watched / "lib")  # ELOOP for whoever follows it
    assert [d.path for d in _look(watched).drift] == ["lib/d.py"]
    os.remove(watched / "lib")
    os.rename(watched / "lib.real", watched / "lib")
    assert _look(watched).clean
    assert treewatch.watching(str(watched)) is not None
    write(watched, "lib/d.py", _body("d", 93))
    assert [d.path for d in _look(watched).drift] == ["lib/d.py"]


def test_a_whole_look_at_least_every_few_minutes(
    watched: Path, whole_looks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What inotify never reports (a hard link made since the last whole look, a write on
    another machine) is unseen for a bounded time only."""
    assert _look(watched).clean
    _look(watched)
    assert whole_looks == [1]
    monkeypatch.setattr(treewatch, "WHOLE_AFTER", 0.0)
    _look(watched)
    assert whole_looks == [1, 1]


def test_only_local_file_systems_are_watched(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_text(
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "40 22 0:50 / /home/me/my\\040code rw - nfs4 server:/code rw\n"
        "41 22 0:51 / /mnt/c rw - 9p drvfs rw\n"
        "42 41 0:52 / /mnt/c/tmp rw - tmpfs tmpfs rw\n"
    )
    assert treewatch.file_system("/home/me/my code/app", str(info)) == "nfs4"
    assert treewatch.file_system("/home/me/my codex", str(info)) == "ext4"
    assert treewatch.file_system("/mnt/c/x", str(info)) == "9p"
    assert treewatch.file_system("/mnt/c/tmp/x", str(info)) == "tmpfs"
    assert treewatch.file_system("/x", str(tmp_path / "none")) is None
    assert "nfs4" not in treewatch.LOCAL_FILE_SYSTEMS and "9p" not in treewatch.LOCAL_FILE_SYSTEMS


def test_a_work_tree_on_a_network_file_system_is_not_watched(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(treewatch, "file_system", lambda path: "nfs4")
    assert treewatch.watch(str(repo)) is None
    assert treewatch.watching(str(repo)) is None


# A random walk of edits, directory moves and looks: every watched look must conclude what a
# whole look concludes at the same moment.
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("edit"), st.sampled_from(PATHS), st.integers(0, 3)),
        st.tuples(st.just("save"), st.sampled_from(PATHS), st.integers(0, 3)),
        st.tuples(st.just("revert"), st.sampled_from(PATHS), st.just(0)),
        st.tuples(st.just("delete"), st.sampled_from(PATHS), st.just(0)),
        st.tuples(st.just("move-dir"), st.sampled_from(DIRS), st.just(0)),
        st.tuples(st.just("replace-dir"), st.sampled_from(DIRS), st.just(0)),
        st.tuples(st.just("adopt"), st.sampled_from(PATHS), st.just(0)),
        st.tuples(st.just("link-dir"), st.sampled_from(DIRS), st.integers(0, 2)),
        st.tuples(st.just("look"), st.just(""), st.just(0)),
    ),
    min_size=1,
    max_size=14,
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("watched") / "work"
    root.mkdir()
    git(root, "init", "-q")
    return init_repo(root, FILES)


def _apply(root: Path, op: str, target: str, n: int) -> None:
    path = root / target
    if op == "edit" and path.parent.is_dir():
        path.write_text(_body(Path(target).stem, 100 + n))
    elif op == "save" and path.parent.is_dir():
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(_body(Path(target).stem, 200 + n))
        os.replace(tmp, path)
    elif op == "revert":
        write(root, target, FILES[target])
    elif op == "delete" and path.exists():
        path.unlink()
    elif op == "move-dir" and path.is_dir() and not path.is_symlink():
        os.rename(path, root / "moved")
        shutil.rmtree(root / "moved")
    elif op == "replace-dir" and path.is_dir() and not path.is_symlink():
        os.rename(path, root / "aside")
        shutil.copytree(root / "aside", path, symlinks=True)
        shutil.rmtree(root / "aside")
    elif op == "link-dir" and path.is_dir() and not path.is_symlink() and DIRS[n] != target:
        # The directory made a link to another of the tree's (relative, as people make
        # them); one to a directory inside itself dangles once it is gone.
        aside = root / "aside"
        os.rename(path, aside)
        shutil.rmtree(aside)
        os.symlink(os.path.relpath(root / DIRS[n], path.parent), path)
    elif op == "adopt" and path.is_file():
        r = open_repo(str(root))
        adopt(r, [str(path)])


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=_OPS)
def test_a_watched_look_concludes_what_a_whole_look_concludes(
    template: Path, tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, str, int]]
) -> None:
    root = tmp_path_factory.mktemp("walk") / "work"
    shutil.copytree(template, root, symlinks=True)
    try:
        assert treewatch.watch(str(root)) is not None
        assert _look(root).clean
        for op, target, n in [*ops, ("look", "", 0)]:
            if op == "look":
                assert _drift(_look(root)) == _drift(_whole(root)), ops
            else:
                # Through a loop or a dangling link; an adopt through a symlink is refused.
                with contextlib.suppress(OSError, TinymemError):
                    _apply(root, op, target, n)
    finally:
        treewatch.stop_all()
        shutil.rmtree(root, ignore_errors=True)


def test_the_state_map_moving_with_nothing_written(watched: Path) -> None:
    """A switch to a branch whose State Map holds another snapshot of a file git leaves
    alone (the same commit, a hand edit kept): no event says so; the files whose snapshot
    moved are looked at."""
    git(watched, "checkout", "-q", "-b", "other")
    open_synced(str(watched))  # the branch's ledger starts at main's tip
    git(watched, "checkout", "-q", "main")
    write(watched, "pkg/a.py", _body("a", 80))
    adopt(open_synced(str(watched)), [str(watched / "pkg/a.py")])
    assert _look(watched).clean
    git(watched, "checkout", "-q", "other")
    assert (watched / "pkg/a.py").read_text() == _body("a", 80)  # git kept the edit
    report = _look(watched)
    assert _drift(report) == _drift(_whole(watched))
    assert [d.path for d in report.drift] == ["pkg/a.py"]
