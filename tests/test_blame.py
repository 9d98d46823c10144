"""`tm blame`: git's blame over the ledger's file snapshots, mapped onto the work tree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import PY_APP, git, init_repo, tm, write
from tests.test_auditlog import MODEL, History, history, normalize, tma, tma_json

__all__ = ["history"]  # the module-scoped scripted history, shared with test_auditlog

ACCEPTED_APP = PY_APP.replace(
    'def fetch_user(uid):\n    return {"id": uid}',
    'def fetch_user(uid, retries=3):\n    for _ in range(retries):\n        return {"id": uid}',
).replace("return (path, body)", 'return {"path": path, "body": body}')


def _copy(h: History, tmp_path: Path) -> Path:
    # The shared history stays untouched: every blame test edits its own copy.
    work = tmp_path / "copy"
    shutil.copytree(h.repo, work, symlinks=True)
    return work


def _renamed(h: History, work: Path) -> History:
    commits = git(work, "rev-list", "--reverse", "refs/tinymem/heads/main").split()
    episodes = [json.loads(git(work, "show", f"{c}:episode/episode.json"))["id"] for c in commits]
    return History(work, commits, episodes, h.proposals, h.requests)


def _line(n: int, text: str, snap: int | None, who: str | None) -> dict[str, Any]:
    """One expected blame line; `who` is the episode (E1...) or None for STALE."""
    if who is None:
        return {
            "line": n,
            "text": text,
            "stale": True,
            "snapshot_line": None,
            "commit": None,
            "episode": None,
            "kind": None,
            "time": None,
            "author": None,
            "model": None,
            "summary": None,
        }
    kinds = {
        "E1": ("init", "import", None, "imported 2 tracked files"),
        "E3": ("accept", MODEL, MODEL, "add a retry to fetch_user"),
        "E6": ("accept", MODEL, MODEL, "make Client.post return a dict"),
        "E11": ("adopt", "user", None, "adopted app.py"),
    }
    kind, author, model, summary = kinds[who]
    return {
        "line": n,
        "text": text,
        "stale": False,
        "snapshot_line": snap,
        "commit": "C" + who[1:],
        "episode": who,
        "kind": kind,
        "time": "T",
        "author": author,
        "model": model,
        "summary": summary,
    }


def test_blame_two_accepts_an_adopt_and_a_stale_hand_edit_survives_gc(
    history: History, tmp_path: Path
) -> None:
    work = _copy(history, tmp_path)
    assert (work / "app.py").read_text() == ACCEPTED_APP  # two accepted proposals
    adopted = ACCEPTED_APP.replace("        return path\n", "        return path.lower()\n")
    write(work, "app.py", adopted)
    assert tm(work, "adopt", "app.py").returncode == 0
    # Uncommitted hand edits: one line changed, one added at the end.
    hand = adopted.replace('return {"id": uid}', 'return {"id": uid, "hand": True}')
    write(work, "app.py", hand + "# note to self\n")
    h = _renamed(history, work)
    expected = [
        _line(1, '"""A tiny service."""', 1, "E1"),
        _line(2, "", 2, "E1"),
        _line(3, "import os", 3, "E1"),
        _line(4, "", 4, "E1"),
        _line(5, "", 5, "E1"),
        _line(6, "def fetch_user(uid, retries=3):", 6, "E3"),
        _line(7, "    for _ in range(retries):", 7, "E3"),
        _line(8, '        return {"id": uid, "hand": True}', None, None),
        _line(9, "", 9, "E1"),
        _line(10, "", 10, "E1"),
        _line(11, "class Client:", 11, "E1"),
        _line(12, "    def get(self, path):", 12, "E1"),
        _line(13, "        return path.lower()", 13, "E11"),
        _line(14, "", 14, "E1"),
        _line(15, "    def post(self, path, body):", 15, "E1"),
        _line(16, '        return {"path": path, "body": body}', 16, "E6"),
        _line(17, "# note to self", None, None),
    ]
    snapshot = git(work, "rev-parse", "refs/tinymem/heads/main:files/app.py").strip()
    before = normalize(tma_json(work, "blame", "app.py"), h)
    assert before == {
        "path": "app.py",
        "snapshot": snapshot,
        "state": "C11",
        "total_lines": 17,
        "stale_lines": 2,
        "lines": expected,
    }
    git(work, "gc", "--prune=now", "--quiet")
    assert git(work, "count-objects", "-v").splitlines()[0] == "count: 0"  # nothing loose
    assert normalize(tma_json(work, "blame", "app.py"), h) == before
    # Line ranges, like git blame -L.
    ranged = normalize(tma_json(work, "blame", "app.py", "-L", "6,8"), h)
    assert ranged["lines"] == expected[5:8] and ranged["stale_lines"] == 1
    assert (
        normalize(tma_json(work, "blame", "app.py", "-L", "15,+2"), h)["lines"] == expected[14:16]
    )
    assert normalize(tma_json(work, "blame", "app.py", "-L", "16"), h)["lines"] == expected[15:]
    # Text: short id, author and date per line; STALE lines attributed to nobody.
    proc = tma(work, "blame", "app.py")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    commit = {f"C{i + 1}": c for i, c in enumerate(h.commits)}
    assert lines[0].startswith(commit["C1"][:12] + " import ")
    assert lines[5].startswith(commit["C3"][:12] + " " + MODEL)
    assert lines[7].startswith("STALE") and lines[7].endswith(
        ' 8)         return {"id": uid, "hand": True}'
    )
    assert lines[12].startswith(commit["C11"][:12] + " user ")
    assert "2 STALE line(s)" in lines[-1]


def test_blame_errors_are_one_sentence(history: History, tmp_path: Path) -> None:
    work = _copy(history, tmp_path)
    write(work, "new.py", "x = 1\n")
    write(work, "bin.dat", b"\x00\x01")
    cases = [
        (["blame", "util.py"], 2, "was deleted"),
        (["blame", "new.py"], 2, "not in the State Map"),
        (["blame", "app.py", "-L", "99"], 2, "only 16 lines"),
        (["blame", "app.py", "-L", "x,y"], 2, "-L"),
        (["blame", "app.py", "-L", "5,2"], 2, "-L"),
        (["blame", "../elsewhere.py"], 11, "outside"),
    ]
    for args, code, needle in cases:
        proc = tma(work, *args)
        assert proc.returncode == code, (args, proc.stderr)
        assert needle in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    (work / "app.py").unlink()
    proc = tma(work, "blame", "app.py")
    assert proc.returncode == 2 and "missing from the work tree" in proc.stderr


def test_blame_follows_a_file_deleted_and_added_again(repo: Path) -> None:
    init_repo(repo, {"a.py": "def a():\n    return 1\n", "b.txt": "one\ntwo\n"}, commit=False)
    (repo / "b.txt").unlink()
    assert tm(repo, "adopt", "b.txt").returncode == 0
    write(repo, "b.txt", "one\nthree\n")
    assert tm(repo, "adopt", "b.txt").returncode == 0
    commits = git(repo, "rev-list", "refs/tinymem/heads/main").split()
    doc = tma_json(repo, "blame", "b.txt")
    # Re-added after the deletion: every line comes from the adopt that added it back.
    assert [(x["commit"], x["author"], x["text"]) for x in doc["lines"]] == [
        (commits[0], "user", "one"),
        (commits[0], "user", "three"),
    ]
    doc = tma_json(repo, "blame", "a.py")
    assert {x["commit"] for x in doc["lines"]} == {commits[2]}
    assert doc["lines"][0]["author"] == "import" and doc["stale_lines"] == 0
    # CRLF in the work tree under autocrlf is the same text to git: nothing is STALE.
    git(repo, "config", "core.autocrlf", "true")
    (repo / "a.py").write_bytes(b"def a():\r\n    return 1\r\n")
    assert tma_json(repo, "blame", "a.py")["stale_lines"] == 0
