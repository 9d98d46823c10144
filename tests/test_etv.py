from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PY_APP, git, init_repo, tm, write
from tinymem.etv import verify
from tinymem.ledger import current
from tinymem.repository import open_repo


def _stale(repo: Path) -> set[str]:
    r = open_repo(str(repo))
    return verify(r, current(r)).stale_keys()


def test_edit_makes_exactly_the_touched_entities_stale_and_adopt_clears(repo: Path) -> None:
    init_repo(repo, {"app.py": PY_APP, "other.py": "def other():\n    return 0\n"}, commit=False)
    assert _stale(repo) == set()
    write(repo, "app.py", PY_APP.replace("return path\n", "return path.upper()\n"))
    assert _stale(repo) == {"app.py::Client", "app.py::Client.get"}
    status = json.loads(tm(repo, "status", "--json").stdout)
    assert status["clean"] is False
    assert [f["path"] for f in status["files"]] == ["app.py"]
    check = tm(repo, "status", "--check")
    assert check.returncode == 1
    assert "tm adopt" in check.stdout
    assert tm(repo, "adopt", "app.py").returncode == 0
    assert _stale(repo) == set()
    assert tm(repo, "status", "--check").returncode == 0


def test_edit_outside_entities_marks_file_but_no_entity(repo: Path) -> None:
    init_repo(repo, {"app.py": PY_APP}, commit=False)
    write(repo, "app.py", PY_APP.replace("import os\n", "import os\nimport sys\n"))
    r = open_repo(str(repo))
    report = verify(r, current(r))
    assert report.stale_keys() == set()
    assert [(d.path, d.outside) for d in report.drift] == [("app.py", True)]


def test_missing_unreadable_and_symlinked_files_are_stale(repo: Path) -> None:
    init_repo(
        repo,
        {
            "a.py": "def a():\n    pass\n",
            "b.py": "def b():\n    pass\n",
            "c.py": "def c():\n    pass\n",
        },
        commit=False,
    )
    os.unlink(repo / "a.py")
    os.unlink(repo / "b.py")
    os.symlink("c.py", repo / "b.py")
    if os.geteuid() != 0:  # root reads everything
        os.chmod(repo / "c.py", 0)
    r = open_repo(str(repo))
    report = verify(r, current(r))
    whys = {d.path: d.why for d in report.drift}
    assert whys["a.py"] == "missing"
    assert whys["b.py"] == "replaced by a symlink"
    assert {"a.py::a", "b.py::b"} <= report.stale_keys()


def test_crlf_checkout_is_not_stale(repo: Path) -> None:
    git(repo, "config", "core.autocrlf", "true")
    init_repo(repo, {"win.py": "def w():\r\n    return 1\r\n"}, commit=False)
    assert _stale(repo) == set()
    text = git(repo, "show", "refs/tinymem/heads/main:files/win.py")
    assert "\r" not in text  # stored as git stores it, filters applied


@pytest.mark.parametrize(
    "name,content",
    [
        ("bom.py", "\ufeffdef bom():\n    return 1\n".encode()),
        ("latin1.py", "def f():\n    return 'caf\xe9'\n".encode("latin-1")),
        ("dir with space/ünïcödé.py", "def u():\n    return 'ü'\n".encode()),
        ("empty.txt", b""),
        ("bin.dat", b"\x00\x01\x02"),
    ],
)
def test_odd_files_round_trip(repo: Path, name: str, content: bytes) -> None:
    init_repo(repo, {name: content, "keep.py": "def k():\n    pass\n"}, commit=False)
    assert _stale(repo) == set()
    assert git(repo, "cat-file", "-s", f"refs/tinymem/heads/main:files/{name}").strip() == str(
        len(content)
    )
    write(repo, name, content + b"\n# changed\n")
    status = json.loads(tm(repo, "status", "--json").stdout)
    assert [f["path"] for f in status["files"]] == [name]
    assert tm(repo, "adopt", name).returncode == 0
    assert json.loads(tm(repo, "status", "--json").stdout)["clean"] is True


def test_touch_without_change_stays_clean_and_stat_cache_is_derived(repo: Path) -> None:
    init_repo(repo, {"a.py": "def a():\n    pass\n"}, commit=False)
    assert _stale(repo) == set()
    os.utime(repo / "a.py", (1, 1))
    assert _stale(repo) == set()
    cache = repo / ".git" / "tinymem" / "statcache"
    assert cache.exists()
    cache.write_bytes(b"garbage")
    assert _stale(repo) == set()
    write(repo, "a.py", "def a():\n    return 2\n")
    assert _stale(repo) == {"a.py::a"}


