"""The vault survives git's own maintenance and travels with a mirror clone."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import PY_APP, git, tm, write


def _history(repo: Path) -> None:
    write(repo, "app.py", PY_APP)
    write(repo, "notes.md", "# notes\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    write(repo, "app.py", PY_APP.replace("return path\n", "return path * 2\n"))
    assert tm(repo, "adopt", "app.py").returncode == 0
    (repo / "notes.md").unlink()
    assert tm(repo, "adopt", "notes.md").returncode == 0


def _all_artifacts(repo: Path) -> set[str]:
    out: set[str] = set()
    for sha in git(repo, "rev-list", "refs/tinymem/state").split():
        for path in git(repo, "ls-tree", "-r", "--name-only", sha, "meta").split("\n"):
            if not path:
                continue
            meta = json.loads(git(repo, "show", f"{sha}:{path}"))
            for rec in meta["entities"].values():
                out.add(rec["artifact"])
                out.update(rec["superseded"])
    return out


def test_gc_prune_now_loses_nothing_and_fsck_is_clean(repo: Path) -> None:
    _history(repo)
    artifacts = _all_artifacts(repo)
    assert len(artifacts) >= 6
    git(repo, "gc", "-q", "--prune=now")
    for oid in artifacts:
        assert git(repo, "cat-file", "-t", oid).strip() == "blob"
    git(repo, "fsck", "--strict", "--no-dangling")
    assert tm(repo, "rebuild").returncode == 0
    assert json.loads(tm(repo, "state", "--json", "--all").stdout)["entities"]


def test_mirror_clone_carries_state_ledger_and_vault(repo: Path, tmp_path: Path) -> None:
    _history(repo)
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", str(repo), str(mirror))
    assert git(mirror, "rev-parse", "refs/tinymem/state") == git(
        repo, "rev-parse", "refs/tinymem/state"
    )
    git(mirror, "fsck", "--strict", "--no-dangling")
    for oid in _all_artifacts(repo):
        assert git(mirror, "cat-file", "-t", oid).strip() == "blob"
    log = git(mirror, "log", "--format=%s", "refs/tinymem/state").splitlines()
    assert [line.split(":")[0] for line in log] == ["tm adopt", "tm adopt", "tm init"]
