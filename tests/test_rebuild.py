from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import PY_APP, git, init_repo, tm, write


def test_rebuild_agrees_after_a_mixed_history(repo: Path) -> None:
    init_repo(
        repo,
        {
            "app.py": PY_APP,
            "lib/util.go": "package lib\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
        },
        commit=False,
    )
    write(repo, "app.py", PY_APP.replace("return path\n", "return path + '/'\n"))
    tm(repo, "adopt", "app.py")
    write(repo, "extra.md", "hello\n")
    tm(repo, "adopt", "extra.md")
    (repo / "lib/util.go").unlink()
    tm(repo, "adopt", "lib")
    write(repo, "lib/util.go", "package lib\n\nfunc Add(a, b int) int {\n\treturn b + a\n}\n")
    tm(repo, "adopt", "lib/util.go")
    proc = tm(repo, "rebuild", "--json")
    assert proc.returncode == 0, proc.stdout
    doc = json.loads(proc.stdout)
    assert doc == {
        "ok": True,
        "episodes": 5,
        "differences": [],
        "project_notes": {"ok": True, "tip": None, "episodes": 0, "proven": None},
    }


def test_rebuild_reports_a_tampered_state(repo: Path) -> None:
    init_repo(repo, {"a.py": "def a():\n    return 1\n"}, commit=False)
    # Forge a commit whose State Map lost an entity without any episode saying so.
    tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    tree = git(repo, "rev-parse", f"{tip}^{{tree}}").strip()
    idx = repo / ".git" / "forge-index"
    env = {"GIT_INDEX_FILE": str(idx)}

    def run(*args: str) -> str:
        return subprocess.run(
            ["git", *args],
            cwd=repo,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    run("read-tree", tree)
    run("rm", "--cached", "-q", "entities/a.py/a")
    forged_tree = run("write-tree").strip()
    forged = run("commit-tree", forged_tree, "-p", tip, "-m", "forged").strip()
    git(repo, "update-ref", "refs/tinymem/heads/main", forged)
    proc = tm(repo, "rebuild")
    assert proc.returncode == 1
    assert "entities/a.py/a" in proc.stdout


def test_a_ledger_recorded_before_kind_changes_were_settled_is_reported_not_crashed(
    repo: Path,
) -> None:
    """A tm without the fix of #29 recorded a file `lib` and the deletion of lib/a.py in one
    episode, each with its metadata: no tree holds both, so the replay cannot go on. It is
    a difference `tm rebuild` and `tm doctor` report (exit 1), never an internal error."""
    import pygit2

    from tinymem.gitobjects import MODE_BLOB, ObjectWriter, edit_tree
    from tinymem.ledger import EPISODE_FILE, Episode, episode_message

    init_repo(repo, {"app.py": PY_APP, "lib/a.py": "def a():\n    return 1\n"})
    git_repo = pygit2.Repository(str(repo))
    ref = "refs/tinymem/heads/main"
    tip = git_repo.references[ref].peel(pygit2.Commit)
    meta = git(repo, "rev-parse", f"{ref}:meta/lib/a.py").strip()
    writer = ObjectWriter(git_repo)
    snapshot = writer.blob(b"lib = 1\n")
    episode = Episode(kind="git", summary="took lib; recorded 1 deleted", branch="main")
    episode.files = {
        "lib": {"snapshot": snapshot, "meta": meta},
        "lib/a.py": {"snapshot": None, "meta": meta},
    }
    record = writer.tree([(EPISODE_FILE, MODE_BLOB, writer.blob(episode.to_bytes()))])
    tree = edit_tree(writer, str(tip.tree_id), {"episode": (0o040000, record)})
    writer.flush()
    sig = pygit2.Signature("a", "a@b")
    git_repo.create_commit(ref, sig, sig, episode_message(episode), pygit2.Oid(hex=tree), [tip.id])
    proc = tm(repo, "rebuild", "--json")
    assert proc.returncode == 1, proc.stderr
    (difference,) = json.loads(proc.stdout)["differences"]
    assert "cannot be replayed" in difference and "file and a directory" in difference
    doctor = tm(repo, "doctor", "--json")
    assert doctor.returncode == 1, doctor.stderr
