"""The vault survives git's own maintenance and travels with a mirror clone."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import PY_APP, git, tm, tm_ask, write
from tests.modelserver import ModelServer


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
    for sha in git(repo, "rev-list", "refs/tinymem/heads/main").split():
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
    assert git(mirror, "rev-parse", "refs/tinymem/heads/main") == git(
        repo, "rev-parse", "refs/tinymem/heads/main"
    )
    git(mirror, "fsck", "--strict", "--no-dangling")
    for oid in _all_artifacts(repo):
        assert git(mirror, "cat-file", "-t", oid).strip() == "blob"
    log = git(mirror, "log", "--format=%s", "refs/tinymem/heads/main").splitlines()
    assert [line.split(":")[0] for line in log] == ["tm adopt", "tm adopt", "tm init"]


NEW_FETCH = 'def fetch_user(uid, retries=3):\n    return {"id": uid, "retries": retries}\n'
NEW_HELPER = "def helper_two(x):\n    return x * 2\n"


def _proposals(repo: Path, server: ModelServer) -> tuple[str, str]:
    """One pending proposal and one rejected one, whose blobs nothing else names."""
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    ids = []
    for code in (NEW_FETCH, NEW_HELPER):
        server.add(f"```python path=app.py\n{code}```\n")
        proc = tm_ask(repo, server, "change fetch_user", "--json")
        assert proc.returncode == 0, proc.stderr
        (prop,) = json.loads(proc.stdout)["proposals"]
        ids.append(str(prop["id"]))
    assert tm(repo, "reject", ids[1]).returncode == 0
    return ids[0], ids[1]


def _named_blobs(repo: Path, pid: str) -> set[str]:
    raw = json.loads(git(repo, "show", f"refs/tinymem/heads/main:proposals/{pid}/proposal.json"))
    named = {raw["block"], raw["file_base"]}
    for e in raw["entities"]:
        named.update((e["artifact"], e["base"]))
    return {oid for oid in named if oid}


def test_gc_keeps_pending_and_rejected_proposals(repo: Path, server: ModelServer) -> None:
    pending, rejected = _proposals(repo, server)
    named = _named_blobs(repo, pending) | _named_blobs(repo, rejected)
    reachable = set(git(repo, "rev-list", "--objects", "refs/tinymem/heads/main").split())
    assert named <= reachable  # through tree entries, not only inside JSON
    git(repo, "gc", "-q", "--prune=now")
    git(repo, "fsck", "--strict", "--no-dangling")
    doctor = tm(repo, "doctor", "--json")
    checks = {c["check"]: c["status"] for c in json.loads(doctor.stdout)["checks"]}
    assert checks["artifacts"] == "ok", doctor.stdout
    assert tm(repo, "diff", pending).returncode == 0
    for oid in named:
        assert git(repo, "cat-file", "-t", oid).strip() == "blob"
    proc = tm(repo, "accept", pending)
    assert proc.returncode == 0, proc.stderr
    assert "retries=3" in (repo / "app.py").read_text()
    assert tm(repo, "rebuild").returncode == 0


def test_mirror_carries_pending_proposals(repo: Path, server: ModelServer, tmp_path: Path) -> None:
    pending, rejected = _proposals(repo, server)
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", f"file://{repo}", str(mirror))
    for oid in _named_blobs(repo, pending) | _named_blobs(repo, rejected):
        assert git(mirror, "cat-file", "-t", oid).strip() == "blob"


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="needs Linux pipe sizes")
def test_ctrl_c_after_the_ledger_commit_says_the_accept_was_recorded(
    repo: Path, server: ModelServer
) -> None:
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    assert tm(repo, "init").returncode == 0
    names = [f"pkg/generated_module_no_{i:03d}.py" for i in range(100)]
    fence = "```"
    blocks = (
        f"{fence}python path={n}\ndef f{i}():\n    return {i}\n{fence}\n"
        for i, n in enumerate(names)
    )
    server.add("".join(blocks))
    proc = tm_ask(repo, server, "add modules", "--json", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["proposals"]) == 100
    before = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    # stdout is a pipe nobody reads yet, smaller than the report of 100 promotions: tm is
    # still alive, writing its report, when the ledger commit has been made.
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    p = subprocess.Popen(
        [sys.executable, "-m", "tinymem", "accept", "--all"],
        cwd=repo,
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(write_end)
    deadline = time.monotonic() + 120
    while git(repo, "rev-parse", "refs/tinymem/heads/main").strip() == before:
        assert p.poll() is None and time.monotonic() < deadline, p.stderr
        time.sleep(0.02)
    time.sleep(0.5)  # into the blocked write of the report
    assert p.poll() is None
    p.send_signal(signal.SIGINT)
    with os.fdopen(read_end, "rb") as f:
        shown = f.read().decode()
    err = p.stderr.read() if p.stderr else ""
    assert p.wait(timeout=60) == 130
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert episode["kind"] == "accept" and len(episode["details"]["accepted"]) == 100
    assert all((repo / n).exists() for n in names)
    # Whatever was shown of the report, stderr says in one line that the accept is complete.
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"interrupted after the accept was recorded (episode {episode['id']})" in err
    assert "promoted" in shown
    assert tm(repo, "status", "--check").returncode == 0
