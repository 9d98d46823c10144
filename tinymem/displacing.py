"""A path that changes kind in the State Map: a file where records of a directory of the same
name are kept, or a directory of files where a file's record is kept.

git turns a directory into a file of its name (or the reverse) in one commit, and a user does
it on disk. The State Map's tree cannot hold both `meta/lib` and `meta/lib/a.py`, and
`files/`, `entities/` likewise; records of deleted files are kept (`"deleted": true`), so a
live path can meet records of the other kind. The rule (docs/formats.md, "A path that
changes kind"): when an episode makes a path live, the records of the other kind leave the
State Map in that same episode, each named in the episode's `files` with `"meta": null`.
Only records of deleted files can leave: a live one must first be recorded deleted (its
entities TOMBSTONED) by the episode, which its caller does when the work tree agrees that
the file is gone (`live_displaced`). Their history stays in the ledger's older commits.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Container, MutableMapping

from tinymem.gitobjects import MODE_TREE, UnnamedEntriesError, walk_blobs
from tinymem.statemap import ENTITIES, FILES, META, StateView

__all__ = ["live_displaced", "other_kind", "regular_file", "settle"]


def other_kind(view: StateView, path: str, dirs: set[str] | None = None) -> list[str]:
    """The paths of the records that a record of `path` cannot stand beside: those below
    `path/` and the one at a directory above it, if any. `dirs`: directories known to hold
    no record of a file of their name (filled in, so a batch looks at each once)."""
    found: list[str] = []
    entry = view.entry(META, path)
    if entry is not None and entry[0] == MODE_TREE:
        found.extend(f"{path}/{p}" for p, _ in walk_blobs(view.repo, entry[1]))
    head = path
    clean: list[str] = []
    while "/" in head:
        head = head.rpartition("/")[0]
        if dirs is not None and head in dirs:
            break  # and so are the directories above it
        if view.file_entry(META, head) is not None:
            found.append(head)
            return found  # a blob: nothing deeper than it can be a record
        clean.append(head)
    if dirs is not None:
        dirs.update(clean)
    return found


def regular_file(full: str) -> bool:
    """Whether the work tree holds a regular file at `full` (not a directory, symlink, or
    nothing): a displaced record may end only where it does not."""
    try:
        return stat.S_ISREG(os.lstat(full).st_mode)
    except OSError:
        return False


def live_displaced(
    view: StateView,
    path: str,
    dirs: set[str] | None = None,
    recorded: Container[str] = (),
) -> list[str]:
    """The live records that `path` made live would displace: the caller records each
    deleted (TOMBSTONED) in the same episode, once the work tree agrees it is gone (how it
    asks differs: `tm adopt` refuses, an accept blocks at gate A, a commit taken leaves the
    file STALE). `dirs`: as `other_kind`'s, one set for the paths of one episode (a deep
    path's directories are then looked at once, not once per file). `recorded`: the paths
    the episode recorded already (deleted by it, or displaced by an earlier path), left out."""
    out = []
    for other in other_kind(view, path, dirs):
        if other in recorded:
            continue
        meta = view.meta(other)
        if meta is not None and not meta.deleted:
            out.append(other)
    return out


def settle(
    view: StateView,
    files: MutableMapping[str, dict[str, str | None]],
    changes: MutableMapping[str, tuple[int, str] | None],
) -> list[str]:
    """Take out of an episode's changes the records its live paths displace: each leaves
    `files/`, `meta/` and `entities/`, and `files` names it with no snapshot and no metadata.
    Returns their paths. A displaced record that is live (neither deleted before nor by this
    episode) is a caller's mistake, never a silent drop: UnnamedEntriesError."""
    gone: list[str] = []
    live = [p for p, rec in files.items() if rec.get("snapshot") is not None]
    if not live or view.subtree(META) is None:
        return gone
    dirs: set[str] = set()
    for path in live:
        for other in other_kind(view, path, dirs):
            rec = files.get(other)
            if rec is not None and rec.get("snapshot") is not None:
                raise UnnamedEntriesError(f"{path} and {other} cannot both be live")
            if rec is None:
                meta = view.meta(other)
                if meta is not None and not meta.deleted:
                    raise UnnamedEntriesError(
                        f"{path} takes the place of {other}, whose record is live"
                    )
            elif rec.get("meta") is None:
                continue  # settled already (a second live path under the same directory)
            files[other] = {"snapshot": None, "meta": None}
            for top in (FILES, META, ENTITIES):
                changes[f"{top}/{other}"] = None
            gone.append(other)
    return gone
