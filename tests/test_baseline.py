from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import PY_APP, git, tm, write


def test_init_in_repository_without_commits_imports_tracked_files(repo: Path) -> None:
    write(repo, "app.py", PY_APP)
    write(repo, "README.md", "# hello\n")
    write(repo, "untracked.py", "def x():\n    pass\n")
    git(repo, "add", "app.py", "README.md")
    proc = tm(repo, "init")
    assert proc.returncode == 0, proc.stderr
    assert "Imported 2 tracked files" in proc.stdout
    state = json.loads(tm(repo, "state", "--json").stdout)
    keys = [e["entity"] for e in state["entities"]]
    assert keys == [
        "README.md::@file",
        "app.py::fetch_user",
        "app.py::Client",
        "app.py::Client.get",
        "app.py::Client.post",
    ]
    assert {e["state"] for e in state["entities"]} == {"AUTHORITATIVE"}
    assert {e["source"] for e in state["entities"]} == {"disk"}
    assert {e["confidence"] for e in state["entities"]} == {"CONFIRMED"}
    # HEAD, the index and the branches are untouched.
    assert git(repo, "rev-parse", "--verify", "-q", "HEAD", check=False) == ""
    assert git(repo, "diff", "--cached", "--name-only").split() == ["README.md", "app.py"]
    # Readable with plain git.
    assert git(repo, "show", "refs/tinymem/heads/main:files/app.py") == PY_APP
    body = git(repo, "show", "refs/tinymem/heads/main:entities/app.py/fetch_user")
    assert body == 'def fetch_user(uid):\n    return {"id": uid}'
    meta = json.loads(git(repo, "show", "refs/tinymem/heads/main:meta/app.py"))
    assert meta["entities"]["Client.get"]["state"] == "AUTHORITATIVE"
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert episode["kind"] == "init"
    assert {"entity": "app.py::fetch_user", "from": None, "to": "AUTHORITATIVE"}.items() <= (
        episode["transitions"][1].items()
    ) or any(t["entity"] == "app.py::fetch_user" for t in episode["transitions"])


def test_init_is_idempotent_and_imports_only_new_tracked_files(repo: Path) -> None:
    write(repo, "a.py", "def a():\n    return 1\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-qm", "a")
    assert tm(repo, "init").returncode == 0
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    again = tm(repo, "init")
    assert again.returncode == 0
    assert "already initialized" in again.stdout
    assert git(repo, "rev-parse", "refs/tinymem/heads/main").strip() == tip
    write(repo, "b.py", "def b():\n    return 2\n")
    git(repo, "add", "b.py")
    third = tm(repo, "init")
    assert "Imported 1 tracked files" in third.stdout
    assert git(repo, "rev-list", "--count", "refs/tinymem/heads/main").strip() == "2"


