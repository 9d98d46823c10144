"""`tm init`: the tracked files become the AUTHORITATIVE baseline (source: disk)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tinymem.gitcmd import repo_git_output
from tinymem.gitobjects import ObjectWriter, PackSpool, SpooledObjects, discard_spools, pack_dir
from tinymem.ledger import (
    Committed,
    Draft,
    EncodedFiles,
    Episode,
    commit_episode,
    encode_files,
    encode_transitions,
)
from tinymem.paths import is_utf8, printable
from tinymem.records import Source
from tinymem.repository import Repo
from tinymem.scan import map_chunks, scan_chunk
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
    """(path, why it is skipped or None) for every path in git's index, each once (a path in
    conflict has several entries)."""
    entries = _index_entries(repo)
    out: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    for mode, path in entries:
        if path in seen:
            continue
        seen.add(path)
        if mode == _GITLINK:
            out.append((path, "submodule"))
        elif mode == _SYMLINK:
            out.append((path, "symlink: tm tracks regular files only"))
        elif not is_utf8(path):
            out.append((printable(path), "its name is not UTF-8: tm records UTF-8 names only"))
        else:
            out.append((path, None))
    if repo.tracked_gitattributes is None:
        # Errs towards yes (any case, any prefix), like gitsuspects: a wrong yes only costs
        # filtered hashing, a wrong no would record blobs git does not make.
        repo.tracked_gitattributes = any(p.lower().endswith(".gitattributes") for p in seen)
    return out


def _index_entries(repo: Repo) -> list[tuple[int, str]]:
    """(mode, path) of each index entry, in index order. git lists a 50,000-entry index in
    ~40 ms; pygit2 takes ~140 ms to build its entry objects, so it is only the fallback for
    when git cannot run."""
    listing = repo_git_output(repo.git.path, repo.workdir, "ls-files", "--stage", "-z")
    if listing is None:
        index = repo.git.index
        index.read()
        return [(entry.mode, entry.path) for entry in index]
    entries: list[tuple[int, str]] = []
    for record in listing.split(b"\0"):
        if record:
            info, _, name = record.partition(b"\t")  # "<mode> <id> <stage>\t<path>"
            entries.append((int(info[: info.index(b" ")], 8), os.fsdecode(name)))
    return entries


@dataclass
class _ImportedChunk:
    """What a worker recorded for a chunk of files, merged in order by the main process."""

    edits: TreeEdits
    files: EncodedFiles
    transitions: str  # `encode_transitions`
    imported: list[str]
    skipped: list[tuple[str, str]]
    objects: SpooledObjects  # the new objects, already in this process's pack spool


# The pack spool of the import running in this process. A worker process keeps its spool
# across chunks, so a large import writes one pack per worker, and the main process never
# handles those objects' bytes; it only seals the spools (`ObjectWriter.add_spooled`).
_spool: PackSpool | None = None


def _spool_for(repo: Repo, prefix: str) -> PackSpool:
    global _spool
    if _spool is None or not os.path.basename(_spool.path).startswith(prefix):
        _release_spool()
        _spool = PackSpool(pack_dir(repo.git), prefix)
    return _spool


def _release_spool() -> None:
    global _spool
    if _spool is not None:
        _spool.close()
        _spool = None


def _import_chunk(
    repo: Repo, paths: Sequence[str], episode_id: str, episode_time: str, spool_prefix: str
) -> _ImportedChunk:
    # Runs in a worker process for large trees: reading, parsing, recording and compressing
    # every file is the bulk of an import, and none of it depends on another file.
    episode = Episode(kind="init", summary="", id=episode_id, time=episode_time)
    writer = ObjectWriter(repo.git)
    edits: TreeEdits = {}
    imported: list[str] = []
    skipped: list[tuple[str, str]] = []
    for item in scan_chunk(repo, paths):
        if item.file is None:
            skipped.append((item.path, item.reason))
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
        imported.append(item.path)
    objects = writer.spool(_spool_for(repo, spool_prefix))
    files = encode_files(episode.files)
    transitions = encode_transitions(episode.transitions)
    return _ImportedChunk(edits, files, transitions, imported, skipped, objects)


def init(repo: Repo, progress: Progress | None = None) -> InitResult:
    """Import the tracked files the current branch's State Map does not know (all of them
    when the branch has no ledger: its first commit)."""
    candidates = tracked_paths(repo)
    result = InitResult(committed=None)

    def operation(view: StateView, writer: ObjectWriter) -> Draft | None:
        result.imported.clear()
        result.skipped.clear()
        known = set(view.meta_paths()) if view.commit_id else set()
        todo = [(p, why) for p, why in candidates if p not in known]
        result.already = len(candidates) - len(todo)
        for path, why in todo:
            if why is not None:
                result.skipped.append((path, why))
        if view.commit_id is not None and len(result.skipped) == len(todo):
            # Idempotent: nothing new that tm can record (symlinks, submodules and names that
            # are not UTF-8 are skipped again, and need no episode to say so).
            return None
        episode = Episode(kind="init", summary="")
        edits: TreeEdits = {}
        total = len(todo)
        done = len(result.skipped)
        readable = [p for p, why in todo if why is None]
        prefix = f"tmp_pack_tm-{episode.id}-"
        chunks = map_chunks(repo, readable, _import_chunk, episode.id, episode.time, prefix)
        try:
            for part in chunks:
                writer.add_spooled(part.objects)
                edits.update(part.edits)
                episode.encoded_files.append(part.files)
                episode.encoded_transitions.append(part.transitions)
                result.imported.extend(part.imported)
                result.skipped.extend(part.skipped)
                done += len(part.imported) + len(part.skipped)
                if progress is not None:
                    progress(done, total)
        except BaseException:
            chunks.close()  # no worker may still be writing a spool when they are removed
            discard_spools(pack_dir(repo.git), prefix)
            raise
        finally:
            _release_spool()  # the spool of a small import, which ran in this process
        if view.commit_id is not None and not result.imported:
            return None  # nothing new could be read: no episode (commit_episode drops spools)
        if progress is not None:
            progress(total, total)
        episode.summary = f"imported {len(result.imported)} tracked files"
        episode.details = {"skipped": [{"path": p, "reason": r} for p, r in result.skipped]}
        return Draft(episode=episode, changes=edits)

    result.committed = commit_episode(repo, operation)
    return result
