"""A commit is an adoption (#25): what git committed on the current branch is its truth.

When HEAD moves (commit, pull, merge, rebase, reset, cherry-pick, a new branch), the next tm
command records, entity by entity, what git changed in the move where the work tree holds
HEAD's text; what git did not bring and differs stays a hand edit (STALE), and a stale buffer
saved while HEAD did not move is still refused by the hook.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.branches.steps import accept_reply
from tests.conftest import git, init_repo, tm, write
from tests.modelserver import ModelServer

HOOKS = "def default_hooks():\n    return []\n\n\ndef other_hooks():\n    return ['a']\n"
NEW_DEFAULT = "def default_hooks():\n    return ['lint']"
OLD_DEFAULT = "def default_hooks():\n    return []"
BUFFER = HOOKS.replace("return ['a']", "return ['buffer']")


def _base(repo: Path) -> None:
    init_repo(repo, {"hooks.py": HOOKS, "app.py": "def run():\n    return 0\n"})
    assert tm(repo, "hook", "install").returncode == 0


def _git_episodes(repo: Path, branch: str = "main") -> list[dict[str, Any]]:
    """The `git` episodes of the branch's ledger, newest first, as their records say."""
    ref = f"refs/tinymem/heads/{branch}"
    out = []
    for commit in git(repo, "rev-list", "--first-parent", ref).split():
        record = json.loads(git(repo, "show", f"{commit}:episode/episode.json"))
        if record["kind"] == "git":
            out.append(record)
    return out


def _stale(repo: Path) -> list[str]:
    proc = tm(repo, "status", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    return sorted(e["entity"] for f in report["files"] for e in f["stale"])


def _entity(repo: Path, branch: str, path: str, name: str) -> str:
    return git(repo, "show", f"refs/tinymem/heads/{branch}:entities/{path}/{name}")


def test_an_older_branch_commits_past_the_hook_with_no_tm_command_first(
    repo: Path, server: ModelServer
) -> None:
    # The first case #17 named, exactly: the hook is the first tm command on `older`.
    _base(repo)
    git(repo, "branch", "older")
    accept_reply(repo, server, "hooks.py", NEW_DEFAULT)
    git(repo, "commit", "-qam", "lint hook")
    git(repo, "checkout", "-q", "older")
    with (repo / "hooks.py").open("a") as f:
        f.write("# a note\n")
    commit = git(repo, "commit", "-qam", "note", check=False)
    assert "refused" not in commit
    assert git(repo, "log", "-1", "--format=%s").strip() == "note"
    assert _stale(repo) == []
    # older's truth is older's committed text, not main's later accept.
    assert _entity(repo, "older", "hooks.py", "default_hooks") == OLD_DEFAULT
    shown = git(repo, "show", "refs/tinymem/heads/older:files/hooks.py")
    assert shown == git(repo, "show", "HEAD:hooks.py")


def test_a_committed_hand_edit_is_adopted_from_its_commit(repo: Path) -> None:
    _base(repo)
    write(repo, "app.py", "def run():\n    return 7\n")
    assert _stale(repo) == ["app.py::run"]
    git(repo, "commit", "-qam", "seven")
    status = tm(repo, "status", "--check")
    assert status.returncode == 0, status.stdout
    head = git(repo, "rev-parse", "HEAD").strip()
    assert f"recorded 1 file git committed ({head[:7]} commit)" in status.stderr
    [episode] = _git_episodes(repo)
    assert episode["details"]["commit"] == head
    assert episode["details"]["operation"] == "commit"
    # Said once: the next command has nothing to record.
    again = tm(repo, "status", "--check")
    assert again.returncode == 0 and "recorded" not in again.stderr


def test_a_pull_from_another_clone_is_recorded_and_a_hand_edit_stays_stale(
    repo: Path, tmp_path: Path
) -> None:
    _base(repo)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    write(other, "hooks.py", HOOKS.replace("return []", "return ['pulled']"))
    write(other, "new.py", "def fresh():\n    return 1\n")
    git(other, "add", ".")
    git(other, "commit", "-qm", "upstream")
    write(repo, "app.py", "def run():\n    return 'mine'\n")  # a hand edit before the pull
    git(repo, "pull", "-q", "--no-rebase", str(other), "main")
    status = tm(repo, "status", "--json")
    assert status.returncode == 0, status.stderr
    assert "recorded 2 files git committed" in status.stderr
    assert "pull" in status.stderr
    assert _stale(repo) == ["app.py::run"]
    assert "tm adopt --merged" not in status.stderr


def test_a_merge_is_recorded_entity_by_entity_around_a_hand_edit(
    repo: Path, tmp_path: Path
) -> None:
    _base(repo)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    write(other, "hooks.py", HOOKS.replace("return []", "return ['merged']"))
    git(other, "commit", "-qam", "upstream")
    git(repo, "fetch", "-q", str(other), "main")
    git(repo, "merge", "-q", "FETCH_HEAD")
    # A hand edit of another entity of the same file, after the merge and before tm runs.
    text = (repo / "hooks.py").read_text().replace("return ['a']", "return ['b']")
    write(repo, "hooks.py", text)
    assert _stale(repo) == ["hooks.py::other_hooks"]
    assert "merged" in _entity(repo, "main", "hooks.py", "default_hooks")
    [episode] = _git_episodes(repo)
    assert episode["details"]["operation"] in ("merge", "pull")


def test_a_rebase_is_recorded_when_it_finishes(repo: Path) -> None:
    _base(repo)
    git(repo, "switch", "-q", "-c", "feature")
    write(repo, "app.py", "def run():\n    return 'feature'\n")
    git(repo, "commit", "-qam", "feature")
    assert _stale(repo) == []
    git(repo, "switch", "-q", "main")
    write(repo, "hooks.py", HOOKS.replace("return []", "return ['main']"))
    git(repo, "commit", "-qam", "main moves")
    assert _stale(repo) == []
    git(repo, "switch", "-q", "feature")
    git(repo, "rebase", "-q", "main")
    status = tm(repo, "status", "--check")
    assert status.returncode == 0, status.stdout
    assert "rebase" in status.stderr


def test_a_reset_to_an_older_commit_is_the_branch_truth(repo: Path, server: ModelServer) -> None:
    _base(repo)
    accept_reply(repo, server, "hooks.py", NEW_DEFAULT)
    git(repo, "commit", "-qam", "lint")
    assert _stale(repo) == []
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    status = tm(repo, "status", "--check")
    assert status.returncode == 0, status.stdout
    assert "reset" in status.stderr
    write(repo, "app.py", "def run():\n    return 1\n")
    commit = git(repo, "commit", "-qam", "after reset", check=False)
    assert "refused" not in commit
    assert git(repo, "log", "-1", "--format=%s").strip() == "after reset"


def test_a_cherry_pick_is_recorded(repo: Path) -> None:
    _base(repo)
    git(repo, "switch", "-q", "-c", "side")
    write(repo, "app.py", "def run():\n    return 'picked'\n")
    git(repo, "commit", "-qam", "pick me")
    picked = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "switch", "-q", "main")
    assert _stale(repo) == []
    git(repo, "cherry-pick", picked)
    status = tm(repo, "status", "--check")
    assert status.returncode == 0, status.stdout
    assert "cherry-pick" in status.stderr


