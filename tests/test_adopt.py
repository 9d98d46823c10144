from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import PY_APP, git, init_repo, tm, write


def _entities(repo: Path, *extra: str) -> dict[str, dict[str, object]]:
    doc = json.loads(tm(repo, "state", "--json", *extra).stdout)
    return {e["entity"]: e for e in doc["entities"]}


def test_adopt_supersedes_adds_and_tombstones(repo: Path) -> None:
    init_repo(repo, {"app.py": PY_APP, "gone.py": "def gone():\n    pass\n"}, commit=False)
    before = _entities(repo)["app.py::fetch_user"]["artifact"]
    write(
        repo,
        "app.py",
        PY_APP.replace('{"id": uid}', '{"id": uid, "ok": True}').replace(
            "    def post(self, path, body):\n        return (path, body)\n", ""
        ),
    )
    write(repo, "new.py", "def fresh():\n    return 1\n")
    (repo / "gone.py").unlink()
    proc = tm(repo, "adopt", "app.py", "new.py", "gone.py")
    assert proc.returncode == 0, proc.stderr
    ents = _entities(repo, "--all")
    assert ents["app.py::fetch_user"]["source"] == "user"
    assert ents["app.py::fetch_user"]["artifact"] != before
    assert ents["app.py::Client.post"]["state"] == "TOMBSTONED"
    assert ents["gone.py::gone"]["state"] == "TOMBSTONED"
    assert ents["new.py::fresh"]["state"] == "AUTHORITATIVE"
    assert ents["app.py::Client.get"]["source"] == "disk"  # unchanged entities keep their record
    meta = json.loads(git(repo, "show", "refs/tinymem/heads/main:meta/app.py"))
    assert meta["entities"]["fetch_user"]["superseded"] == [before]
    # Superseded and tombstoned artifacts stay in the vault.
    assert git(repo, "cat-file", "-t", str(before)).strip() == "blob"
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    moves = {(t["entity"], t["from"], t["to"]) for t in episode["transitions"]}
    assert ("app.py::fetch_user", "AUTHORITATIVE", "SUPERSEDED") in moves
    assert ("app.py::fetch_user", None, "AUTHORITATIVE") in moves
    assert ("gone.py::gone", "AUTHORITATIVE", "TOMBSTONED") in moves
    assert tm(repo, "status", "--check").returncode == 0
    assert tm(repo, "rebuild").returncode == 0


def test_adopt_pasted_content_from_stdin(repo: Path) -> None:
    init_repo(repo, {"a.py": "def a():\n    return 1\n"}, commit=False)
    write(repo, "a.py", "def a():\n    return 'hand edit'\n")
    proc = tm(repo, "adopt", "--path", "a.py", input="def a():\n    return 'pasted'\n")
    assert proc.returncode == 0, proc.stderr
    assert (repo / "a.py").read_text() == "def a():\n    return 'pasted'\n"
    assert "saved in the vault" in proc.stdout
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    saved = episode["details"]["previous_disk_text"]["previous-disk-text"]
    assert git(repo, "cat-file", "-p", saved) == "def a():\n    return 'hand edit'\n"
    assert tm(repo, "status", "--check").returncode == 0
    # A path that names a directory is refused, never normalised into a file of that name.
    for named in ("sub/", "a.py/", "b.py/."):
        proc = tm(repo, "adopt", "--path", named, input="y = 2\n")
        assert proc.returncode == 2 and "names a directory" in proc.stderr, named
    assert not (repo / "sub").exists() and not (repo / "b.py").exists()
    assert (repo / "a.py").read_text() == "def a():\n    return 'pasted'\n"


