"""Repositories as users have them: each works, or refuses in one sentence, never with a
traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PY_APP, git, tm, tm_ask, write
from tests.modelserver import ModelServer


def _clean(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    if proc.returncode != 0:
        assert proc.stderr.strip().count("\n") == 0, proc.stderr  # one sentence


def _basic(repo: Path, *, cwd: Path | None = None) -> None:
    where = cwd or repo
    for argv in (("init",), ("status",), ("log",), ("state",), ("doctor",), ("rebuild",)):
        proc = tm(where, *argv)
        _clean(proc)


def test_no_commits_yet(repo: Path) -> None:
    write(repo, "app.py", PY_APP)
    proc = tm(repo, "init")
    _clean(proc)
    assert proc.returncode == 0, proc.stderr
    assert tm(repo, "status", "--check").returncode == 0


def test_a_path_with_spaces_and_a_subdirectory(repo: Path) -> None:
    write(repo, "my dir/the app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    write(repo, "my dir/the app.py", PY_APP + "\nX = 1\n")
    sub = repo / "my dir"
    proc = tm(sub, "adopt", "the app.py")
    _clean(proc)
    assert proc.returncode == 0, proc.stderr
    state = json.loads(tm(sub, "state", "--json").stdout)
    assert any(e["path"] == "my dir/the app.py" for e in state["entities"])
    assert tm(sub, "status", "--check").returncode == 0


def test_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    other = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(other))
    for argv in (("status",), ("log",), ("state",), ("doctor",)):
        _clean(tm(other, *argv))


def test_a_submodule(repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    write(lib, "lib.py", "def lib():\n    return 1\n")
    git(lib, "add", ".")
    git(lib, "commit", "-qm", "lib")
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(repo, "commit", "-qm", "sub")
    _basic(repo)
    assert tm(repo, "status", "--check").returncode == 0
    _basic(repo / "lib")  # inside the submodule: its own repository


def test_a_sha256_repository(tmp_path: Path) -> None:
    repo = tmp_path / "sha"
    repo.mkdir()
    git(repo, "init", "-q", "--object-format=sha256")
    write(repo, "app.py", PY_APP)
    proc = tm(repo, "init")
    _clean(proc)
    # libgit2 may learn SHA-256 one day; until then the refusal says what it is about.
    assert proc.returncode == 0 or "SHA-256 object ids" in proc.stderr, proc.stderr


def _apart(tmp_path: Path, layout: str) -> tuple[Path, Path]:
    """A work tree whose git dir lives elsewhere: `.git` is a `gitdir:` file
    (`git init --separate-git-dir`) or a symlink to the git dir. (work tree, git dir)"""
    work, gitdir = tmp_path / "work", tmp_path / "elsewhere" / "repo.git"
    gitdir.parent.mkdir()
    if layout == "gitfile":
        git(tmp_path, "init", "-q", "-b", "main", f"--separate-git-dir={gitdir}", str(work))
        assert (work / ".git").is_file()
    else:
        git(tmp_path, "init", "-q", "-b", "main", str(work))
        (work / ".git").rename(gitdir)
        (work / ".git").symlink_to(gitdir)
    write(work, "app.py", PY_APP)
    git(work, "add", ".")
    git(work, "commit", "-qm", "base")
    return work, gitdir


@pytest.mark.parametrize("layout", ["gitfile", "symlink"])
def test_a_git_dir_kept_apart_from_its_work_tree(
    tmp_path: Path, server: ModelServer, layout: str
) -> None:
    work, gitdir = _apart(tmp_path, layout)
    before = sorted(p.name for p in gitdir.parent.parent.iterdir())
    proc = tm(work, "init")
    _clean(proc)
    assert proc.returncode == 0, proc.stderr
    proc = tm(work / ".." / "work", "status", "--check")  # the work tree, not the git dir's parent
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Clean" in proc.stdout

    server.add("```python path=newmod.py\ndef newmod():\n    return 1\n```\n")
    proc = tm_ask(work, server, "add newmod", "--json")
    assert proc.returncode == 0, proc.stderr
    pid = json.loads(proc.stdout)["proposals"][0]["id"]
    proc = tm(work, "accept", pid)
    assert proc.returncode == 0, proc.stderr
    assert (work / "newmod.py").read_text() == "def newmod():\n    return 1\n"
    # Nothing beside the git dir: that is where a work tree guessed as its parent would be.
    assert not (gitdir.parent / "newmod.py").exists()
    assert sorted(p.name for p in gitdir.parent.parent.iterdir()) == before
    assert sorted(p.name for p in gitdir.parent.iterdir()) == ["repo.git"]

    write(work, "app.py", PY_APP + "\nX = 1\n")
    proc = tm(work, "adopt", "--all", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["adopted"] == ["app.py"] and doc["deleted"] == []
    assert tm(work, "status", "--check").returncode == 0
    assert git(work, "show", "refs/tinymem/heads/main:files/app.py") == PY_APP + "\nX = 1\n"


@pytest.mark.parametrize("layout", ["gitfile", "symlink"])
def test_the_fast_status_probe_compares_the_real_work_tree(tmp_path: Path, layout: str) -> None:
    from tinymem.gitsuspects import start
    from tinymem.repository import open_repo

    work, _ = _apart(tmp_path, layout)
    assert tm(work, "init").returncode == 0
    probe = start(str(work))
    assert probe is not None
    repo = open_repo(str(work))
    assert repo.workdir == str(work)
    assert probe.compares(repo.git.path, repo.workdir, repo.state_tip())
    assert probe.result() == set()


def test_inside_a_git_dir_kept_apart_tm_refuses_in_one_sentence(tmp_path: Path) -> None:
    _work, gitdir = _apart(tmp_path, "gitfile")
    proc = tm(gitdir, "init")
    _clean(proc)
    assert proc.returncode == 3
    assert "work tree is elsewhere" in proc.stderr
    assert not (gitdir / "refs" / "tinymem").exists()


@pytest.mark.parametrize("setting", ["autocrlf", "text=auto"])
def test_binary_files_under_line_ending_filters_keep_their_bytes(
    repo: Path, server: ModelServer, setting: str
) -> None:
    # git's filters leave binary files alone; pygit2 reports that as an empty result, which
    # once made every binary file read as empty text and let accept overwrite one.
    if setting == "autocrlf":
        git(repo, "config", "core.autocrlf", "true")
    else:
        write(repo, ".gitattributes", "* text=auto\n")
    write(repo, "app.py", PY_APP)
    image = b"\x00\x01\x02PNG\x00\r\n" * 20
    (repo / "img.bin").write_bytes(image)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    stored = git(repo, "rev-parse", "refs/tinymem/heads/main:files/img.bin").strip()
    assert stored == git(repo, "hash-object", "img.bin").strip()
    (repo / "img.bin").write_bytes(image + b"more")
    assert tm(repo, "status", "--check").returncode != 0  # a changed binary is seen
    (repo / "img.bin").write_bytes(image)
    assert tm(repo, "status", "--check").returncode == 0
    server.add("```text path=img.bin\nhello\n```\n")
    _clean(tm_ask(repo, server, "write hello into img.bin", "--repair", "0"))
    proc = tm(repo, "accept", "--all")
    assert proc.returncode == 5 and "img.bin is a binary file" in proc.stderr, proc.stderr
    assert (repo / "img.bin").read_bytes() == image


# A PNG's own first bytes: its signature holds CRLF and a lone LF, and its first NUL comes
# after byte 8. pygit2 read the filtered content as a C string, so it ended there.
_PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00"
    + bytes(range(256)) * 4
    + b"\x00\x00\x00\x00IEND\xaeB`\x82"
)


@pytest.mark.parametrize("setting", ["autocrlf", "text=auto"])
def test_a_png_under_line_ending_filters_is_stored_whole(
    repo: Path, server: ModelServer, setting: str
) -> None:
    if setting == "autocrlf":
        git(repo, "config", "core.autocrlf", "true")
    else:
        write(repo, ".gitattributes", "* text=auto\n")
    write(repo, "app.py", PY_APP)
    (repo / "logo.png").write_bytes(_PNG)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0

    def stored() -> bytes:
        ref = "refs/tinymem/heads/main:files/logo.png"
        return subprocess.run(
            ["git", "cat-file", "blob", ref], cwd=repo, capture_output=True, check=True
        ).stdout

    assert stored() == _PNG
    assert git(repo, "rev-parse", "refs/tinymem/heads/main:files/logo.png").strip() == (
        git(repo, "hash-object", "logo.png").strip()
    )
    state = json.loads(tm(repo, "state", "--json", "logo.png").stdout)
    assert all(e["kind"] != "text" for e in state["entities"]), state
    assert tm(repo, "status", "--check").returncode == 0

    changed = _PNG[:-12] + b"\x00\x00\x00\x00IEND\xaeB`\x83"  # past the first NUL only
    (repo / "logo.png").write_bytes(changed)
    assert tm(repo, "status", "--check").returncode != 0
    status = tm(repo, "status")
    assert "logo.png  (modified)" in status.stdout, status.stdout
    # The restore advice status gives names the State Map's copy: the whole file.
    assert "git show refs/tinymem/heads/main:files/PATH > PATH" in status.stdout.replace("\n", " ")
    assert stored() == _PNG
    proc = tm(repo, "adopt", "logo.png")
    assert proc.returncode == 0, proc.stderr
    assert stored() == changed
    assert tm(repo, "status", "--check").returncode == 0

    server.add("```text path=logo.png\nhello\n```\n")
    _clean(tm_ask(repo, server, "write hello into logo.png", "--repair", "0"))
    proc = tm(repo, "accept", "--all")
    assert proc.returncode == 5 and "logo.png is a binary file" in proc.stderr, proc.stderr
    assert (repo / "logo.png").read_bytes() == changed


def test_filtered_content_keeps_every_byte_and_text_still_loses_its_cr(repo: Path) -> None:
    from tinymem.repository import open_repo
    from tinymem.worktree import _guarded, _stored

    git(repo, "config", "core.autocrlf", "true")
    r = open_repo(str(repo))
    assert _stored(r, "a.txt", b"one\r\ntwo\r\n")[1] == b"one\ntwo\n"
    assert _stored(r, "logo.png", _PNG)[1] == _PNG
    # Were the result cut at a NUL (pygit2's own call), the raw bytes are kept instead.
    assert _guarded(_PNG, _PNG[:8]) == _PNG
    assert _guarded(b"one\r\n", b"one\n") == b"one\n"