def test_a_branch_recreated_under_the_same_name_starts_afresh(
    repo: Path, server: ModelServer
) -> None:
    _base(repo)
    git(repo, "switch", "-q", "-c", "topic")
    accept_reply(repo, server, "hooks.py", NEW_DEFAULT)
    git(repo, "commit", "-qam", "topic work")
    git(repo, "switch", "-q", "main")
    assert _stale(repo) == []
    git(repo, "branch", "-q", "-D", "topic")
    write(repo, "app.py", "def run():\n    return 'main'\n")
    git(repo, "commit", "-qam", "main moves")
    git(repo, "switch", "-q", "-c", "topic")
    status = tm(repo, "status", "--check")
    assert status.returncode == 0, status.stdout
    assert "created again" in status.stderr
    assert _entity(repo, "topic", "hooks.py", "default_hooks") == OLD_DEFAULT


def test_a_stale_buffer_is_still_refused_when_head_did_not_move(
    repo: Path, server: ModelServer
) -> None:
    _base(repo)
    accept_reply(repo, server, "hooks.py", NEW_DEFAULT)
    # The editor's buffer, saved over the accepted change: default_hooks is HEAD's text again
    # (and an edit the user made in that buffer to other_hooks).
    write(repo, "hooks.py", BUFFER)
    assert _stale(repo) == ["hooks.py::default_hooks", "hooks.py::other_hooks"]
    git(repo, "commit", "-qam", "stale", check=False)
    assert git(repo, "log", "-1", "--format=%s").strip() == "base"  # refused by the hook
    assert _stale(repo) == ["hooks.py::default_hooks", "hooks.py::other_hooks"]


def test_a_no_verify_commit_becomes_truth(repo: Path, server: ModelServer) -> None:
    _base(repo)
    accept_reply(repo, server, "hooks.py", NEW_DEFAULT)
    write(repo, "hooks.py", BUFFER)
    git(repo, "commit", "-qam", "mine", check=False)
    assert git(repo, "log", "-1", "--format=%s").strip() == "base"  # refused by the hook
    git(repo, "commit", "-qam", "mine anyway", "--no-verify")
    status = tm(repo, "status", "--check")
    assert status.returncode == 0, status.stdout
    assert _entity(repo, "main", "hooks.py", "default_hooks") == OLD_DEFAULT


def test_two_commands_recording_one_move_make_one_episode(repo: Path) -> None:
    from tinymem.repository import open_repo
    from tinymem.sync.headmove import follow_head

    _base(repo)
    before = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    write(repo, "app.py", "def run():\n    return 3\n")
    git(repo, "commit", "-qam", "three", "--no-verify")
    first = open_repo(str(repo))
    second = open_repo(str(repo))
    recorded = follow_head(first, before)
    assert recorded != before
    # The other command read the tip before the first recorded: it loses the race on the
    # ledger ref, sees the move recorded on the new tip, and records nothing.
    assert follow_head(second, before) == recorded
    assert len(_git_episodes(repo)) == 1


