"""The ledger ref of the current branch (and the other refs under refs/tinymem/), and the
State Map layout of its tip commit."""

from __future__ import annotations

import pygit2

from tinymem.branches.refs import LEGACY_REF, current_branch, ledger_refs, state_ref
from tinymem.doctor.report import FAIL, OK, WARN, DoctorReport
from tinymem.errors import TinymemError
from tinymem.gitobjects import MODE_TREE, read_tree
from tinymem.ledger import EPISODE_FILE, Episode
from tinymem.repository import Repo
from tinymem.statemap import ENTITIES, EPISODE, FILES, META, NOTES, PROPOSALS, StateView

LAYOUT = (FILES, ENTITIES, META, PROPOSALS, NOTES, EPISODE)


def ref_fix(ref: str = "refs/tinymem/heads/BRANCH") -> str:
    return (
        f"point it back at the last good ledger commit (`git update-ref {ref} COMMIT`; a clone"
        " has it under the same name), or fetch it from a remote with"
        " `git fetch REMOTE 'refs/tinymem/*:refs/tinymem/*'`"
    )


def check_refs(repo: Repo, report: DoctorReport) -> str | None:
    """Validate every ref under refs/tinymem/; the current branch's ledger tip when it is
    sound (read only: a branch without a State Map is not started here)."""
    git = repo.git
    tip: str | None = None
    branch = current_branch(git)
    name = LEGACY_REF
    if branch is None:
        report.add(
            "state ref",
            WARN,
            "HEAD is detached: tm keeps one State Map per branch, so none is checked",
            "switch to a branch (`git switch NAME`) and run tm doctor there",
        )
    else:
        name = state_ref(branch)
        try:
            ref = git.references.get(name)
            if ref is None and not ledger_refs(git):
                legacy = git.references.get(LEGACY_REF)  # an older tm's single State Map
                if legacy is not None:
                    name, ref = LEGACY_REF, legacy
        except pygit2.GitError as exc:
            report.add("state ref", FAIL, f"{name} is unreadable: {exc}", ref_fix(name))
        else:
            if ref is None and ledger_refs(git):
                report.add(
                    "state ref",
                    WARN,
                    f"branch {branch} has no State Map yet; the next tm command starts it from"
                    " the branch it was made from",
                    "tm status",
                )
            elif ref is None:
                report.add(
                    "state ref",
                    FAIL,
                    "tm is not initialized here: no branch has a State Map",
                    "tm init",
                )
            else:
                problem = _ref_problem(git, ref)
                if problem is not None:
                    report.add("state ref", FAIL, f"{name} {problem}", ref_fix(name))
                else:
                    tip = str(ref.target)
                    moved = " (moved to this branch by the next tm command)"
                    report.add(
                        "state ref",
                        OK,
                        f"{name} -> ledger commit {tip[:12]}"
                        + (moved if name == LEGACY_REF else ""),
                    )
    try:
        others = [n for n in git.references if n.startswith("refs/tinymem/") and n != name]
    except pygit2.GitError as exc:
        others = []
        report.add("refs", FAIL, f"the refs under refs/tinymem/ cannot be listed: {exc}", ref_fix())
    for other_name in sorted(others):
        if not pygit2.reference_is_valid_name(other_name):
            report.add(
                "refs",
                FAIL,
                f"{other_name} is not a valid ref name",
                f"git update-ref -d {other_name}",
            )
            continue
        try:
            other = git.references.get(other_name)
        except pygit2.GitError as exc:
            report.add(
                "refs",
                FAIL,
                f"{other_name} is unreadable: {exc}",
                f"git update-ref -d {other_name}",
            )
            continue
        ledger = other_name.startswith("refs/tinymem/heads/") or other_name == LEGACY_REF
        problem = None if other is None else _ref_problem(git, other, need_commit=ledger)
        if problem is not None:
            report.add("refs", FAIL, f"{other_name} {problem}", f"git update-ref -d {other_name}")
    return tip


def _ref_problem(
    git: pygit2.Repository, ref: pygit2.Reference, need_commit: bool = True
) -> str | None:
    if ref.type == pygit2.enums.ReferenceType.SYMBOLIC:
        return f"is a symbolic ref (to {ref.target}), not a commit id"
    oid = str(ref.target)
    obj = git.get(oid)
    if obj is None:
        return f"points at {oid[:12]}, which is missing from the object database"
    if need_commit and not isinstance(obj, pygit2.Commit):
        return f"points at a {obj.type_str} ({oid[:12]}), not a ledger commit"
    return None


def check_layout(repo: Repo, tip: str, report: DoctorReport) -> StateView | None:
    """The tip's tree has the State Map layout and its own episode record."""
    try:
        view = StateView(repo.git, tip)
        assert view.tree_id is not None
        tree = read_tree(repo.git, view.tree_id)
    except (TinymemError, KeyError, pygit2.GitError) as exc:
        report.add("layout", FAIL, f"the ledger commit {tip[:12]} is unreadable: {exc}", ref_fix())
        return None
    problems: list[str] = []
    for entry in tree:
        name = entry.name or ""
        if name not in LAYOUT:
            problems.append(f"unexpected entry {name!r} at the top of the tree")
        elif entry.filemode != MODE_TREE:
            problems.append(f"{name} is not a directory")
    record = None
    try:
        record = view.episode_blob(EPISODE_FILE)
    except (KeyError, pygit2.GitError) as exc:
        problems.append(f"{EPISODE}/{EPISODE_FILE} is unreadable: {exc}")
    else:
        if record is None:
            problems.append(f"{EPISODE}/{EPISODE_FILE} is missing")
        else:
            try:
                Episode.from_bytes(record)
            except TinymemError as exc:
                problems.append(f"{EPISODE}/{EPISODE_FILE}: {exc}")
    if problems:
        report.add(
            "layout",
            FAIL,
            f"the ledger commit {tip[:12]} is not a State Map: {problems[0]}",
            ref_fix(),
            problems,
        )
        return None
    report.add("layout", OK, f"{tip[:12]} has the State Map layout and its episode record")
    return view
