"""Opening the user's repository and the places tm may write in it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property

import pygit2

from tinymem.branches.refs import require_branch, state_ref
from tinymem.errors import CorruptStateError, RepositoryError, UnsafePathError
from tinymem.gitcmd import repo_git_output

CACHE_DIRNAME = "tinymem"  # inside the git dir: derived caches only, always safe to delete
UNRECORDED = "unrecorded"  # in CACHE_DIRNAME: model replies the ledger could not take (tm ask)
INTENT_FILE = "accept-intent.json"  # in CACHE_DIRNAME: an accept in progress (writing/journal.py)


@dataclass
class Repo:
    git: pygit2.Repository
    workdir: str  # absolute, with no trailing separator
    # Whether a .gitattributes file is tracked, when a caller already learnt it from git's
    # index listing (`gitsuspects.Probe`); None: `filters_possible` asks git itself.
    tracked_gitattributes: bool | None = None

    @cached_property
    def cache_dir(self) -> str:
        """`.git/tinymem/`: created on first use; holds nothing that cannot be rebuilt."""
        path = os.path.join(self.git.path, CACHE_DIRNAME)
        os.makedirs(path, exist_ok=True)
        return path

    @cached_property
    def filters_possible(self) -> bool:
        """Whether git could transform a file on its way into a blob (CRLF, attributes).

        When it cannot, a file's raw bytes are its blob and hashing them here is enough;
        otherwise libgit2 must apply the filters (`worktree._stored`).
        """
        cfg = self.git.config
        for name in ("core.autocrlf", "core.attributesFile"):
            if name in cfg and str(cfg[name]).lower() not in ("false", "0", "no", "off", ""):
                return True
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        if os.path.exists(os.path.join(xdg, "git", "attributes")):
            return True
        if os.path.exists(os.path.join(self.common_dir, "info", "attributes")):
            return True
        if os.path.exists(os.path.join(self.workdir, ".gitattributes")):
            return True
        if self.tracked_gitattributes is not None:
            return self.tracked_gitattributes
        # Tracked .gitattributes anywhere: git answers from its index in C (a Python walk of
        # a 50,000-entry index costs ~0.4 s).
        found = repo_git_output(
            self.git.path, self.workdir, "ls-files", "-z", "--", "*.gitattributes"
        )
        # None: cannot tell, so let libgit2 apply whatever filters there are.
        return found is None or bool(found)

    def abspath(self, rel: str) -> str:
        return os.path.join(self.workdir, rel)

    def rel(self, user_path: str, cwd: str | None = None) -> str:
        """A path the user typed (relative to `cwd`, or absolute) as a repository path."""
        from tinymem.paths import repo_relative

        full = os.path.normpath(os.path.join(cwd or os.getcwd(), user_path))
        rel = os.path.relpath(full, self.workdir)
        if rel == os.curdir:
            return ""
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            raise UnsafePathError(f"{user_path} is outside the repository at {self.workdir}")
        return repo_relative(self.workdir, rel.replace(os.sep, "/"))

    def signature(self) -> pygit2.Signature:
        try:
            return self.git.default_signature
        except (KeyError, pygit2.GitError):
            # No user.name/user.email configured: the ledger still needs an author.
            return pygit2.Signature("tinymem", "tinymem@localhost")

    @property
    def branch(self) -> str:
        """The branch this worktree is on, read from HEAD each time (a long-lived `tm serve`
        follows `git switch`); NoBranchError when HEAD is detached."""
        return require_branch(self.git)

    @property
    def state_ref(self) -> str:
        """The ledger ref of the current branch: `refs/tinymem/heads/<branch>`."""
        return state_ref(self.branch)

    def state_tip(self, ref: str | None = None) -> str | None:
        """The ledger tip of `ref` (default: the current branch's); None when it has none."""
        ref = ref or self.state_ref
        try:
            found = self.git.references.get(ref)
        except (pygit2.GitError, ValueError) as exc:
            raise CorruptStateError(
                f"{ref} is unreadable ({exc}); `tm doctor` explains, and"
                f" `git update-ref {ref} <ledger commit>` repairs it"
            ) from exc
        if found is None:
            return None
        return str(found.target)

    @cached_property
    def common_dir(self) -> str:
        return common_git_dir(self.git)


def common_git_dir(git: pygit2.Repository) -> str:
    """The git dir shared by all linked worktrees: objects, config and hooks live there."""
    marker = os.path.join(git.path, "commondir")
    if os.path.exists(marker):
        with open(marker, encoding="utf-8") as f:
            return os.path.normpath(os.path.join(git.path, f.read().strip()))
    return os.path.normpath(git.path)


def open_repo(start: str | None = None) -> Repo:
    """The repository containing `start` (default: the current directory), as it is: a
    command opens it through `sync.open_synced`, which brings the State Map up to HEAD."""
    where = os.path.abspath(start or os.getcwd())
    try:
        # Opened from where the search starts, not from the git dir it finds: a `.git` gitfile
        # (`--separate-git-dir`) or symlink leads to a git dir elsewhere, and a git dir opened
        # by itself takes its parent for the work tree. libgit2 keeps the directory that held
        # the `.git` entry as the work tree, as git does.
        git = pygit2.Repository(where)
    except pygit2.GitError as exc:
        if _discover(where) is None:
            raise RepositoryError(
                f"{where} is not inside a git work tree; run tm inside a repository"
            ) from exc
        if "object format" in str(exc):
            raise RepositoryError(
                f"{where} is a repository with SHA-256 object ids, which libgit2 (and so tm)"
                " cannot read yet; tm works in SHA-1 repositories"
            ) from exc
        raise RepositoryError(f"cannot open the git repository at {where}: {exc}") from exc
    found = git.path.rstrip(os.sep)
    if git.is_bare or git.workdir is None:
        raise RepositoryError(
            f"{found} is a bare repository; tm needs a work tree to compare against"
        )
    workdir = os.path.abspath(git.workdir).rstrip(os.sep)
    if not _leads_back(git, workdir):
        # Started inside a git dir kept apart from its work tree: the parent libgit2 guessed
        # is not the work tree, and writing there would write outside it.
        raise RepositoryError(
            f"{found} is a git directory whose work tree is elsewhere; run tm in the work tree"
        )
    repo = Repo(git=git, workdir=workdir)
    return repo


def _leads_back(git: pygit2.Repository, workdir: str) -> bool:
    """Whether `workdir` is truly the work tree of `git`: its `.git` (a directory, a symlink
    or a `gitdir:` file) is that git dir, or the git dir names its work tree itself
    (`core.worktree`, as a submodule's does)."""
    if "core.worktree" in git.config:
        return True
    dotgit = os.path.join(workdir, ".git")
    if os.path.isfile(dotgit):
        try:
            with open(dotgit, encoding="utf-8", errors="surrogateescape") as f:
                line = f.readline().strip()
        except OSError:
            return False
        if not line.startswith("gitdir:"):
            return False
        dotgit = os.path.join(workdir, line[len("gitdir:") :].strip())
    try:
        return os.path.samefile(dotgit, git.path)
    except OSError:
        return False


def _discover(where: str) -> str | None:
    """The git dir a search from `where` finds, or None (only to word an error)."""
    try:
        return pygit2.discover_repository(where)
    except pygit2.GitError:
        return None
