"""`tm init`: the tracked files become the AUTHORITATIVE baseline (source: disk)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import Committed, Draft, Episode, commit_episode
from tinymem.records import Source
from tinymem.repository import Repo
from tinymem.scan import scan
from tinymem.statemap import StateView
from tinymem.transitions import TreeEdits, apply_update, record_file

Progress = Callable[[int, int], None]

_GITLINK = 0o160000
_SYMLINK = 0o120000


@dataclass
class InitResult:
    committed: Committed | None
    imported: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    already: int = 0  # tracked files the State Map already knew


def tracked_paths(repo: Repo) -> list[tuple[str, str | None]]:
    """(path, why it is skipped or None) for every entry of git's index."""
    index = repo.git.index
    index.read()
    out: list[tuple[str, str | None]] = []
    for entry in index:
        if entry.mode == _GITLINK:
            out.append((entry.path, "submodule"))
        elif entry.mode == _SYMLINK:
            out.append((entry.path, "symlink: tm tracks regular files only"))
        else:
            out.append((entry.path, None))
    return out


def init(repo: Repo, progress: Progress | None = None) -> InitResult:
    candidates = tracked_paths(repo)
    result = InitResult(committed=None)

    def operation(view: StateView, writer: ObjectWriter) -> Draft | None:
        result.imported.clear()
        result.skipped.clear()
        known = set(view.meta_paths()) if view.commit_id else set()
        todo = [(p, why) for p, why in candidates if p not in known]
        result.already = len(candidates) - len(todo)
        if view.commit_id is not None and not todo:
            return None  # idempotent: nothing new to import
        episode = Episode(kind="init", summary="")
        edits: TreeEdits = {}
        total = len(todo)
        for path, why in todo:
            if why is not None:
                result.skipped.append((path, why))
        readable = [p for p, why in todo if why is None]
        for i, item in enumerate(scan(repo, readable)):
            if progress is not None:
                progress(i, total)
            if item.file is None:
                result.skipped.append((item.path, item.reason))
                continue
            update = record_file(
                writer,
                None,
                item.file,
                item.extraction,
                source=Source.DISK,
                episode=episode,
                reason="baseline import",
            )
            apply_update(writer, update, episode, edits)
            result.imported.append(item.path)
        if progress is not None:
            progress(total, total)
        episode.summary = f"imported {len(result.imported)} tracked files"
        episode.details = {"skipped": [{"path": p, "reason": r} for p, r in result.skipped]}
        return Draft(episode=episode, changes=edits)

    result.committed = commit_episode(repo, operation)
    return result
