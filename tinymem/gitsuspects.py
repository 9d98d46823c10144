"""The first pass of ETV done by git itself: which files could differ from their snapshot.

git compares the work tree with a tree in C with parallel lstat (core.preloadIndex) and
handles racily clean entries by content; a Python loop over 50,000 files cannot match that.
`git diff-index <files tree>` (no `--cached`) lists every path whose work-tree text may differ
from the State Map's snapshot: entries whose index blob differs from the snapshot, and entries
whose stat data no longer matches the index (git does not hash those; they are only suspects).
Everything else is fresh. Nothing is written: `--no-optional-locks` keeps git from refreshing
the user's index.

git skips entries marked assume-unchanged or skip-worktree, so then (and whenever git fails)
the answer is None and ETV falls back to its own stat cache: fail safe, only slower.

This module imports neither pygit2 nor anything heavy, so `tm status` can start git's
comparison first (`start`) and let it run on the other core while Python loads the rest.
"""

from __future__ import annotations

import os
import re
import threading

from tinymem.branches.names import state_ref
from tinymem.gitcmd import git_output, repo_git_output

# `ls-files -v` tags assume-unchanged entries in lower case and skip-worktree with "S".
# (A literal NUL to anchor on keeps the scan in C at ~1 ms for 50,000 entries; `\A|` did not.)
_HIDDEN_ENTRY = re.compile(rb"\x00[a-zS] ")


class _GitRun(threading.Thread):
    """One git command on its own thread (subprocess releases the GIL while git runs).
    Plain threads, not concurrent.futures: that module imports logging, ~7 ms per run."""

    def __init__(self, git_dir: str, workdir: str, *args: str) -> None:
        super().__init__(daemon=True)  # an unused probe never delays exit
        self.where, self.args = (git_dir, workdir), args
        self.out: bytes | None = None
        self.start()

    def run(self) -> None:
        # One core for git, the other for Python's imports: no preload threads.
        self.out = repo_git_output(*self.where, "-c", "core.preloadIndex=false", *self.args)

    def result(self) -> bytes | None:
        self.join()
        return self.out


class Probe:
    """git's comparison of the work tree with a files/ tree, running in the background.

    git is told the repository and work tree explicitly: GIT_DIR or GIT_WORK_TREE in the
    environment must not make it compare another directory than the one tm verifies.
    """

    def __init__(self, git_dir: str, workdir: str, tree: str, commit: str | None = None) -> None:
        self.git_dir = git_dir
        self.workdir = workdir
        self.commit = commit  # the ledger commit whose files/ tree is compared, if known
        self.tracked_gitattributes: bool | None = None  # known once `result` has run
        self._flags = _GitRun(git_dir, workdir, "ls-files", "-v", "-z")
        self._diff = _GitRun(
            git_dir, workdir, "diff-index", "--no-renames", "--name-only", "-z", tree
        )

    def serves(self, git_dir: str, workdir: str) -> bool:
        """Whether this probe reads that repository and work tree."""
        try:
            return os.path.samefile(git_dir, self.git_dir) and os.path.samefile(
                workdir, self.workdir
            )
        except OSError:
            return False

    def compares(self, git_dir: str, workdir: str, commit: str | None) -> bool:
        """Whether this probe is git's comparison for that repository, work tree and ledger
        commit."""
        return commit is not None and commit == self.commit and self.serves(git_dir, workdir)

    def result(self) -> set[str] | None:
        """Paths that may differ from their snapshot, or None when git cannot tell us."""
        tags, changed = self._flags.result(), self._diff.result()
        if tags is not None:
            # The index listing is at hand: it also tells whether git may filter file text.
            self.tracked_gitattributes = _lists_gitattributes(tags)
        if tags is None or changed is None or _HIDDEN_ENTRY.search(b"\0" + tags):
            return None
        return {p.decode("utf-8", "surrogateescape") for p in changed.split(b"\0") if p}


def start(cwd: str) -> Probe | None:
    """Find the repository, its work tree, its branch and that branch's ledger tip with one
    quick git call and two file reads, and start the comparison with that tip's files/ tree;
    None when that cannot be done that way (not a work tree, HEAD detached, the branch without
    a State Map yet, a ref store that is not files): the full path decides then.

    The caller must check `serves` against the repository it opened, and read the State Map
    at `probe.commit`, not at the ref: the ref may move.
    """
    out = git_output(
        cwd,
        "rev-parse",
        "--path-format=absolute",
        "--git-dir",
        "--git-common-dir",
        "--show-toplevel",
    )
    if out is None:
        return None
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) != 3:
        return None
    git_dir, common, workdir = (os.path.normpath(line) for line in lines)
    # HEAD read as the file it is (an unborn branch has no commit for rev-parse to name).
    head = _read_text(os.path.join(git_dir, "HEAD"))
    if head is None or not head.startswith("ref: refs/heads/"):
        return None
    commit = _read_ref(common, state_ref(head[len("ref: refs/heads/") :]))
    if commit is None:
        return None
    return Probe(git_dir, workdir, f"{commit}:files", commit)


_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _is_oid(text: str) -> bool:
    return _OID.fullmatch(text) is not None


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode("utf-8", "surrogateescape").strip()
    except OSError:
        return None


def _read_ref(common: str, ref: str) -> str | None:
    """A ref's object id as git's files backend stores it: the loose file, else its line in
    packed-refs. Anything odd (garbage, a symbolic ref) is None: the full path reports it."""
    loose = _read_text(os.path.join(common, *ref.split("/")))
    if loose is not None:
        return loose if _is_oid(loose) else None
    try:
        with open(os.path.join(common, "packed-refs"), "rb") as f:
            packed = f.read()
    except OSError:
        return None
    at = packed.find(b" " + ref.encode() + b"\n")
    if at < 0:
        return None
    start = packed.rfind(b"\n", 0, at) + 1
    oid = packed[start:at].decode("ascii", "replace")
    return oid if _is_oid(oid) else None


def _lists_gitattributes(tags: bytes) -> bool:
    """Whether `ls-files -v -z` output has an entry named .gitattributes in any directory.

    A file named "x .gitattributes" counts too: that only costs filtered hashing, never a wrong
    answer. (bytes.find, not a regex: a pattern starting with a class scans in Python-speed
    steps, ~10 ms on 50,000 entries.)
    """
    name = b".gitattributes\0"
    at = tags.find(name)
    while at >= 0:
        if at > 0 and tags[at - 1 : at] in (b" ", b"/"):
            return True
        at = tags.find(name, at + 1)
    return False


def skip_worktree(git_dir: str, workdir: str, paths: list[str]) -> set[str]:
    """Those of `paths` git's index marks skip-worktree: left out of the work tree on purpose
    (sparse checkout), so absent from the disk without being deleted. Empty when git cannot
    tell (a missing file is then what it looks like)."""
    if not paths:
        return set()
    out = repo_git_output(
        git_dir, workdir, "--literal-pathspecs", "ls-files", "-v", "-z", "--", *paths
    )
    if out is None:
        return set()
    return {
        entry[2:].decode("utf-8", "surrogateescape")
        for entry in out.split(b"\0")
        if entry.startswith(b"S ")
    }