def test_same_size_edit_within_the_same_second_is_seen(repo: Path) -> None:
    init_repo(repo, {"a.py": "def a():\n    return 1\n"}, commit=False)
    assert _stale(repo) == set()
    st = os.stat(repo / "a.py")
    write(repo, "a.py", "def a():\n    return 2\n")
    os.utime(repo / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _stale(repo) == {"a.py::a"}


def test_a_stat_cache_of_an_older_format_is_ignored(repo: Path) -> None:
    import marshal

    init_repo(repo, {"a.py": "def a():\n    pass\n"}, commit=False)
    cache = repo / ".git" / "tinymem" / "statcache"
    cache.write_bytes(marshal.dumps({"v": 1, "tree": None}))
    proc = tm(repo, "status", "--check")
    assert proc.returncode == 0, proc.stderr


def test_garbage_in_the_state_ref_is_reported_as_corrupt(repo: Path) -> None:
    init_repo(repo, {"a.py": "x = 1\n"}, commit=False)
    (repo / ".git" / "refs" / "tinymem" / "heads" / "main").write_text("garbage\n")
    proc = tm(repo, "status")
    assert proc.returncode == 13, proc.stderr
    assert "unreadable" in proc.stderr


def test_attributes_file_turns_on_filtered_hashing(repo: Path) -> None:
    write(repo, ".gitattributes", "*.txt text eol=crlf\n")
    init_repo(repo, {"a.txt": "one\r\ntwo\r\n"}, commit=False)
    assert _stale(repo) == set()
    assert "\r" not in git(repo, "show", "refs/tinymem/heads/main:files/a.txt")


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_edits_hidden_from_git_by_index_flags_are_still_stale(repo: Path, flag: str) -> None:
    init_repo(
        repo, {"a.py": "def a():\n    return 1\n", "b.py": "def b():\n    return 1\n"}, commit=False
    )
    git(repo, "commit", "-qm", "base")
    git(repo, "update-index", flag, "a.py")
    write(repo, "a.py", "def a():\n    return 2\n")
    assert git(repo, "status", "--porcelain") == ""  # git itself no longer sees it
    assert _stale(repo) == {"a.py::a"}


def test_files_tm_tracks_but_git_does_not_are_checked(repo: Path) -> None:
    init_repo(repo, {"a.py": "def a():\n    return 1\n"}, commit=False)
    write(repo, "notes.py", "def n():\n    return 1\n")
    assert tm(repo, "adopt", "notes.py").returncode == 0  # untracked by git
    assert _stale(repo) == set()
    write(repo, "notes.py", "def n():\n    return 2\n")
    assert _stale(repo) == {"notes.py::n"}


def test_status_and_state_limit_to_the_named_files_and_directories(repo: Path) -> None:
    init_repo(
        repo,
        {"lib/a.py": "def a():\n    pass\n", "lib2/b.py": "def b():\n    pass\n"},
        commit=False,
    )
    write(repo, "lib/a.py", "def a():\n    return 1\n")
    write(repo, "lib2/b.py", "def b():\n    return 1\n")
    status = json.loads(tm(repo, "status", "--json", "lib").stdout)
    assert [f["path"] for f in status["files"]] == ["lib/a.py"]  # not lib2/, a sibling prefix
    state = json.loads(tm(repo, "state", "--json", "lib2/b.py").stdout)
    assert [e["entity"] for e in state["entities"]] == ["lib2/b.py::b"]
    assert state["entities"][0]["stale"] is True


def test_nested_attributes_file_found_in_gits_listing_turns_on_filtered_hashing(
    repo: Path,
) -> None:
    # No .gitattributes at the top: only the index listing the probe reads knows about it.
    init_repo(
        repo,
        {"sub/.gitattributes": "*.txt text eol=crlf\n", "sub/a.txt": "one\r\ntwo\r\n"},
        commit=False,
    )
    os.utime(repo / "sub" / "a.txt", (1, 1))  # stat-dirty: git lists it, tm must hash it
    proc = tm(repo, "status", "--json", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _stale(repo) == set()


def test_status_from_a_subdirectory_checks_the_whole_tree(repo: Path) -> None:
    init_repo(
        repo, {"lib/a.py": "def a():\n    pass\n", "top.py": "def t():\n    pass\n"}, commit=False
    )
    write(repo, "top.py", "def t():\n    return 1\n")
    proc = tm(repo / "lib", "status", "--json")
    doc = json.loads(proc.stdout)
    assert doc["checked_files"] == 2
    assert [f["path"] for f in doc["files"]] == ["top.py"]
    assert [e["entity"] for e in doc["files"][0]["stale"]] == ["top.py::t"]
    assert tm(repo / "lib", "status", "--check").returncode == 1


def test_status_text_piped_is_plain_and_keeps_brackets(repo: Path) -> None:
    init_repo(repo, {"a[b].py": "def f():\n    pass\n"}, commit=False)
    write(repo, "a[b].py", "def f():\n    return 1\n")
    proc = tm(repo, "status")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("STALE: 1 file(s) differ from the State Map, 1 entity STALE.")
    assert "  a[b].py  (modified)" in lines
    assert "    STALE  f  function, changed on disk" in lines
    assert "\x1b[" not in proc.stdout
    forced = tm(repo, "status", env={"FORCE_COLOR": "1"})
    assert "\x1b[" in forced.stdout and "a[b].py" in forced.stdout


def test_a_cache_whose_header_loads_but_columns_do_not_is_never_an_empty_listing(
    repo: Path,
) -> None:
    import marshal

    init_repo(
        repo, {"a.py": "def a():\n    return 1\n", "b.py": "def b():\n    return 1\n"}, commit=False
    )
    git(repo, "commit", "-qm", "base")
    assert _stale(repo) == set()  # writes the stat cache
    cache = repo / ".git" / "tinymem" / "statcache"
    data = cache.read_bytes()
    header = marshal.dumps(marshal.loads(data))
    cache.write_bytes(data[: len(header)] + b"\x00damaged")
    git(repo, "update-index", "--assume-unchanged", "a.py")  # git cannot tell: the cache must
    write(repo, "a.py", "def a():\n    return 2\n")
    named = json.loads(tm(repo, "status", "--json", "a.py").stdout)  # straight to the listing
    assert [e["entity"] for f in named["files"] for e in f["stale"]] == ["a.py::a"]
    cache.write_bytes(data[: len(header)] + b"\x00damaged")
    assert _stale(repo) == {"a.py::a"}
    status = json.loads(tm(repo, "status", "--json").stdout)
    assert status["checked_files"] == 2


def test_git_environment_pointing_elsewhere_never_hides_an_edit(repo: Path, tmp_path: Path) -> None:
    # GIT_DIR/GIT_WORK_TREE name another work tree whose copy of a.py is unchanged: git must
    # still be asked about the work tree tm verifies.
    init_repo(repo, {"a.py": "def a():\n    return 1\n"}, commit=False)
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "a.py").write_bytes((repo / "a.py").read_bytes())
    env = {"GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(other)}
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=repo, env={**os.environ, **env})
    write(repo, "a.py", "def a():\n    return 2\n")
    proc = tm(repo, "status", "--check", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "a.py" in proc.stdout


def test_git_dir_of_another_repository_is_not_read_as_ours(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    init_repo(other, {"a.py": "def a():\n    return 1\n"}, commit=False)
    init_repo(repo, {"a.py": "def a():\n    return 1\n"}, commit=False)
    write(repo, "a.py", "def a():\n    return 2\n")
    proc = tm(repo, "status", "--check", env={"GIT_DIR": str(other / ".git")})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "a.py" in proc.stdout


def test_status_with_closed_or_broken_output_streams(repo: Path) -> None:
    init_repo(repo, {"a.py": "def a():\n    return 1\n"}, commit=False)
    argv = [sys.executable, "-m", "tinymem", "status", "--check"]
    closed_out = subprocess.run(argv, cwd=repo, stdout=subprocess.DEVNULL, close_fds=True)
    assert closed_out.returncode == 0
    for fd in ("1", "2"):
        proc = subprocess.run(
            ["sh", "-c", f'"$@" {fd}>&-', "sh", *argv], cwd=repo, capture_output=True
        )
        assert proc.returncode == 0, (fd, proc.stdout, proc.stderr)  # clean: nothing lost
        assert b"Traceback" not in proc.stdout + proc.stderr


def test_status_from_a_deleted_directory_is_one_sentence(repo: Path) -> None:
    init_repo(repo, {"a.py": "def a():\n    return 1\n"}, commit=False)
    gone = repo / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "$@"'
    argv = [sys.executable, "-m", "tinymem", "status", "--check"]
    proc = subprocess.run(["sh", "-c", script, "sh", *argv], capture_output=True, text=True)
    assert proc.returncode == 10, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("tm: ") and len(proc.stderr.strip().splitlines()) == 1


def test_a_directory_committed_as_a_symlink_is_not_read_as_a_file(
    repo: Path, tmp_path: Path
) -> None:
    """git compares `lib` (now a symlink) with the State Map's `lib/` and names `lib`: the
    State Map's tree there was read as if it were the file `lib`, and every command ended in
    "artifact ... missing from the vault" (exit 13)."""
    init_repo(
        repo, {"top.py": "def top():\n    return 0\n", "lib/d.py": "def d():\n    return 4\n"}
    )
    assert tm(repo, "status").returncode == 0
    (repo / "top.py").unlink()
    outside = tmp_path / "ext"
    os.rename(repo / "lib", outside)
    os.symlink(outside, repo / "lib")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "lib elsewhere")
    status = tm(repo, "status", "--json")
    assert status.returncode == 0, status.stderr
    files = {f["path"]: f["why"] for f in json.loads(status.stdout)["files"]}
    assert files == {"lib/d.py": "reached through the symlink lib"}
