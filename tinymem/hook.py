"""The pre-commit check: refuse commits that would overwrite newer truth with stale content.

Only staged files that the State Map tracks are read (the index's blobs, never the work tree),
so the cost follows the size of the commit, not of the repository. Three refusals:
  1. a staged entity equals an older, SUPERSEDED artifact of that entity (a stale editor
     buffer saved over an accepted change);
  2. a staged entity equals a model proposal that was never accepted and whose base is not the
     current authoritative artifact (model output pasted past the gates);
  3. a staged file equals a model's whole-file output that drops authoritative symbols.
Ordinary hand edits pass: the user is the highest authority.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

import pygit2

from tinymem import gitcmd
from tinymem.errors import RepositoryError, UsageError
from tinymem.gitobjects import blob_id, read_blob
from tinymem.repository import Repo
from tinymem.statemap import FileMeta, StateView

TYPE_CHECKING = False  # not typing's: the hook imports only what a commit needs
if TYPE_CHECKING:
    from tinymem.proposalrecords import Proposal

MARKER = "tinymem-hook"
CHAINED_SUFFIX = ".pre-tinymem"
BACKUP_SUFFIX = ".tinymem-backup"

# hooks/pre-commit in the source tree is this script with no interpreter recorded (a test
# checks for drift); `tm hook install` writes it with the interpreter it runs under.
HOOK_SCRIPT = """#!/bin/sh
# tinymem-hook v3: refuses commits that would overwrite newer truth with stale content.
# Installed by `tm hook install`; `tm hook uninstall` removes it. Bypass once: --no-verify.
hookdir=$(dirname "$0")
# The Python that installed this hook (empty: none recorded): used first, so a virtual
# environment that is not active (a GUI client, an IDE, another shell) still runs the check.
TM_PYTHON=''
# A hook that was here before tinymem's install still runs first.
if [ -x "$hookdir/pre-commit.pre-tinymem" ]; then
  "$hookdir/pre-commit.pre-tinymem" "$@" || exit $?
fi
# One interpreter start runs the check; exit 121 (no tm command gives it) says that this
# Python has no tinymem, and the next way is tried.
check='import sys
try:
    from tinymem.entry import main
except ImportError:
    sys.exit(121)
sys.argv = ["tm", "hook", "run", "pre-commit"]
main()'
if [ -n "$TM_PYTHON" ] && [ -x "$TM_PYTHON" ]; then
  "$TM_PYTHON" -c "$check"
  rc=$?
  [ "$rc" -eq 121 ] || exit "$rc"
fi
if command -v tm >/dev/null 2>&1; then
  exec tm hook run pre-commit
fi
if command -v python3 >/dev/null 2>&1; then
  python3 -c "$check"
  rc=$?
  [ "$rc" -eq 121 ] || exit "$rc"
fi
echo "tinymem: commit refused: the stale-overwrite check cannot run (no tinymem in" \\
  "${TM_PYTHON:-the recorded Python}, no tm on PATH); run 'tm hook install' from the" \\
  "environment that has tm, or commit once with 'git commit --no-verify'" >&2
exit 1
"""
_RECORDED = "TM_PYTHON=''"


def hook_script(python: str | None) -> str:
    """The hook as installed: `python` (an absolute interpreter path) recorded in it."""
    if not python:
        return HOOK_SCRIPT
    return HOOK_SCRIPT.replace(_RECORDED, "TM_PYTHON=" + shlex.quote(python), 1)


def recorded_python(text: str) -> str | None:
    """The interpreter an installed hook records, or None."""
    for line in text.splitlines():
        if line.startswith("TM_PYTHON="):
            value = shlex.split(line[len("TM_PYTHON=") :] or "''")
            return value[0] if value and value[0] else None
    return None


def is_current(text: str) -> bool:
    """Whether `text` is this version's hook (whatever interpreter it records)."""
    return text == hook_script(recorded_python(text))


@dataclass(frozen=True)
class Refusal:
    path: str
    entity: str
    rule: int
    detail: str


@dataclass
class HookReport:
    checked: list[str] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    hand_edits: list[str] = field(default_factory=list)
    # (entity key, commit): an older version HEAD holds because the branch moved back past
    # that commit (git reset, a rebase stopped to amend), not a stale buffer
    moved_back: list[tuple[str, str]] = field(default_factory=list)
    ref: str = ""  # the ledger the commit was judged against


def hooks_dir(repo: Repo) -> str:
    cfg = repo.git.config
    if "core.hooksPath" in cfg:
        path = os.path.expanduser(str(cfg["core.hooksPath"]))
        return path if os.path.isabs(path) else os.path.join(repo.workdir, path)
    return os.path.join(repo.common_dir, "hooks")  # git runs the common dir's hooks


