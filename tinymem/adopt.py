"""`tm adopt`: the user write-head. What the user wrote becomes AUTHORITATIVE at once."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from tinymem.displacing import live_displaced, regular_file
from tinymem.errors import ConcurrencyError, UnsafePathError, UsageError
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter, blob_id
from tinymem.ledger import Committed, Draft, Episode, commit_episode, current, new_episode_id
from tinymem.paths import names_directory
from tinymem.records import Source
from tinymem.repository import Repo
from tinymem.scan import scan
from tinymem.statemap import StateView
from tinymem.textlist import shortened
from tinymem.transitions import TreeEdits, apply_update, record_deletion, record_file
from tinymem.worktree import NotAFileError, ThroughSymlinkError, stored_id, symlinked_dir
from tinymem.writing.transaction import Change, read_raw, write_all

USER_REASON = "adopted by the user"


@dataclass
class AdoptResult:
    committed: Committed | None
    adopted: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    tombstoned: list[str] = field(default_factory=list)  # entity keys that left their file
    saved_disk_text: str | None = None  # blob id of work-tree text replaced by a paste

    def to_json(self) -> dict[str, Any]:
        """`tm adopt --json` (and `tm serve`'s `/v1/user/code`)."""
        c = self.committed
        return {
            "episode": c.episode.id if c else None,
            "commit": c.commit if c else None,
            "adopted": self.adopted,
            "deleted": self.deleted,
            "tombstoned": self.tombstoned,
            "saved_disk_text": self.saved_disk_text,
        }


def expand(repo: Repo, view: StateView, user_paths: list[str]) -> list[str]:
    """Repository paths named by the user; a directory means the files below it.

    Only a directory needs the State Map's whole file listing; a named file is one lookup.
    """
    out: list[str] = []
    for raw in user_paths:
        rel = repo.rel(raw)
        full = repo.abspath(rel) if rel else repo.workdir
        if os.path.isdir(full) and not os.path.islink(full):
            live = view.files()
            prefix = rel + "/" if rel else ""
            found = {p for p in live if p.startswith(prefix)}
            for dirpath, dirnames, filenames in os.walk(full):
                dirnames[:] = [d for d in dirnames if d != ".git"]
                for name in filenames:
                    p = os.path.relpath(os.path.join(dirpath, name), repo.workdir)
                    p = p.replace(os.sep, "/")
                    if p in live or not repo.git.path_is_ignored(p):
                        found.add(p)
            out.extend(sorted(found))
        elif os.path.lexists(full) or view.snapshot(rel) is not None:
            out.append(rel)
        else:
            raise UsageError(f"{raw} does not exist and tm does not track it")
    return sorted(dict.fromkeys(out))


def adopt(repo: Repo, user_paths: list[str], *, all_stale: bool = False) -> AdoptResult:
    ref = repo.state_ref  # the ledger the files were judged against, whatever HEAD does next
    tip_view = current(repo)
    paths = expand(repo, tip_view, user_paths)
    if all_stale:
        paths = sorted(set(paths) | {d.path for d in verify(repo, tip_view).drift})
    if not paths:
        if all_stale:
            return AdoptResult(None)  # a clean tree: nothing to adopt is no mistake
        raise UsageError("nothing to adopt: name files or directories, or use --all")
    linked: dict[str, bool] = {}
    for p in paths:
        full = repo.abspath(p)
        link = symlinked_dir(repo.workdir, p, linked)
        if link is not None:
            # What lies behind that symlink is outside the work tree (git sees the file as
            # deleted): its text must never become the State Map's.
            raise UnsafePathError(
                f"{p} is reached through the symlink {link}; tm records files of the work tree"
                f" only: make {link} a directory again, then adopt"
            )
        if os.path.islink(full):
            raise UnsafePathError(f"{p} is a symlink; tm records regular files only")
    return _record(repo, paths, ref=ref)


def adopt_content(
    repo: Repo, user_path: str, content: bytes, *, allow_empty: bool = False
) -> AdoptResult:
    """Pasted text becomes the file's content on disk and in the State Map, in one action.

    If the work tree held text the State Map never saw, it is stored in the vault first and
    named in the episode, so the paste never destroys anything. Empty input (stdin from
    /dev/null, a paste that never came) is refused unless `allow_empty`: it would empty the
    file.
    """
    if not content and not allow_empty:
        raise UsageError(
            f"no content came on stdin for {user_path}: nothing was written (emptying the"
            " file needs --allow-empty)"
        )
    if names_directory(user_path):
        # `dir/` or `a.py/.` names a directory: normalised away, it would write a file `dir`.
        raise UsageError(f"--path must name a file; {user_path!r} names a directory")
    rel = repo.rel(user_path)
    if not rel:
        raise UsageError("--path must name a file, not the repository root")
    full = repo.abspath(rel)
    link = symlinked_dir(repo.workdir, rel)
    if link is not None:
        raise UnsafePathError(f"{rel} is reached through the symlink {link}; nothing was written")
    if os.path.islink(full) or os.path.isdir(full):
        raise UnsafePathError(f"{rel} is a symlink or a directory; paste into a regular file")
    ref = repo.state_ref
    view = current(repo)
    before = read_raw(repo, rel)  # through the same checks as the write
    saved: dict[str, bytes] = {}
    if before is not None and before != content:
        known = view.snapshot(rel)
        if known is None or stored_id(repo, rel, before) != known:
            saved["previous-disk-text"] = before

    def unchanged_since_read() -> None:
        if read_raw(repo, rel) != before:
            raise UsageError(f"{rel} changed while pasting; nothing was written")

    # Written as an accept writes: the text replaced and the paste go to the object database
    # and an intent record names both before the rename, so a kill anywhere up to the ledger
    # commit is rolled back by the next tm command (which names the replaced text), and a
    # failed commit (a busy ledger) puts the file back.
    episode_id = new_episode_id()
    changes = [] if before == content else [Change(rel, content, unchanged_since_read)]
    try:
        result = write_all(
            repo,
            changes,
            episode=episode_id,
            tip=repo.state_tip(ref),
            record=lambda: _record(repo, [rel], attachments=saved, episode_id=episode_id, ref=ref),
            kind="adopt",
            ref=ref,
        )
    except ConcurrencyError as exc:
        raise ConcurrencyError(f"{exc}; the paste was not written, {rel} is as it was") from exc
    if saved:
        result.saved_disk_text = blob_id(saved["previous-disk-text"])
    return result


def keep_hand_edits(
    repo: Repo, paths: list[str], why: str, *, ref: str | None = None
) -> AdoptResult:
    """Record the work-tree text of `paths` as the user's (an adopt episode) where it differs
    from the State Map: `tm accept` writes a file's proposals into the text on disk, and a
    hand edit elsewhere in it is the user's, not the model's. Files equal to their snapshot
    make no episode."""
    return _record(repo, paths, why=why, ref=ref)


def _record(
    repo: Repo,
    paths: list[str],
    attachments: dict[str, bytes] | None = None,
    episode_id: str | None = None,
    *,
    why: str | None = None,
    ref: str | None = None,
) -> AdoptResult:
    """`ref`: the ledger the caller started on (HeadMovedError when HEAD left it since)."""
    result = AdoptResult(committed=None)

    def operation(view: StateView, writer: ObjectWriter) -> Draft | None:
        result.adopted.clear()
        result.deleted.clear()
        result.unchanged.clear()
        result.tombstoned.clear()
        episode = Episode(kind="adopt", summary="", id=episode_id or new_episode_id())
        edits: TreeEdits = {}
        for item in scan(repo, paths):
            path = item.path
            old = view.meta(path)
            if isinstance(item.error, ThroughSymlinkError):
                raise UnsafePathError(f"{item.error}; tm records files of the work tree only")
            # A directory in the place of a tracked file (`--all`): the file is gone, as
            # when files below it take its place (`_end_displaced`).
            replaced = isinstance(item.error, NotAFileError) and _a_directory(repo, path)
            if isinstance(item.error, NotAFileError) and not replaced:
                raise UnsafePathError(f"{path}: {item.error}; tm records regular files only")
            if isinstance(item.error, FileNotFoundError) or replaced:
                if old is None or old.deleted:
                    raise UsageError(f"{path} does not exist and tm does not track it")
                update = record_deletion(old, episode=episode, reason="deleted by the user")
                result.deleted.append(path)
            elif item.file is None:
                raise UsageError(f"{path} cannot be adopted: {item.reason}")
            else:
                if old is not None and not old.deleted and old.snapshot == item.file.oid:
                    result.unchanged.append(path)
                    continue
                update = record_file(
                    writer,
                    old,
                    item.file,
                    item.extraction,
                    source=Source.USER,
                    episode=episode,
                    reason=USER_REASON,
                )
                result.adopted.append(path)
            result.tombstoned.extend(f"{path}::{s}" for s in update.tombstoned)
            apply_update(writer, update, episode, edits)
        _end_displaced(repo, view, writer, episode, edits, result)
        if not result.adopted and not result.deleted and not attachments:
            return None
        parts = []
        if result.adopted:
            parts.append(f"adopted {shortened(result.adopted)}")
        if result.deleted:
            parts.append(f"deleted {shortened(result.deleted)}")
        if attachments and not parts:
            # A paste of the State Map's own text over a hand edit: nothing new to adopt,
            # but the hand edit it replaced must be kept (reachable) all the same.
            parts.append(f"pasted the recorded text of {', '.join(paths)}")
        episode.summary = "; ".join(parts) + (f" ({why})" if why else "")
        if attachments:
            episode.details["previous_disk_text"] = {
                name: blob_id(data) for name, data in attachments.items()
            }
        return Draft(episode=episode, changes=edits, attachments=dict(attachments or {}))

    result.committed = commit_episode(repo, operation, ref=ref)
    return result


def _end_displaced(
    repo: Repo,
    view: StateView,
    writer: ObjectWriter,
    episode: Episode,
    edits: TreeEdits,
    result: AdoptResult,
) -> None:
    """A file adopted where the State Map has live files below a directory of its name (or a
    file adopted below a directory that was a tracked file): the disk holds no regular file
    there any more, so those are recorded deleted in the same episode, and their records
    then leave the State Map (`displacing`). Never dropped unrecorded (#29)."""
    looked: set[str] = set()  # directories with no record of a file of their name
    for path in list(result.adopted):
        # Those this adopt recorded already (deleted: `--all`) are left out.
        for other in live_displaced(view, path, looked, episode.files):
            if regular_file(repo.abspath(other)):
                raise UsageError(f"{path} and {other} cannot both be files; nothing was recorded")
            old = view.meta(other)
            assert old is not None
            update = record_deletion(old, episode=episode, reason="deleted by the user")
            result.deleted.append(other)
            result.tombstoned.extend(f"{other}::{s}" for s in update.tombstoned)
            apply_update(writer, update, episode, edits)


def _a_directory(repo: Repo, path: str) -> bool:
    full = repo.abspath(path)
    return os.path.isdir(full) and not os.path.islink(full)