def test_init_refuses_outside_a_work_tree_and_in_a_bare_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = tm(plain, "init", env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert proc.returncode == 3
    assert "not inside a git work tree" in proc.stderr
    assert "Traceback" not in proc.stderr
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    proc = tm(bare, "init")
    assert proc.returncode == 3
    assert "bare repository" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_commands_before_init_say_what_to_do(repo: Path) -> None:
    proc = tm(repo, "status")
    assert proc.returncode == 3
    assert "run `tm init` first" in proc.stderr


def test_binary_oversize_and_unparsable_files(repo: Path) -> None:
    write(repo, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    write(repo, "big.py", "x = 1\n" * 200_000)
    write(repo, "broken.py", "def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    write(repo, "empty.py", "")
    git(repo, "add", ".")
    assert tm(repo, "init").returncode == 0
    state = json.loads(tm(repo, "state", "--json").stdout)
    by_path: dict[str, list[dict[str, object]]] = {}
    for e in state["entities"]:
        by_path.setdefault(str(e["path"]), []).append(e)
    assert "logo.png" not in by_path  # snapshot only
    assert "big.py" not in by_path
    assert git(repo, "cat-file", "-t", "refs/tinymem/heads/main:files/logo.png").strip() == "blob"
    broken = {e["symbol"]: e for e in by_path["broken.py"]}
    assert broken["ok"]["confidence"] == "INFERRED"
    assert "line 4" in str(broken["ok"]["reason"])
    assert [e["symbol"] for e in by_path["empty.py"]] == ["@file"]


def test_a_file_name_that_is_not_utf8_is_skipped_and_refused_by_name(repo: Path) -> None:
    name = os.fsdecode(b"caf\xe9.py")  # Latin-1 bytes, as an old checkout may have them
    write(repo, name, "def f():\n    return 1\n")
    write(repo, "ok.py", "def g():\n    return 2\n")
    git(repo, "add", ".")
    proc = tm(repo, "init")
    assert proc.returncode == 0, proc.stderr
    assert "Imported 1 tracked files" in proc.stdout
    assert "skipped caf\\xe9.py: its name is not UTF-8" in proc.stderr
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert episode["details"]["skipped"][0]["path"] == "caf\\xe9.py"
    assert tm(repo, "status", "--check").returncode == 0
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    again = tm(repo, "init")
    assert "already initialized on branch main: all 1 tracked" in again.stdout
    assert "skipped caf\\xe9.py: its name is not UTF-8" in again.stderr
    assert git(repo, "rev-parse", "refs/tinymem/heads/main").strip() == tip  # no empty episode
    # Named by the user: refused in one sentence, not an internal error.
    for args in (["adopt", name], ["state", name]):
        proc = subprocess.run(
            [sys.executable, "-m", "tinymem", *args], cwd=repo, capture_output=True, check=False
        )
        assert proc.returncode == 11, proc.stderr
        assert b"is not UTF-8" in proc.stderr and b"Traceback" not in proc.stderr


def test_parallel_scan_gives_the_same_state_as_a_sequential_one(repo: Path) -> None:
    from tinymem.repository import open_repo
    from tinymem.scan import PARALLEL_MIN_FILES, scan

    n = PARALLEL_MIN_FILES + 20
    for i in range(n):
        text = f"def f{i}():\n    return {i}\n\n\nclass C{i}:\n    pass\n"
        if i % 7 == 1:  # CRLF on disk, LF in git: only a tracked .gitattributes below says so
            text = text.replace("\n", "\r\n")
        write(repo, f"pkg{i % 7}/m{i}.py", text)
    write(repo, "pkg1/.gitattributes", "*.py text\n")
    git(repo, "add", ".")
    r = open_repo(str(repo))
    paths = sorted(f"pkg{i % 7}/m{i}.py" for i in range(n))
    one = [(s.path, s.file.oid if s.file else None, s.extraction) for s in scan(r, paths, 1)]
    two = [(s.path, s.file.oid if s.file else None, s.extraction) for s in scan(r, paths, 2)]
    assert one == two
    proc = tm(repo, "init")
    assert proc.returncode == 0, proc.stderr
    assert f"Imported {n + 1} tracked files" in proc.stdout
    # The workers applied git's filters: the snapshot is the blob git makes of the file.
    assert git(repo, "rev-parse", "refs/tinymem/heads/main:files/pkg1/m1.py").strip() == (
        git(repo, "hash-object", "pkg1/m1.py").strip()
    )
    assert tm(repo, "status", "--check").returncode == 0
    assert len(json.loads(tm(repo, "state", "--json").stdout)["entities"]) == 2 * n + 1
    assert tm(repo, "rebuild").returncode == 0
    # Objects recorded and compressed in the workers went into one pack per worker.
    git(repo, "fsck", "--strict", "--no-dangling")
    packs = repo / ".git" / "objects" / "pack"
    assert not list(packs.glob("tmp_*"))
    assert len(list(packs.glob("*.pack"))) <= (os.cpu_count() or 1) + 1
    assert git(repo, "cat-file", "-p", "refs/tinymem/heads/main:entities/pkg0/m0.py/f0") == (
        "def f0():\n    return 0"
    )


@pytest.mark.parametrize("where", ["recording", "progress", "draft"])
@pytest.mark.parametrize("files", [3, 420])  # in this process; in worker processes
def test_an_import_that_fails_part_way_leaves_no_state_and_no_pack(
    repo: Path, files: int, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import multiprocessing

    from tinymem import baseline, scan
    from tinymem.repository import open_repo
    from tinymem.scan import _CHUNK

    for i in range(files):
        write(repo, f"m{i:03}.py", f"def f{i}():\n    return {i}\n")
    git(repo, "add", ".")
    progress = None
    if where == "recording":  # in a worker, while the other one goes on
        real = baseline.record_file

        def failing(*args: object, **kwargs: object) -> object:
            if args[2].path == f"m{files - 1:03}.py":  # type: ignore[attr-defined]
                raise OSError("disk full")
            return real(*args, **kwargs)  # type: ignore[arg-type]

        # Worker processes are forked from this one, so they see the failing function too
        # (forced: a thread another test left alive would make them come from a forkserver,
        # which inherits nothing).
        monkeypatch.setattr(baseline, "record_file", failing)
        monkeypatch.setattr(scan, "pool_context", lambda: multiprocessing.get_context("fork"))
    elif where == "progress":  # in this process, while a worker is still busy
        real = baseline.record_file

        def slow(*args: object, **kwargs: object) -> object:
            if args[2].path == f"m{_CHUNK:03}.py":  # type: ignore[attr-defined]
                time.sleep(1)  # the second chunk: its spool appears after the failure
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(baseline, "record_file", slow)

        def progress(done: int, total: int) -> None:
            raise OSError("disk full")

    else:  # after every file was recorded, before anything is sealed

        def draft(*args: object, **kwargs: object) -> object:
            raise OSError("disk full")

        monkeypatch.setattr(baseline, "Draft", draft)
    with pytest.raises(OSError, match="disk full"):
        baseline.init(open_repo(str(repo)), progress)
    assert git(repo, "for-each-ref", "refs/tinymem") == ""
    assert not list((repo / ".git" / "objects" / "pack").glob("*"))


def test_a_failure_while_packs_are_sealed_leaves_no_state_and_only_garbage(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tinymem import baseline, gitobjects, ledger
    from tinymem.repository import open_repo

    monkeypatch.setattr(gitobjects, "PARALLEL_SEAL_MIN", 500)  # seal early, in processes
    monkeypatch.setattr(ledger, "_COMPRESS_AHEAD_MIN", 0)  # and compress the record ahead
    for i in range(420):  # in worker processes, so the objects are in pack spools
        write(repo, f"m{i:03}.py", f"def f{i}():\n    return {i}\n")
    git(repo, "add", ".")

    def edit_tree(*args: object) -> str:
        raise OSError("disk full")

    # The packs are sealed in other processes while the trees are built: they may be complete
    # when this fails. They are not deleted then (another process may have found an object in
    # them); nothing refers to their objects, and git's own garbage collection removes them.
    monkeypatch.setattr(ledger, "edit_tree", edit_tree)
    with pytest.raises(OSError, match="disk full"):
        baseline.init(open_repo(str(repo)))
    assert git(repo, "for-each-ref", "refs/tinymem") == ""
    packs = repo / ".git" / "objects" / "pack"
    assert not list(packs.glob("tmp_*"))
    entity = subprocess.run(
        ["git", "hash-object", "--stdin"],
        cwd=repo,
        input="def f0():\n    return 0",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()

    def stored() -> bool:
        return subprocess.run(["git", "cat-file", "-e", entity], cwd=repo).returncode == 0

    assert stored()  # sealed before the failure: `discard` waited for the sealing to end
    git(repo, "gc", "-q", "--prune=now")
    assert not stored()


def test_a_small_import_writes_loose_objects_and_a_rerun_without_news_no_episode(
    repo: Path,
) -> None:
    write(repo, "a.py", "def a():\n    return 1\n")
    write(repo, "gone.py", "def g():\n    return 2\n")
    git(repo, "add", ".")
    (repo / "gone.py").unlink()  # tracked, but missing from the work tree
    assert tm(repo, "init").returncode == 0
    packs = repo / ".git" / "objects" / "pack"
    assert not list(packs.glob("*"))  # a handful of objects: loose, like git's own
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    again = tm(repo, "init")
    assert again.returncode == 0, again.stderr
    assert "skipped gone.py: missing from the work tree" in again.stderr
    assert git(repo, "rev-parse", "refs/tinymem/heads/main").strip() == tip
    assert not list(packs.glob("*"))
    git(repo, "fsck", "--strict", "--no-dangling")


def test_tracked_paths_from_git_and_from_the_index_file_agree(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tinymem.baseline import tracked_paths
    from tinymem.gitcmd import git_output
    from tinymem.repository import open_repo

    write(repo, "a.py", "x = 1\n")
    write(repo, "docs/.gitattributes", "*.txt text\n")
    write(repo, os.fsdecode(b"caf\xe9.py"), "y = 2\n")
    os.symlink("a.py", repo / "link.py")
    git(repo, "add", ".")
    blob = git(repo, "hash-object", "-w", "a.py").strip()
    commit_id = "1" * 40
    # A submodule, and a path in conflict (three stages, no stage 0).
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{commit_id},sub")
    stages = "".join(f"100644 {blob} {n}\tboth.py\n" for n in (1, 2, 3))
    subprocess.run(
        ["git", "update-index", "--index-info"], cwd=repo, input=stages, text=True, check=True
    )
    expected = [
        ("a.py", None),
        ("both.py", None),
        ("caf\\xe9.py", "its name is not UTF-8: tm records UTF-8 names only"),
        ("docs/.gitattributes", None),
        ("link.py", "symlink: tm tracks regular files only"),
        ("sub", "submodule"),
    ]
    by_git = open_repo(str(repo))
    assert tracked_paths(by_git) == expected
    assert by_git.tracked_gitattributes is True
    monkeypatch.setenv("PATH", "")  # git cannot run: pygit2 reads the index file itself
    assert git_output(str(repo), "version") is None
    by_pygit2 = open_repo(str(repo))
    assert tracked_paths(by_pygit2) == expected
    assert by_pygit2.tracked_gitattributes is True


def test_files_git_fsck_reads_as_attributes_or_submodules_keep_fsck_strict_clean(
    repo: Path,
) -> None:
    write(repo, ".gitattributes", "*.txt text\n")
    write(repo, "docs/.GitAttributes", "*.md text\n")
    write(repo, "sub/.gitmodules", '[submodule "x"]\n\tpath = x\n\turl = https://example.com/x\n')
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    for i in range(2):
        write(repo, ".gitattributes", f"*.txt text\n# {i}\n")
        assert tm(repo, "adopt", ".gitattributes").returncode == 0
    git(repo, "fsck", "--strict", "--no-dangling")
    assert tm(repo, "rebuild").returncode == 0
    # Their one entity is the whole file: its artifact is the snapshot under files/.
    state = json.loads(tm(repo, "state", "--json", ".gitattributes").stdout)["entities"]
    assert [e["symbol"] for e in state] == ["@file"]
    snapshot = git(repo, "rev-parse", "refs/tinymem/heads/main:files/.gitattributes").strip()
    assert state[0]["artifact"] == snapshot
    assert tm(repo, "status", "--check").returncode == 0
    git(repo, "gc", "-q", "--prune=now")
    assert tm(repo, "doctor").returncode == 0