def test_adopt_errors_are_one_sentence(repo: Path) -> None:
    init_repo(repo, {"a.py": "x = 1\n"}, commit=False)
    for args, code in [
        (["adopt", "nope.py"], 2),
        (["adopt", "../outside.py"], 11),
        (["adopt", ".git/config"], 11),
        (["adopt"], 2),
    ]:
        proc = tm(repo, *args)
        assert proc.returncode == code, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_eight_processes_adopting_at_once_lose_nothing(repo: Path) -> None:
    init_repo(repo, {f"f{i}.py": f"def f{i}():\n    return {i}\n" for i in range(8)}, commit=False)
    for i in range(8):
        write(repo, f"f{i}.py", f"def f{i}():\n    return {i + 100}\n")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tinymem", "adopt", f"f{i}.py"],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(8)
    ]
    outputs = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr
        outputs.append(stdout)
    kinds = git(repo, "log", "--format=%s", "refs/tinymem/heads/main").splitlines()
    assert sum(1 for k in kinds if k.startswith("tm adopt")) == 8, (kinds, outputs)
    assert len(kinds) == 9
    ents = _entities(repo)
    assert all(ents[f"f{i}.py::f{i}"]["source"] == "user" for i in range(8))
    assert tm(repo, "status", "--check").returncode == 0
    assert tm(repo, "rebuild").returncode == 0


def test_a_directory_replaced_by_a_symlink_to_outside_is_never_recorded(
    repo: Path, tmp_path: Path
) -> None:
    init_repo(repo, {"app.py": PY_APP, "sub/x.py": "x = 1\n"})
    outside = tmp_path / "outside"
    write(outside, "x.py", 'x = 1\nSECRET = "outside"\n')
    for name in ("x.py",):
        (repo / "sub" / name).unlink()
    (repo / "sub").rmdir()
    (repo / "sub").symlink_to(outside)
    write(repo, "app.py", PY_APP + "\nX = 1\n")

    status = json.loads(tm(repo, "status", "--json").stdout)
    whys = {f["path"]: f["why"] for f in status["files"]}
    assert whys["sub/x.py"] == "reached through the symlink sub"
    assert [e["why"] for f in status["files"] if f["path"] == "sub/x.py" for e in f["stale"]] == [
        "reached through the symlink sub"
    ]
    proc = tm(repo, "status")
    assert "sub/x.py  (reached through the symlink sub)" in proc.stdout

    for argv in (("adopt", "sub/x.py"), ("adopt", "--all"), ("adopt", "sub")):
        proc = tm(repo, *argv)
        assert proc.returncode == 11, (argv, proc.stdout, proc.stderr)
        assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert "reached through the symlink sub" in tm(repo, "adopt", "--all").stderr
    proc = tm(repo, "adopt", "--path", "sub/x.py", input="x = 2\n")
    assert proc.returncode == 11, proc.stderr
    assert git(repo, "show", "refs/tinymem/heads/main:files/sub/x.py") == "x = 1\n"
    assert "outside" not in git(repo, "log", "-p", "refs/tinymem/heads/main")
    assert (outside / "x.py").read_text() == 'x = 1\nSECRET = "outside"\n'


def test_init_skips_files_reached_through_a_symlinked_directory(repo: Path, tmp_path: Path) -> None:
    write(repo, "app.py", PY_APP)
    write(repo, "sub/x.py", "x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    outside = tmp_path / "outside"
    write(outside, "x.py", 'SECRET = "outside"\n')
    (repo / "sub" / "x.py").unlink()
    (repo / "sub").rmdir()
    (repo / "sub").symlink_to(outside)
    proc = tm(repo, "init")
    assert proc.returncode == 0, proc.stderr
    assert "sub/x.py" in proc.stdout + proc.stderr
    assert git(repo, "show", "refs/tinymem/heads/main:files/sub/x.py", check=False) == ""
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert {"path": "sub/x.py", "reason": "reached through the symlink sub"} in episode["details"][
        "skipped"
    ]


def test_the_episode_counts_every_file_it_deleted(repo: Path) -> None:
    """The summary said the first three deleted files and dropped how many more there were."""
    files = {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(5)}
    init_repo(repo, files, commit=False)
    for name in files:
        (repo / name).unlink()
    assert tm(repo, "adopt", *files).returncode == 0
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    assert episode["summary"] == "deleted m0.py, m1.py, m2.py and 2 more"