def test_a_linked_worktree_records_its_own_branch_only(repo: Path, tmp_path: Path) -> None:
    _base(repo)
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    assert tm(linked, "status", "--check").returncode == 0
    main_tip = git(repo, "rev-parse", "refs/tinymem/heads/main").strip()
    write(linked, "app.py", "def run():\n    return 'side'\n")
    git(linked, "commit", "-qam", "side work", "--no-verify")
    status = tm(linked, "status", "--check")
    assert status.returncode == 0 and "recorded 1 file git committed" in status.stderr
    assert len(_git_episodes(repo, "side")) == 1
    assert git(repo, "rev-parse", "refs/tinymem/heads/main").strip() == main_tip
    assert tm(repo, "status", "--check").returncode == 0


def test_the_store_never_calls_the_step_above_it() -> None:
    # ledger.current read the tip through branches.start, open_repo recovered through
    # writing.recovery: the store calling the flows built on it (#25).
    import inspect

    from tinymem import baseline, ledger, repository, statemap
    from tinymem.branches import refs

    for module in (ledger, statemap, baseline, repository, refs):
        source = inspect.getsource(module)
        for above in ("tinymem.sync", "branches.start", "writing.recovery", "fromcommit"):
            assert above not in source, (module.__name__, above)


def test_a_branch_with_no_ledger_is_not_started_by_a_read(repo: Path) -> None:
    from tinymem.errors import NotInitializedError
    from tinymem.ledger import current
    from tinymem.repository import open_repo
    from tinymem.sync import open_synced

    _base(repo)
    git(repo, "switch", "-q", "-c", "fresh")
    try:
        current(open_repo(str(repo)))
    except NotInitializedError:
        pass
    else:
        raise AssertionError("a read started a ledger")
    assert current(open_synced(str(repo))).commit_id is not None


def test_the_first_commit_after_tm_init_on_an_unborn_branch_is_recorded(repo: Path) -> None:
    # No commit yet: the ledger names no HEAD.
    init_repo(repo, {"app.py": "def run():\n    return 0\n"}, commit=False)
    write(repo, "app.py", "def run():\n    return 1\n")
    git(repo, "commit", "-qam", "first", "--no-verify")
    status = tm(repo, "status", "--check")
    assert status.returncode == 0, status.stdout
    assert "recorded 1 file git committed" in status.stderr


def test_a_merge_with_conflicts_resolved_by_hand_is_recorded_at_its_commit(repo: Path) -> None:
    _base(repo)
    git(repo, "switch", "-q", "-c", "topic")
    write(repo, "app.py", "def run():\n    return 'topic'\n")
    git(repo, "commit", "-qam", "topic")
    git(repo, "switch", "-q", "main")
    write(repo, "app.py", "def run():\n    return 'main'\n")
    git(repo, "commit", "-qam", "main")
    assert _stale(repo) == []
    git(repo, "merge", "-q", "topic", check=False)  # a conflict: HEAD has not moved
    during = tm(repo, "status", "--json")
    assert "recorded" not in during.stderr
    assert [f["path"] for f in json.loads(during.stdout)["files"]] == ["app.py"]
    write(repo, "app.py", "def run():\n    return 'both'\n")
    git(repo, "commit", "-qam", "merged by hand")  # the hook lets the resolution through
    status = tm(repo, "status", "--check")
    assert status.returncode == 0, status.stdout
    assert "merge)" in status.stderr
    assert _entity(repo, "main", "app.py", "run") == "def run():\n    return 'both'"


def test_a_rebase_stopped_by_a_conflict_records_nothing_until_it_finishes(repo: Path) -> None:
    import os
    import subprocess

    _base(repo)
    git(repo, "switch", "-q", "-c", "feature")
    write(repo, "app.py", "def run():\n    return 'feature'\n")
    git(repo, "commit", "-qam", "feature")
    git(repo, "switch", "-q", "main")
    write(repo, "app.py", "def run():\n    return 'main'\n")
    git(repo, "commit", "-qam", "main")
    git(repo, "switch", "-q", "feature")
    assert _stale(repo) == []
    tip = git(repo, "rev-parse", "refs/tinymem/heads/feature").strip()
    git(repo, "rebase", "-q", "main", check=False)  # stops on the conflict
    during = tm(repo, "status")
    assert "recorded" not in during.stderr
    assert git(repo, "rev-parse", "refs/tinymem/heads/feature").strip() == tip
    write(repo, "app.py", "def run():\n    return 'rebased'\n")
    git(repo, "add", "app.py")
    env = {**os.environ, "GIT_EDITOR": "true"}
    subprocess.run(
        ["git", "rebase", "--continue"], cwd=repo, env=env, check=True, capture_output=True
    )
    status = tm(repo, "status", "--check")
    assert status.returncode == 0, status.stdout
    assert "rebase)" in status.stderr
    assert _entity(repo, "feature", "app.py", "run") == "def run():\n    return 'rebased'"
