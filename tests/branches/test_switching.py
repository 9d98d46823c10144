"""Branches as git users switch them: each has its own State Map and ledger, a branch's first
use starts it from the branch it was made from, the hook judges against the current branch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.branches.steps import accept_reply
from tests.conftest import git, init_repo, tm, write
from tests.modelserver import ModelServer

HELPERS = "def get_debug_flag():\n    return False\n\n\ndef other():\n    return 1\n"
NEW_FLAG = "def get_debug_flag():\n    return True"


def _base(repo: Path) -> None:
    init_repo(repo, {"helpers.py": HELPERS, "app.py": "def run():\n    return 0\n"})
    assert tm(repo, "hook", "install").returncode == 0


def _log(repo: Path) -> list[dict[str, object]]:
    proc = tm(repo, "log", "--json")
    assert proc.returncode == 0, proc.stderr
    entries: list[dict[str, object]] = json.loads(proc.stdout)
    return entries


def _clean(repo: Path) -> None:
    proc = tm(repo, "status", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_older_branch_is_not_a_stale_buffer(repo: Path, server: ModelServer) -> None:
    # The report that opened #17: a branch made before an accepted change.
    _base(repo)
    git(repo, "branch", "old")
    accept_reply(repo, server, "helpers.py", NEW_FLAG)
    git(repo, "commit", "-qam", "flag on")
    git(repo, "switch", "-q", "old")
    status = tm(repo, "status", "--check")
    assert status.returncode == 0, status.stdout  # no false STALE
    assert "branch old had no State Map: started from main's" in status.stderr
    assert "took helpers.py" in status.stderr
    with (repo / "helpers.py").open("a") as f:
        f.write("# a comment\n")
    commit = git(repo, "commit", "-qam", "comment", check=False)
    assert "refused" not in commit
    assert git(repo, "log", "-1", "--format=%s").strip() == "comment"
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/tinymem/").split()
    assert refs == ["refs/tinymem/heads/main", "refs/tinymem/heads/old"]


def test_switching_back_and_forth_with_accepts_on_each(repo: Path, server: ModelServer) -> None:
    _base(repo)
    git(repo, "switch", "-q", "-c", "feature")
    on_feature = accept_reply(repo, server, "app.py", "def run():\n    return 1")
    git(repo, "commit", "-qam", "feature: run 1")
    git(repo, "switch", "-q", "main")
    _clean(repo)
    on_main = accept_reply(repo, server, "helpers.py", NEW_FLAG)
    git(repo, "commit", "-qam", "main: flag")
    for _ in range(2):
        git(repo, "switch", "-q", "feature")
        _clean(repo)
        write(repo, "app.py", (repo / "app.py").read_text() + "# note\n")
        git(repo, "commit", "-qam", "feature: note")  # the hook lets an ordinary commit pass
        assert tm(repo, "adopt", "app.py").returncode == 0
        git(repo, "switch", "-q", "main")
        _clean(repo)
    feature_log = json.loads(tm(repo, "log", "--json", "-b", "feature").stdout)
    main_log = _log(repo)
    assert {e["kind"] for e in main_log} == {"init", "ask", "accept"}
    main_text = json.dumps(main_log)
    assert on_main in main_text and on_feature not in main_text
    feature_text = json.dumps(feature_log)
    assert on_feature in feature_text and on_main not in feature_text
    assert {e["branch"] for e in main_log if e["kind"] != "init"} == {"main"}
    together = json.loads(tm(repo, "log", "--json", "--all-branches").stdout)
    holders = {e["commit"]: e["branches"] for e in together}
    init = next(e for e in together if e["kind"] == "init")
    assert holders[init["commit"]] == ["feature", "main"]  # shared history, shown once
    assert len(together) == len({e["commit"] for e in together})
    for branch in ("feature", "main"):
        git(repo, "switch", "-q", branch)
        assert tm(repo, "rebuild").returncode == 0
        assert json.loads(tm(repo, "doctor", "--json").stdout)["ok"]


def test_the_hook_still_refuses_a_stale_buffer_on_its_own_branch(
    repo: Path, server: ModelServer
) -> None:
    _base(repo)
    git(repo, "switch", "-q", "-c", "feature")
    accept_reply(repo, server, "helpers.py", NEW_FLAG)
    git(repo, "commit", "-qam", "flag on")
    write(repo, "helpers.py", HELPERS)  # an editor saves the buffer it had open before
    git(repo, "add", "helpers.py")
    proc = git(repo, "commit", "-qm", "stale", check=False)
    assert git(repo, "log", "-1", "--format=%s").strip() == "flag on", proc
    hook = tm(repo, "hook", "run", "pre-commit")
    assert hook.returncode == 1
    assert "git show refs/tinymem/heads/feature:files/helpers.py" in hook.stderr


def test_a_detached_head_is_refused_in_one_sentence(repo: Path) -> None:
    _base(repo)
    git(repo, "switch", "-q", "--detach")
    for argv in (["status"], ["adopt", "app.py"], ["log"]):
        proc = tm(repo, *argv)
        assert proc.returncode == 3, proc.stderr
        assert "HEAD is detached" in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    write(repo, "app.py", "def run():\n    return 5\n")
    git(repo, "commit", "-qam", "on a detached head")  # the hook has nothing to judge
    assert tm(repo, "log", "--all-branches").returncode == 0
    doctor = json.loads(tm(repo, "doctor", "--json").stdout)
    ref = next(c for c in doctor["checks"] if c["check"] == "state ref")
    assert ref["status"] == "warn" and "detached" in ref["message"]


def test_a_branch_sharing_no_history_imports_its_own_tree(repo: Path) -> None:
    _base(repo)
    git(repo, "switch", "-q", "--orphan", "pages")  # an empty index and work tree
    write(repo, "index.md", "# pages\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "--no-verify", "-m", "pages")
    proc = tm(repo, "status", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "shares no commit" in proc.stderr and "took index.md" in proc.stderr
    assert [e["kind"] for e in _log(repo)] == ["branch"]  # a ledger of its own
    assert git(repo, "log", "--format=%P", "-1", "refs/tinymem/heads/pages").strip() == ""


def test_a_stopped_rebase_uses_the_branch_being_rebased(repo: Path) -> None:
    _base(repo)
    git(repo, "switch", "-q", "-c", "topic")
    write(repo, "app.py", "def run():\n    return 2\n")
    git(repo, "commit", "-qam", "topic")
    assert tm(repo, "adopt", "app.py").returncode == 0
    git(repo, "switch", "-q", "main")
    write(repo, "app.py", "def run():\n    return 3\n")
    git(repo, "commit", "-qam", "main", "--no-verify")
    git(repo, "switch", "-q", "topic")
    assert git(repo, "rebase", "main", check=False) is not None  # stops on the conflict
    assert (repo / ".git" / "rebase-merge").exists() or (repo / ".git" / "rebase-apply").exists()
    proc = tm(repo, "log", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["branch"] == "topic"
    git(repo, "rebase", "--abort")


def test_a_new_branch_keeps_what_was_stale_on_its_origin(repo: Path) -> None:
    # A stale buffer on main (the State Map holds an adopted version, the disk the old one)
    # must not become the truth of a branch made there: only what git changed is taken.
    _base(repo)
    write(repo, "app.py", "def run():\n    return 2\n")
    assert tm(repo, "adopt", "app.py").returncode == 0
    git(repo, "checkout", "--", "app.py")
    assert tm(repo, "status", "--check").returncode == 1
    git(repo, "switch", "-q", "-c", "feature")
    proc = tm(repo, "status", "--json")
    assert [f["path"] for f in json.loads(proc.stdout)["files"]] == ["app.py"], proc.stderr
    assert "took" not in proc.stderr


def test_a_branch_made_after_a_rebase_keeps_the_whole_history(repo: Path) -> None:
    _base(repo)
    git(repo, "switch", "-q", "-c", "feature")
    for name in ("x", "y"):
        write(repo, f"{name}.py", f"def {name}():\n    return 1\n")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", name)
        assert tm(repo, "adopt", f"{name}.py").returncode == 0
    git(repo, "switch", "-q", "main")
    write(repo, "helpers.py", HELPERS + "\n# main\n")
    git(repo, "commit", "-qam", "main moves", "--no-verify")
    assert tm(repo, "adopt", "helpers.py").returncode == 0
    git(repo, "switch", "-q", "feature")
    git(repo, "rebase", "-q", "main")
    git(repo, "switch", "-q", "-c", "f2")
    log = tm(repo, "log", "--json")
    assert "started from feature's" in log.stderr, log.stderr
    summaries = [e["summary"] for e in json.loads(log.stdout)]
    # Each commit was recorded by the `tm adopt` after it (#25: a commit is an adoption).
    assert "took x.py" in summaries and "took y.py" in summaries


def test_an_unborn_orphan_branch_waits_for_tm_init(repo: Path) -> None:
    _base(repo)
    write(repo, "app.py", "def run():\n    return 9\n")  # STALE on main
    git(repo, "checkout", "-q", "--orphan", "o2")  # keeps the index and the edit
    proc = tm(repo, "status")
    assert proc.returncode == 3 and "tm init" in proc.stderr
    assert "refs/tinymem/heads/o2" not in git(repo, "for-each-ref", "refs/tinymem/")
    init = tm(repo, "init")
    assert init.returncode == 0, init.stderr
    assert "Imported 2 tracked files" in init.stdout


def _on_a_branch_whose_ref_clashes(repo: Path) -> None:
    """On branch a/b, where the ledger of a deleted branch a is in the way."""
    _base(repo)
    git(repo, "switch", "-q", "-c", "a")
    assert tm(repo, "status").returncode == 0
    git(repo, "switch", "-q", "main")
    git(repo, "branch", "-D", "a")
    git(repo, "switch", "-q", "-c", "a/b")


def test_a_deleted_branch_s_ledger_in_the_way_is_named(repo: Path) -> None:
    _on_a_branch_whose_ref_clashes(repo)
    proc = tm(repo, "status")
    assert proc.returncode == 2, proc.stderr
    assert "refs/tinymem/heads/a (the ledger of branch a" in proc.stderr
    assert "git update-ref -d refs/tinymem/heads/a" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_renamed_branch_keeps_its_ledger(repo: Path, server: ModelServer) -> None:
    _base(repo)
    git(repo, "switch", "-q", "-c", "zfeat")
    pid = accept_reply(repo, server, "helpers.py", NEW_FLAG)  # not committed
    git(repo, "branch", "-m", "zfeat2")
    proc = tm(repo, "status", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "branch zfeat was renamed zfeat2" in proc.stderr
    assert pid in tm(repo, "log").stdout
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/tinymem/").split()
    assert refs == ["refs/tinymem/heads/main", "refs/tinymem/heads/zfeat2"]


def test_the_hook_lets_a_commit_through_while_a_ref_clashes(repo: Path) -> None:
    _on_a_branch_whose_ref_clashes(repo)
    write(repo, "app.py", "def run():\n    return 4\n")
    proc = subprocess.run(
        ["git", "commit", "-qam", "on a/b"], cwd=repo, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "leaves no room for refs/tinymem/heads/a/b" in proc.stderr