def _is_ours(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return MARKER in f.read(4096)
    except OSError:
        return False


def install(repo: Repo, *, force: bool = False) -> str:
    """Install the hook; an existing foreign hook is chained (or, with force, backed up)."""
    directory = hooks_dir(repo)
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(directory, "pre-commit")
    notes = []
    if os.path.lexists(target) and not _is_ours(target):
        if force:
            shutil.move(target, target + BACKUP_SUFFIX)
            notes.append(f"the previous hook was moved to {target + BACKUP_SUFFIX}")
        else:
            chained = target + CHAINED_SUFFIX
            if os.path.lexists(chained):
                raise UsageError(
                    f"{chained} already exists; remove it or use --force to replace the hook"
                )
            shutil.move(target, chained)
            notes.append(f"the existing hook now runs first, from {chained}")
    tmp = target + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(hook_script(os.path.abspath(sys.executable)))
    os.chmod(tmp, 0o755)
    os.replace(tmp, target)
    return "; ".join([f"installed {target}", *notes])


def uninstall(repo: Repo) -> str:
    directory = hooks_dir(repo)
    target = os.path.join(directory, "pre-commit")
    if not os.path.lexists(target) or not _is_ours(target):
        raise UsageError(f"no tinymem hook is installed at {target}")
    os.unlink(target)
    chained = target + CHAINED_SUFFIX
    if os.path.lexists(chained):
        shutil.move(chained, target)
        return f"removed the tinymem hook; restored the previous hook at {target}"
    return f"removed {target}"


def installed(repo: Repo) -> str:
    """'current', 'outdated' or 'missing'."""
    target = os.path.join(hooks_dir(repo), "pre-commit")
    if not _is_ours(target):
        return "missing"
    with open(target, encoding="utf-8") as f:
        return "current" if is_current(f.read()) else "outdated"


_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def staged(repo: Repo) -> list[tuple[str, str]]:
    """(path, blob id) of what this commit would record that differs from HEAD.

    Asked of git itself: during `git commit -a` or `git commit -- PATH` git hands hooks a
    temporary index through GIT_INDEX_FILE, which only git's own commands honour. Its cost
    follows the size of the commit, not of the repository.
    """
    # HEAD from the repository already open, not a `git rev-parse` process: one git process
    # per commit, the one that honours GIT_INDEX_FILE.
    try:
        has_head = not repo.git.head_is_unborn
    except pygit2.GitError:
        has_head = False
    # Not `git_output`: its None cannot say why git failed, and the refusal should. Its
    # bound, though: a commit git is waiting on must not wait on us for ever.
    try:
        proc = subprocess.run(
            [
                "git",
                "diff-index",
                "--cached",
                "--raw",
                "-z",
                "--no-renames",
                "HEAD" if has_head else _EMPTY_TREE,
            ],
            cwd=repo.workdir,
            capture_output=True,
            timeout=gitcmd.TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RepositoryError(
            f"git diff-index did not finish within {gitcmd.TIMEOUT:g} s, so what is staged"
            " could not be checked"
        ) from None
    if proc.returncode != 0:
        raise RepositoryError(
            "git diff-index failed: " + proc.stderr.decode("utf-8", "replace").strip()
        )
    out: list[tuple[str, str]] = []
    fields = proc.stdout.split(b"\0")
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        parts = meta[1:].split()
        new_mode, new_id, status = parts[1], parts[3].decode(), parts[4][:1]
        if status == b"D" or new_mode in (b"160000", b"120000"):
            continue  # deleted, submodule or symlink: nothing tm could overwrite
        out.append((path.decode("utf-8", "surrogateescape"), new_id))
    return out


def _proposals_for(view: StateView, path: str) -> list[Proposal]:
    ids = view.proposal_ids()
    if not ids:
        return []
    from tinymem.proposalrecords import Proposal

    out = []
    for pid in ids:
        data = view.proposal_blob(pid)
        if data is None:
            continue
        p = Proposal.from_bytes(data)
        if p.path == path:
            out.append(p)
    return out


# Older texts looked for in a staged file before it is parsed; past this many, it is parsed.
_MAX_LOOKED_FOR = 256


def _could_refuse(
    git: pygit2.Repository, meta: FileMeta, props: list[Proposal], data: bytes, oid: str
) -> bool:
    """Whether a refusal could name the staged `data` of this file: each one needs a staged
    entity whose text IS an older artifact of that entity or a proposal's artifact (or the
    whole file a proposal's block), so when none of those texts occurs in `data`, no entity
    of it can match one. Looking for a few texts costs far less than parsing the file (a
    200 KB module: ~0.1 s of tree-sitter); anything unreadable says "parse"."""
    if any(p.block == oid for p in props):
        return True
    wanted = {art for rec in meta.entities.values() for art in rec.superseded}
    wanted.update(e.artifact for p in props for e in p.entities if e.artifact is not None)
    if len(wanted) > _MAX_LOOKED_FOR:
        return True
    for art in wanted:
        try:
            text = read_blob(git, art)
        except (KeyError, ValueError):
            return True
        if text in data:
            return True
    return False


def check(repo: Repo) -> HookReport:
    from tinymem.branches.refs import current_branch
    from tinymem.sync import bring_up_to_head

    report = HookReport()
    # The branch's own State Map, up to HEAD (a branch's first commit starts it; what git
    # committed before this commit is recorded), so a version another branch superseded, or
    # one git committed since, is never mistaken for a stale buffer here. HEAD has not moved
    # for this commit yet: what is staged is judged, never taken.
    try:
        tip = bring_up_to_head(repo)
    except UsageError as exc:
        # The branch cannot have a State Map until the user moves a ref (tm says which):
        # there is nothing tm accepted on it to protect, so the commit goes on.
        from tinymem.notices import emit

        emit(str(exc))
        return report
    branch = current_branch(repo.git)
    if branch is None:
        return report  # a detached HEAD has no State Map: nothing tm accepted to protect
    if tip is None:
        return report  # tm is not initialized here: nothing to protect
    view = StateView(repo.git, tip)
    report.ref = repo.state_ref
    for path, oid in staged(repo):
        meta = view.meta(path)
        if meta is None or meta.deleted:
            continue
        report.checked.append(path)
        if oid == meta.snapshot:
            continue
        props = _proposals_for(view, path)
        if not props and not any(rec.superseded for rec in meta.entities.values()):
            # Each refusal names an older artifact of one of the file's entities or a
            # proposal for the file: with neither, the staged text is a hand edit, whatever
            # it holds (not parsed: a commit of files tm never changed loads no grammar).
            report.hand_edits.append(path)
            continue
        data = read_blob(repo.git, oid)
        if not _could_refuse(repo.git, meta, props, data, oid):
            report.hand_edits.append(path)
            continue
        from tinymem.symbols import extract

        texts = {s.name: blob_id(data[s.start : s.end]) for s in extract(path, data).symbols}
        found = False
        for name, art in texts.items():
            rec = meta.entities.get(name)
            if rec is None or art == rec.artifact:
                continue
            key = meta.key(name)
            if art in rec.superseded:
                from tinymem.branches.movedback import moved_back_from

                newer = {*rec.superseded[rec.superseded.index(art) + 1 :], rec.artifact}
                moved = moved_back_from(repo.git, branch, path, name, art, newer)
                if moved is not None:
                    report.moved_back.append((key, moved))
                    continue
                report.refusals.append(
                    Refusal(
                        path,
                        key,
                        1,
                        f"the staged {key} is an older version that episode {rec.episode}"
                        " superseded (a stale editor buffer?)",
                    )
                )
                found = True
                continue
            for p in props:
                for e in p.entities:
                    if e.symbol == name and e.artifact == art and e.base != rec.artifact:
                        report.refusals.append(
                            Refusal(
                                path,
                                key,
                                2,
                                f"the staged {key} is model output from proposal {p.id} (episode"
                                f" {p.episode}) written against an older version, never accepted",
                            )
                        )
                        found = True
        live_top = {r.symbol for r in meta.live_entities() if "." not in r.symbol}
        for p in props:
            if p.block == oid and not live_top <= set(texts):
                lost = ", ".join(sorted(live_top - set(texts))[:5])
                report.refusals.append(
                    Refusal(
                        path,
                        path,
                        3,
                        f"the staged {path} is the whole-file output of proposal {p.id} and drops"
                        f" authoritative symbols: {lost}",
                    )
                )
                found = True
        if not found:
            report.hand_edits.append(path)
    return report


def render_refusal(report: HookReport) -> str:
    lines = ["tinymem: commit refused: it would overwrite newer truth with stale content."]
    for r in report.refusals:
        lines.append(f"  {r.path}: {r.detail}")
    paths = sorted({r.path for r in report.refusals})
    lines.append("Two ways forward:")
    lines.append(
        "  - the staged content is what you want: tm adopt "
        + " ".join(paths)
        + " && git add "
        + " ".join(paths)
    )
    lines.append(
        "  - otherwise restore the accepted version: "
        + "; ".join(f"git show {report.ref}:files/{p} > {p}" for p in paths)
        + "; then git add the files"
    )
    lines.append("To commit anyway, once: git commit --no-verify")
    return "\n".join(lines)
