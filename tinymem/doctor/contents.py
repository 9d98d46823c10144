"""What the State Map holds: every object it names is present, replaying the ledger gives
it back, and the work tree matches it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pygit2

from tinymem.doctor.ledger import ref_fix
from tinymem.doctor.report import FAIL, OK, WARN, DoctorReport
from tinymem.errors import TinymemError
from tinymem.gitobjects import read_blob, walk_blobs
from tinymem.records import entity_key
from tinymem.repository import Repo
from tinymem.statemap import (
    ENTITIES,
    FILES,
    META,
    PROPOSAL_RECORD,
    PROPOSALS,
    FileMeta,
    StateView,
    unescape_symbol,
)


def _walk(
    repo: Repo, view: StateView, top: str, missing: dict[str, str]
) -> Iterator[tuple[str, str]]:
    sub = view.subtree(top)
    if sub is None:
        return
    try:
        yield from walk_blobs(repo.git, sub)
    except KeyError:
        # A tree below it is gone: walk_blobs cannot say which, the subtree id is enough.
        missing.setdefault(sub, f"a tree below {top}/")


def check_artifacts(repo: Repo, view: StateView, report: DoctorReport) -> bool:
    """Every object the State Map names exists; files/ and meta/ agree. True when complete."""
    odb = repo.git.odb
    missing: dict[str, str] = {}  # object id -> the first place that names it
    unreadable: list[str] = []
    disagree: list[str] = []
    named = 0

    def need(oid: str | None, where: str) -> None:
        nonlocal named
        if not oid:
            return
        named += 1
        if oid not in missing and oid not in odb:
            missing[oid] = where

    files = dict(_walk(repo, view, FILES, missing))
    for path, oid in files.items():
        need(oid, f"{FILES}/{path}")
    for path, oid in _walk(repo, view, ENTITIES, missing):
        file_path, _, name = path.rpartition("/")
        need(oid, f"{entity_key(file_path, unescape_symbol(name))} in {ENTITIES}/")
    metas: dict[str, FileMeta] = {}
    recorded: set[str] = set()  # paths with a meta/ entry, readable or not
    for path, oid in _walk(repo, view, META, missing):
        recorded.add(path)
        need(oid, f"{META}/{path}")
        if oid in missing:
            continue
        try:
            meta = FileMeta.from_bytes(read_blob(repo.git, oid))
        except (TinymemError, KeyError, pygit2.GitError) as exc:
            unreadable.append(f"{META}/{path}: {exc}")
            continue
        metas[path] = meta
        need(meta.snapshot, f"{path} snapshot")
        for rec in meta.entities.values():
            key = entity_key(path, rec.symbol)
            need(rec.artifact, f"{key} artifact")
            need(rec.base, f"{key} base")
            for old in rec.superseded:
                need(old, f"{key} superseded artifact")
        live = files.get(path)
        if not meta.deleted and live != meta.snapshot:
            disagree.append(
                f"{path}: meta/ records snapshot {meta.snapshot[:12]},"
                f" files/ holds {(live or 'nothing')[:12]}"
            )
        elif meta.deleted and live is not None:
            disagree.append(f"{path}: meta/ records a deletion, files/ still holds it")
    for path in sorted(set(files) - recorded):
        disagree.append(f"{path}: in files/ without a meta/ record")
    unpinned: list[str] = []
    for pid, oid in _walk(repo, view, PROPOSALS, missing):
        pid, _, name = pid.partition("/")
        if name and name != PROPOSAL_RECORD:
            need(oid, f"{PROPOSALS}/{pid}")
            continue  # a blob the record names, pinned under its own id
        if not name:
            unpinned.append(pid)
        need(oid, f"{PROPOSALS}/{pid}")
        if oid in missing:
            continue
        try:
            raw = json.loads(read_blob(repo.git, oid))
            need(raw.get("block"), f"proposal {pid} block")
            need(raw.get("file_base"), f"proposal {pid} file base")
            need(raw.get("edit"), f"proposal {pid} edit")
            for e in raw.get("entities") or []:
                need(e.get("artifact"), f"proposal {pid} {e.get('symbol')} artifact")
                need(e.get("base"), f"proposal {pid} {e.get('symbol')} base")
        except (ValueError, AttributeError, TypeError, KeyError) as exc:
            unreadable.append(f"{PROPOSALS}/{pid}: {exc}")
    if missing:
        report.add(
            "artifacts",
            FAIL,
            f"{len(missing)} object(s) the State Map names are missing from the vault",
            "restore them from another clone (`git fetch REMOTE 'refs/tinymem/*:refs/tinymem/*'`"
            " into a copy, then `git cat-file` them over), or point the branch's ledger ref back at"
            " the last good ledger commit",
            [f"{where}: {oid[:12]}" for oid, where in missing.items()],
        )
    if unreadable:
        report.add(
            "records",
            FAIL,
            f"{len(unreadable)} State Map record(s) are unreadable",
            "point the branch's ledger ref back at the last good ledger commit",
            unreadable,
        )
    if disagree:
        report.add(
            "records",
            FAIL,
            f"files/ and meta/ disagree on {len(disagree)} file(s)",
            "point the branch's ledger ref back at the last commit where `tm doctor` is clean",
            disagree,
        )
    if unpinned:
        report.add(
            "proposals",
            WARN,
            f"{len(unpinned)} proposal(s) were stored before tm kept their blobs reachable:"
            " `git gc` may prune their code",
            "accept or reject them soon (`tm accept ID` / `tm reject ID`), or ask again",
            [f"{PROPOSALS}/{pid}" for pid in unpinned],
        )
    if not (missing or unreadable or disagree):
        report.add(
            "artifacts",
            OK,
            f"every object named by {len(metas)} file record(s) and"
            f" {len(view.proposal_ids())} proposal(s) exists ({named} references)",
        )
    return not (missing or unreadable)


def check_rebuild(repo: Repo, view: StateView, report: DoctorReport) -> None:
    from tinymem.rebuild import rebuild

    try:
        result = rebuild(repo, view.commit_id)
    except (TinymemError, KeyError, pygit2.GitError) as exc:
        report.add("rebuild", FAIL, f"the ledger cannot be replayed: {exc}", ref_fix())
        return
    if result.ok:
        report.add(
            "rebuild", OK, f"replaying {result.episodes} episode(s) reproduces the State Map"
        )
        return
    report.add(
        "rebuild",
        FAIL,
        f"the State Map differs from a replay of the ledger ({len(result.differences)}"
        " difference(s))",
        "`tm rebuild` lists them. A path git turned from a file into a directory, or the"
        " reverse, in an episode recorded by a tm without the fix of issue #29 is a known"
        " cause (a defect of tm's): then leave the ref where it is."
        " Otherwise, pointing the branch's ledger ref back at the last ledger commit where"
        " `tm rebuild` agrees drops every episode after it from the branch's history: do it"
        " only for a State Map you know is damaged",
        result.differences[:20],
    )


def check_etv(repo: Repo, view: StateView, report: DoctorReport) -> None:
    from tinymem.etv import verify

    try:
        etv = verify(repo, view)
    except (TinymemError, OSError, pygit2.GitError) as exc:
        report.add("work tree", FAIL, f"the work tree cannot be verified: {exc}")
        return
    stale = etv.stale_keys()
    report.stale_entities = len(stale)
    report.unreadable = [
        d.path for d in etv.drift if d.why.startswith("unreadable") or d.why == "not a regular file"
    ]
    if report.unreadable:
        report.add(
            "unreadable",
            FAIL,
            f"{len(report.unreadable)} tracked file(s) cannot be read (counted as STALE)",
            "fix their permissions (chmod u+r PATH), or `tm adopt PATH` once the file is as"
            " you want it",
            [f"{d.path}: {d.why}" for d in etv.drift if d.path in report.unreadable],
        )
    if stale:
        report.add(
            "work tree",
            WARN,
            f"{len(stale)} STALE entit{'y' if len(stale) == 1 else 'ies'} in {len(etv.drift)}"
            f" file(s) of {etv.checked}: they are not shown to the model and block its proposals",
            "`tm status` lists them; `tm adopt PATH` makes your edits the truth",
        )
    elif etv.drift:
        report.add(
            "work tree",
            WARN,
            f"{len(etv.drift)} file(s) of {etv.checked} differ from the State Map outside any"
            " entity (nothing STALE)",
            "`tm status` lists them; `tm adopt PATH` records the edits",
        )
    else:
        report.add("work tree", OK, f"{etv.checked} files match the State Map (nothing STALE)")
