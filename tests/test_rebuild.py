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
