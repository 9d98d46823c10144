"""`tm blame FILE`: which episode introduced each line of the work-tree file.

Built on git's own blame: every ledger commit's tree holds `files/<path>`, the authoritative
snapshot, so libgit2's blame of that path along the branch's ledger ref attributes each snapshot
line to the ledger commit (episode) that introduced it. The work-tree file may differ from the
snapshot (hand edits not yet adopted); its lines are mapped onto the snapshot's with difflib,
and lines without a counterpart are STALE: reported as such, attributed to nobody.

Read-only; works after `git gc --prune=now` because every ledger commit is reachable from the
state ref.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Any

import pygit2

from tinymem.auditlog import Ledger, Origin
from tinymem.displacing import other_kind
from tinymem.errors import UsageError
from tinymem.ledger import current
from tinymem.repository import Repo
from tinymem.statemap import FILES, META
from tinymem.worktree import classify, read_file


@dataclass(frozen=True)
class Attribution:
    commit: str
    episode: str
    kind: str
    time: str
    origin: Origin


@dataclass(frozen=True)
class BlameLine:
    line: int  # 1-based, in the work-tree file
    text: str
    snapshot_line: int | None  # 1-based line of the State Map snapshot; None when STALE
    by: Attribution | None  # None when STALE

    @property
    def stale(self) -> bool:
        return self.by is None

    def to_json(self) -> dict[str, Any]:
        by = self.by
        return {
            "line": self.line,
            "text": self.text,
            "stale": self.stale,
            "snapshot_line": self.snapshot_line,
            "commit": by.commit if by else None,
            "episode": by.episode if by else None,
            "kind": by.kind if by else None,
            "time": by.time if by else None,
            "author": by.origin.author if by else None,
            "model": by.origin.model if by else None,
            "summary": by.origin.summary if by else None,
        }


@dataclass(frozen=True)
class BlameResult:
    path: str
    snapshot: str  # blob id of the State Map's snapshot
    state: str  # the ledger commit blamed from
    total_lines: int  # lines in the work-tree file
    lines: list[BlameLine]  # the requested range only

    @property
    def stale_lines(self) -> int:
        return sum(1 for line in self.lines if line.stale)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "snapshot": self.snapshot,
            "state": self.state,
            "total_lines": self.total_lines,
            "stale_lines": self.stale_lines,
            "lines": [line.to_json() for line in self.lines],
        }


def split_lines(data: bytes) -> list[bytes]:
    """Lines as git counts them: split after every LF only (a lone CR is not a line end)."""
    if not data:
        return []
    lines = data.split(b"\n")
    out = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def map_lines(snapshot: list[bytes], work: list[bytes]) -> list[int | None]:
    """For each work-tree line, the index of the snapshot line it is, or None (changed).

    The common prefix and suffix are matched first: hand edits are usually local, and it keeps
    SequenceMatcher (quadratic in the worst case) to the changed middle of big files.
    """
    result: list[int | None] = [None] * len(work)
    n = min(len(snapshot), len(work))
    head = 0
    while head < n and snapshot[head] == work[head]:
        result[head] = head
        head += 1
    tail = 0
    while tail < n - head and snapshot[len(snapshot) - 1 - tail] == work[len(work) - 1 - tail]:
        result[len(work) - 1 - tail] = len(snapshot) - 1 - tail
        tail += 1
    a = snapshot[head : len(snapshot) - tail]
    b = work[head : len(work) - tail]
    if a and b:
        # autojunk would treat frequent lines (blank lines, braces) as junk and leave them
        # unmatched, marking unchanged lines STALE.
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                result[head + block.b + k] = head + block.a + k
    return result


def parse_range(raw: str) -> tuple[int, int | None]:
    """`-L START,END` (END may be empty or `+COUNT`), 1-based and inclusive."""
    start_s, _, end_s = raw.partition(",")
    try:
        start = int(start_s)
        if not end_s:
            end: int | None = None  # `-L 5` and `-L 5,`: to the end, as git blame reads them
        elif end_s.startswith("+"):
            end = start + int(end_s[1:]) - 1
        else:
            end = int(end_s)
    except ValueError:
        raise UsageError(f"-L takes START,END line numbers, got {raw!r}") from None
    if start < 1 or (end is not None and end < start):
        raise UsageError(f"-L {raw}: lines are numbered from 1 and END must not precede START")
    return start, end


def _had_record(repo: Repo, tip: str, path: str) -> bool:
    """Whether a State Map of this ledger held a record of file `path`: one that left it when
    a file of a directory above took its place, not a path below a live file that never
    existed (`app.py/foo`). A tree lookup per episode, on the way to an error only."""
    key = f"{META}/{path}"
    commit = repo.git[tip]
    while isinstance(commit, pygit2.Commit):
        try:
            entry = commit.tree[key]
        except KeyError:
            entry = None
        if entry is not None and entry.type_str == "blob":
            return True
        if not commit.parent_ids:
            return False
        commit = repo.git[commit.parent_ids[0]]
    return False


def blame(repo: Repo, path: str, start: int = 1, end: int | None = None) -> BlameResult:
    """Attribute lines `start`..`end` (1-based, inclusive; None: to the end) of the work tree."""
    view = current(repo)
    assert view.commit_id is not None
    files = view.files()
    snapshot_id = files.get(path)
    inside = path.rstrip("/") + "/"
    if snapshot_id is None and (
        os.path.isdir(repo.abspath(path)) or any(p.startswith(inside) for p in files)
    ):
        raise UsageError(
            f"{path} is a directory; tm blame takes one file (tm state {path} lists its entities)"
        )
    if snapshot_id is None:
        meta = view.meta(path)
        if (meta is not None and meta.deleted) or (
            meta is None and other_kind(view, path) and _had_record(repo, view.commit_id, path)
        ):
            # A deleted file's record, or one that left the State Map when a file and a
            # directory of its name changed places (`displacing`): its history stays.
            raise UsageError(f"{path} was deleted in the State Map; `tm log {path}` shows when")
        raise UsageError(f"{path} is not in the State Map; `tm adopt {path}` records it first")
    try:
        work = read_file(repo, path).data
    except FileNotFoundError:
        raise UsageError(
            f"{path} is missing from the work tree; `git show {repo.state_ref}:{FILES}/{path}`"
            " prints the State Map's text"
        ) from None
    except OSError as exc:
        raise UsageError(f"{path} cannot be read: {exc}") from None
    snap = view.blob(snapshot_id)
    for data, where in ((work, "work-tree file"), (snap, "State Map snapshot")):
        if classify(data) == "binary":
            raise UsageError(f"the {where} {path} is binary; blame works on lines of text")
    work_lines = split_lines(work)
    snap_lines = split_lines(snap)
    total = len(work_lines)
    if total and start > total:
        raise UsageError(f"-L {start}: {path} has only {total} lines")
    last = total if end is None else min(end, total)
    wanted = range(start - 1, last)
    mapping = map_lines(snap_lines, work_lines) if work != snap else list(range(total))
    needed = [m for m in (mapping[i] for i in wanted) if m is not None]
    owner: dict[int, str] = {}
    if needed:
        owner = _blame_snapshot(repo, view.commit_id, path, min(needed) + 1, max(needed) + 1)
    ledger = Ledger(repo)
    attributions: dict[str, Attribution] = {}
    lines: list[BlameLine] = []
    for i in wanted:
        text = work_lines[i].decode("utf-8", "replace").rstrip("\n")
        m = mapping[i]
        if m is None:
            lines.append(BlameLine(i + 1, text, None, None))
            continue
        commit = owner[m + 1]
        by = attributions.get(commit)
        if by is None:
            ep = ledger.episode(commit)
            by = Attribution(commit, ep.id, ep.kind, ep.time, ledger.origin(commit, ep, path))
            attributions[commit] = by
        lines.append(BlameLine(i + 1, text, m + 1, by))
    return BlameResult(path, snapshot_id, view.commit_id, total, lines)


def _blame_snapshot(repo: Repo, tip: str, path: str, first: int, last: int) -> dict[int, str]:
    """Snapshot line number (1-based) -> the ledger commit that introduced it."""
    blamed = repo.git.blame(
        f"{FILES}/{path}",
        newest_commit=pygit2.Oid(hex=tip),
        min_line=first,
        max_line=last,
    )
    owner: dict[int, str] = {}
    for hunk in blamed:
        commit = str(hunk.final_commit_id)
        for k in range(hunk.lines_in_hunk):
            owner[hunk.final_start_line_number + k] = commit
    return owner
