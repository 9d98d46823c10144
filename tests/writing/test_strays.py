"""`remove_strays` removes only the temporary files tm itself leaves beside a file (`.git` on
another file system): never a user's file that merely looks like one."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import git, write
from tinymem.repository import open_repo
from tinymem.writing.atomic import is_temp_of, temp_name
from tinymem.writing.transaction import remove_strays


def test_only_the_names_tm_gives_its_temporary_files_count_as_its_own() -> None:
    assert is_temp_of(temp_name("a.py", "tm-0123456789ab"), "a.py")
    assert is_temp_of(temp_name("a.py", "tm-0123456789ab-undo"), "a.py")
    assert is_temp_of(temp_name("a.py", "tm-adopt"), "a.py")  # older versions' fixed tag
    for user in (
        ".a.py.tm-notes.tm-tmp",
        ".a.py.tm-backup-of-yesterday.tm-tmp",
        ".a.py.tm-0123456789AB.tm-tmp",
        ".a.py.tm-0123456789a.tm-tmp",
        ".a.py.tm-0123456789abc.tm-tmp",
        ".a.py.tm-0123456789ab-redo.tm-tmp",
        ".a.py.tm-0123456789ab.tm-tmp.bak",
        ".b.py.tm-0123456789ab.tm-tmp",
    ):
        assert not is_temp_of(user, "a.py"), user


def test_a_users_file_named_like_a_temporary_file_survives(repo: Path) -> None:
    write(repo, "pkg/a.py", "x = 1\n")
    mine = [
        ".a.py.tm-notes.tm-tmp",  # tm- and .tm-tmp, but no tag tm ever used
        ".a.py.tm-0123456789AB.tm-tmp",
    ]
    for name in mine:
        write(repo, f"pkg/{name}", "the user's\n")
    # Named exactly like tm's but committed: a tracked file is the user's.
    write(repo, "pkg/.a.py.tm-fedcba987654.tm-tmp", "committed\n")
    git(repo, "add", "-f", ".")
    git(repo, "commit", "-qm", "base")
    # Named exactly like tm's but a directory, and a symbolic link: not files tm writes.
    (repo / "pkg" / ".a.py.tm-aaaaaaaaaaaa.tm-tmp").mkdir()
    os.symlink("a.py", repo / "pkg" / ".a.py.tm-bbbbbbbbbbbb.tm-tmp")
    # What tm leaves: removed.
    write(repo, "pkg/.a.py.tm-0123456789ab.tm-tmp", "half a write\n")
    write(repo, "pkg/.a.py.tm-0123456789ab-undo.tm-tmp", "half an undo\n")

    remove_strays(open_repo(str(repo)), ["pkg/a.py"])

    left = sorted(p.name for p in (repo / "pkg").iterdir())
    assert left == sorted(
        [
            "a.py",
            *mine,
            ".a.py.tm-fedcba987654.tm-tmp",
            ".a.py.tm-aaaaaaaaaaaa.tm-tmp",
            ".a.py.tm-bbbbbbbbbbbb.tm-tmp",
        ]
    )
    for name in mine:
        assert (repo / "pkg" / name).read_text() == "the user's\n"
