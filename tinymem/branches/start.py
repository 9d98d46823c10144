"""A branch's first State Map, made the first time tm is used on it.

The branch continues the ledger of the branch it was made from (its origin): its upstream
when that has a ledger, else the branch with a ledger whose code forks from this branch's
nearest (the newest merge-base; on a tie, the branch whose tip is the fork itself, then the
branch HEAD last came from). A ledger whose branch is gone (deleted, renamed) takes part by the
commit its newest episode was recorded at. When HEAD contains the origin's code, the branch
starts at the origin ledger's tip; otherwise at the newest episode recorded while HEAD was at
an ancestor of this branch's commit, so what the origin recorded after the fork is not this
branch's history. Then the files git changed between the origin's code and HEAD are taken as
HEAD has them, where the work tree agrees, in one `branch` episode: only what the checkout
changed, so a stale buffer or an unrecorded edit stays STALE, as it was on the origin.

When the origin is checked out in another worktree, its uncommitted work never reached this
worktree's files, so every file where the State Map and HEAD differ is taken (again only where
the work tree holds HEAD's text). A renamed branch keeps its ledger (it moves with the name).
A branch related to no ledger starts a ledger of its own from its commit's files (again only
where the work tree agrees); an unborn branch (no commit yet) waits for `tm init`. Either way
one line on stderr says what was done.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pygit2

from tinymem.branches.migrate import migrate_legacy
from tinymem.branches.refs import branch_of_ref, head_commit, ledger_refs, reflog, state_ref
from tinymem.errors import UsageError
from tinymem.ledger import commit_episode, message_trailer
from tinymem.notices import emit
from tinymem.records import Source
from tinymem.reflock import swap_ref, updating
from tinymem.repository import Repo

__all__ = ["Origin", "choose_origin", "ensure_state"]


@dataclass(frozen=True)
class Origin:
    branch: str  # whose ledger
    commit: str  # the ledger commit this branch starts from
    code: str  # the git commit the origin's State Map describes (its branch tip)
    fork: str  # the git commit where the two branches' code meet


def ensure_state(repo: Repo) -> str | None:
    """The tip of the current branch's ledger, made first if the branch has none and another
    branch (or the single ref of an older tm) has one; None when no branch has a ledger, or
    the branch has no commit yet (`tm init` imports its files then)."""
    ref = repo.state_ref
    tip = repo.state_tip(ref)
    if tip is not None:
        return tip
    moved = migrate_legacy(repo, ref)
    if moved is not None:
        return moved
    others = ledger_refs(repo.git)
    if not others:
        return None
    branch = branch_of_ref(ref) or ""
    renamed = _renamed_from(repo.git, branch)
    if renamed in others and repo.git.references.get(f"refs/heads/{renamed}") is None:
        return _follow_rename(repo, renamed, branch, others[renamed])
    _refuse_clash(ref, others)
    if head_commit(repo.git) is None:
        return None
    return _start(repo, ref, others)


def _renamed_from(git: pygit2.Repository, branch: str) -> str | None:
    """The name `branch` had before a `git branch -m` (its reflog, or HEAD's, says)."""
    for name in (f"refs/heads/{branch}", "HEAD"):
        found = _from_reflog(git, name, "Branch: renamed refs/heads/", f" to refs/heads/{branch}")
        if found is not None:
            return found
    return None


def _from_reflog(git: pygit2.Repository, name: str, prefix: str, suffix: str) -> str | None:
    """What stands between `prefix` and `suffix` in the newest such entry of a reflog."""
    for message, _old, _new in reflog(git, name):
        if message.startswith(prefix) and message.endswith(suffix):
            return message[len(prefix) : -len(suffix)]
    return None


def _follow_rename(repo: Repo, old: str, new: str, tip: str) -> str | None:
    """The ledger of a renamed branch is the branch's: it moves with the name (both ref
    updates compare-and-swap)."""
    with updating(repo):
        made = swap_ref(repo, state_ref(new), tip, None, "rename")
        if made:
            swap_ref(repo, state_ref(old), None, tip, "rename")
    if not made:
        return repo.state_tip(state_ref(new))  # another tm moved it first
    emit(f"branch {old} was renamed {new}: its State Map follows ({state_ref(new)})")
    return tip


def _refuse_clash(ref: str, ledgers: dict[str, str]) -> None:
    """git keeps refs as files: the ledger of a deleted branch `a` stops `a/b` from having
    one (and the other way round)."""
    for name in ledgers:
        other = state_ref(name)
        if ref.startswith(other + "/") or other.startswith(ref + "/"):
            raise UsageError(
                f"{other} (the ledger of branch {name}, which may be gone) leaves no room for"
                f" {ref}; keep it under another name if you want it"
                f" (`git update-ref refs/tinymem-old/{name} {other}`), then"
                f" `git update-ref -d {other}`"
            )


def _start(repo: Repo, ref: str, ledgers: dict[str, str]) -> str | None:
    from tinymem.branches.fromcommit import Taken, taking  # scanning: only when starting

    branch = branch_of_ref(ref) or ""
    head = head_commit(repo.git)
    assert head is not None
    origin = choose_origin(repo, branch, ledgers)
    result = Taken()
    reason = f"as commit {head[:12]} of branch {branch} has it"
    details: dict[str, object] = {}
    if origin is not None:
        details = {"from_branch": origin.branch, "from_commit": origin.commit}
    # What git changed between the origin's code and HEAD; when the origin is checked out in
    # another worktree, its uncommitted work (in its State Map) never reached this one's
    # files, so every file where the State Map and HEAD differ is compared.
    here = origin is not None and not _checked_out_elsewhere(repo, origin.branch)
    operation = taking(
        repo,
        head,
        result,
        before=origin.code if origin is not None and here else None,
        # What the origin's branch committed after its ledger last looked (no tm command
        # ran there since) is in its code but not in its State Map: compared too.
        also=_recorded_head(repo.git, origin.commit) if origin is not None and here else None,
        kind="branch",
        reason=reason,
        source=Source.DISK,
        details=details,
    )
    committed = commit_episode(repo, operation, start=None if origin is None else origin.commit)
    if committed is None and origin is not None:
        _point(repo, ref, origin.commit)  # nothing differs: the origin's State Map is ours
    took = f"; {result.describe()}" if result.taken or result.deleted else ""
    stale = f"; {len(result.left)} differ on disk (STALE)" if result.left else ""
    if origin is None:
        emit(
            f"branch {branch} had no State Map and shares no commit with a branch that has one:"
            f" started one from commit {head[:12]}{took}{stale}"
        )
    else:
        emit(
            f"branch {branch} had no State Map: started from {origin.branch}'s"
            f" (ledger {origin.commit[:12]}){took}{stale}"
        )
    return repo.state_tip(ref)


def _checked_out_elsewhere(repo: Repo, branch: str) -> bool:
    """Whether another worktree of this repository has `branch` checked out."""
    common = repo.common_dir
    heads = [os.path.join(common, "HEAD")]
    linked = os.path.join(common, "worktrees")
    if os.path.isdir(linked):
        heads += [os.path.join(linked, name, "HEAD") for name in os.listdir(linked)]
    mine = os.path.realpath(os.path.join(repo.git.path, "HEAD"))
    for path in heads:
        if os.path.realpath(path) == mine:
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                if f.read().strip() == f"ref: refs/heads/{branch}":
                    return True
        except OSError:
            continue
    return False


def _point(repo: Repo, ref: str, commit: str) -> None:
    """Create `ref` at `commit` unless another process created it first."""
    with updating(repo):
        done = swap_ref(repo, ref, commit, None, "branch start")
    if not done and repo.state_tip(ref) is None:
        raise UsageError(f"git refused to create {ref}; `git update-ref {ref} {commit}` says why")


def choose_origin(repo: Repo, branch: str, ledgers: dict[str, str]) -> Origin | None:
    git = repo.git
    head = head_commit(git)
    if head is None:
        return None
    codes: dict[str, str] = {}
    forks: dict[str, str] = {}
    for name, tip in ledgers.items():
        if name == branch:
            continue
        code = _code_tip(git, name) or _recorded_head(git, tip)
        if code is None:
            continue
        try:
            base = git.merge_base(pygit2.Oid(hex=head), pygit2.Oid(hex=code))
        except (pygit2.GitError, ValueError):
            continue
        if base is not None:
            codes[name], forks[name] = code, str(base)
    if not forks:
        return None
    upstream = _upstream(git, branch)
    if upstream in forks:
        chosen = upstream
    else:
        previous = _previous_branch(git, branch)

        def rank(name: str) -> tuple[bool, bool, str]:
            # On a tie of forks: the branch made exactly at the fork, then the one HEAD came
            # from, then the name (so the choice never depends on ref order).
            return (codes[name] != forks[name], name != previous, name)

        chosen = min(forks, key=rank)
        for name in sorted(forks, key=rank):
            fork, best = forks[name], forks[chosen]
            if fork != best and git.descendant_of(pygit2.Oid(hex=fork), pygit2.Oid(hex=best)):
                chosen = name
    code = codes[chosen]
    tip = ledgers[chosen]
    contains = code == head or git.descendant_of(pygit2.Oid(hex=head), pygit2.Oid(hex=code))
    start = tip if contains else _episode_before(repo, tip, head)
    return Origin(chosen, start, code, forks[chosen])


def _code_tip(git: pygit2.Repository, name: str) -> str | None:
    """The commit of branch `name`: local, else the remote-tracking branch of that name of a
    configured remote (a ledger fetched from a remote whose branch was never checked out)."""
    local = git.references.get(f"refs/heads/{name}")
    if local is not None:
        return str(local.resolve().target)
    for remote in git.remotes:
        found = git.references.get(f"refs/remotes/{remote.name}/{name}")
        if found is not None:
            return str(found.resolve().target)
    return None


def _recorded_head(git: pygit2.Repository, tip: str) -> str | None:
    """The commit HEAD was at when the ledger's newest episode was recorded: how a ledger
    whose branch was deleted or renamed is still related to the code."""
    commit = git[tip]
    assert isinstance(commit, pygit2.Commit)
    at = message_trailer(commit.message, "Tinymem-Head")
    return at if at is not None and at in git else None


def _upstream(git: pygit2.Repository, branch: str) -> str | None:
    try:
        merge = str(git.config[f"branch.{branch}.merge"])
    except (KeyError, pygit2.GitError):
        return None
    return merge[len("refs/heads/") :] if merge.startswith("refs/heads/") else None


def _previous_branch(git: pygit2.Repository, branch: str) -> str | None:
    """The branch HEAD came from when it last moved to `branch` (HEAD's reflog)."""
    return _from_reflog(git, "HEAD", "checkout: moving from ", f" to {branch}")


def _episode_before(repo: Repo, tip: str, head: str) -> str:
    """The newest commit of the ledger at `tip` recorded while HEAD was `head` or one of its
    ancestors; an episode that does not say (written by an older tm) counts as one, and when
    none does, the ledger's first commit (an import both branches share)."""
    git = repo.git
    walker = git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()
    target = pygit2.Oid(hex=head)
    last = tip
    for commit in walker:
        last = str(commit.id)
        at = message_trailer(commit.message, "Tinymem-Head")
        if at is None or at == head:
            return last
        try:
            if at in git and git.descendant_of(target, pygit2.Oid(hex=at)):
                return last
        except (pygit2.GitError, ValueError):
            continue
    return last
