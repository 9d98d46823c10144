"""External Truth Verification: is the work tree still what the State Map believes?

A diff of the State Map's file snapshots (`files/`) against the work tree. Files whose blob id
(git's filters applied) equals the snapshot are fresh; inside a changed file only the entities
whose text changed are STALE. Missing, unreadable and replaced-by-symlink files make all their
entities STALE (fail safe). STALE is derived here on every run and never stored.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice

import pygit2

from tinymem.gitobjects import blob_id, diff_blobs
from tinymem.gitsuspects import Probe, skip_worktree
from tinymem.records import FILE_SYMBOL, entity_key
from tinymem.repository import Repo
from tinymem.statcache import StatCache, stat_key
from tinymem.statemap import FILES, StateView
from tinymem.symcache import SymbolCache, extraction_for
from tinymem.transitions import entity_spans
from tinymem.treewatch import watching
from tinymem.worktree import ThroughSymlinkError, hash_file, read_file, symlinked_dir

_FEW_PATHS = 256
_HASH_WITHOUT_CACHE = 256 * 1024


@dataclass(frozen=True)
class StaleEntity:
    key: str
    symbol: str
    kind: str
    why: str


@dataclass
class FileDrift:
    path: str
    # "modified", "missing", "replaced by a symlink", "reached through the symlink DIR",
    # "not a regular file", "unreadable: ..."
    why: str
    stale: list[StaleEntity] = field(default_factory=list)
    new_symbols: list[str] = field(default_factory=list)  # on disk, unknown to the State Map
    outside: bool = False  # text outside every entity changed (imports, module code)


@dataclass
class EtvReport:
    checked: int
    drift: list[FileDrift]

    @property
    def clean(self) -> bool:
        return not self.drift

    def stale_keys(self) -> set[str]:
        return {e.key for d in self.drift for e in d.stale}


def refresh_listing(repo: Repo, view: StateView, cache: StatCache) -> None:
    """Bring the cache's listing to the view's files/ tree: by the difference from the tree
    it holds when that is small (the usual step after an adopt or accept), else in full.
    Only the header is compared here (reading the columns costs ~10 ms at 50,000 files);
    whoever reads the columns checks them with `listing_of`."""
    tree = view.subtree(FILES)
    if tree == cache.tree:
        return
    if tree is None:
        cache.set_listing(None, {})
        return
    old = cache.tree
    if old is not None and cache.listing_of(old):
        try:
            changes = list(islice(diff_blobs(repo.git, old, tree), _FEW_PATHS + 1))
        except (KeyError, ValueError, pygit2.GitError):
            changes = None  # the old tree is gone (a rewritten ledger): list the new one
        if changes is not None and len(changes) <= _FEW_PATHS:
            cache.update_listing(tree, changes)
            return
    cache.set_listing(tree, view.files())


def file_listing(repo: Repo, view: StateView, cache: StatCache) -> dict[str, str]:
    """Path -> snapshot id of every file in the view, from the stat cache's listing."""
    refresh_listing(repo, view, cache)
    tree = view.subtree(FILES)
    if tree is None:
        return {}
    if not cache.listing_of(tree):
        # The columns did not load after all (replaced or damaged): an empty listing must
        # never pass for the State Map's.
        cache.set_listing(tree, view.files())
    return cache.listing()


def _snapshots(
    view: StateView, cache: StatCache, files_tree: str | None, paths: list[str]
) -> dict[str, str]:
    """Snapshot ids of those of `paths` the State Map has: a few from its tree, many from the
    cache's listing of that same tree."""
    if len(paths) > _FEW_PATHS and cache.listing_of(files_tree):
        return cache.snapshots_for(paths)
    return {p: oid for p in paths if (oid := view.snapshot(p)) is not None}


def verify(
    repo: Repo, view: StateView, paths: Iterable[str] | None = None, probe: Probe | None = None
) -> EtvReport:
    """Compare the work tree with `view`. `probe`: git's comparison already started with this
    view's files/ tree (`gitsuspects.start`); it is ignored when it was for another commit.

    In a process that watches the work tree (`treewatch.watch`: `tm serve`, `tm mcp`), a
    whole-tree look checks only what changed since its last look, when that is known."""
    watch = watching(repo.workdir) if paths is None else None
    if watch is None:
        return _compare(repo, view, paths, probe)
    with watch.turn:
        tree = view.subtree(FILES)
        try:
            known = watch.suspects(tree, lambda old: _moved(repo, old, tree))
            if known is None:
                cache = StatCache(repo.cache_dir)
                watch.rewatch(file_listing(repo, view, cache))
                report = _compare(repo, view, None, probe, cache=cache)
            else:
                report = _compare(repo, view, None, None, known)
        except BaseException:
            watch.forget()
            raise
        watch.looked(tree, (d.path for d in report.drift))
    return report


def _moved(repo: Repo, old: str, new: str | None) -> list[str] | None:
    """The paths whose snapshot differs between two files/ trees, or None when there are
    many (a whole look costs less than listing them) or the old tree is gone."""
    if new is None:
        return None
    try:
        changes = list(islice(diff_blobs(repo.git, old, new), _FEW_PATHS + 1))
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return None if len(changes) > _FEW_PATHS else [path for path, _ in changes]


def _compare(
    repo: Repo,
    view: StateView,
    paths: Iterable[str] | None,
    probe: Probe | None,
    known: set[str] | None = None,
    cache: StatCache | None = None,
) -> EtvReport:
    """`verify` itself. `known`: the only files of the whole tree that may differ (a watch
    of the work tree says so); None: find them (git, else the stat cache). `cache`: the stat
    cache when the caller has it open already."""
    cache = StatCache(repo.cache_dir) if cache is None else cache
    root = repo.workdir + os.sep
    checked: int | None = None
    files_tree = view.subtree(FILES)
    suspects: list[str] | None = None
    if known is not None:
        refresh_listing(repo, view, cache)  # for the count of checked files
        suspects = sorted(known)
    elif paths is None and files_tree is not None:
        # git's own comparison first (C, over its index); our stat cache when git cannot tell.
        if probe is None or not probe.compares(repo.git.path, repo.workdir, view.commit_id):
            probe = Probe(repo.git.path, repo.workdir, files_tree)
        flagged = probe.result()
        if repo.tracked_gitattributes is None:
            repo.tracked_gitattributes = probe.tracked_gitattributes
        if flagged is not None:
            # Kept current for the fallback below and for the count of checked files.
            refresh_listing(repo, view, cache)
            suspects = sorted(flagged)
        else:
            suspects = cache.suspects(root, files_tree)
    if suspects is not None:
        # Everything else matched its recorded stat and snapshot: only these need a look.
        checked = cache.count
        listing = _snapshots(view, cache, files_tree, suspects)
    else:
        listing = file_listing(repo, view, cache)
        if paths is not None:
            wanted = set(paths)
            listing = {p: o for p, o in listing.items() if p in wanted}
    drift: list[FileDrift] = []
    modified: list[str] = []
    absent: list[str] = []
    linked = _LinkedDirs(repo.workdir)
    for path, snapshot in listing.items():
        full = root + path
        link = linked.on_way(path)
        if link is not None:
            # lstat would follow that directory: the file there is not the work tree's.
            drift.append(FileDrift(path, f"reached through the symlink {link}"))
            continue
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):  # ENOTDIR: a file holds its place
            absent.append(path)
            continue
        except OSError as exc:
            drift.append(FileDrift(path, f"unreadable: {exc.strerror}"))
            continue
        if stat.S_ISLNK(st.st_mode):
            drift.append(FileDrift(path, "replaced by a symlink"))
            continue
        if not stat.S_ISREG(st.st_mode):
            drift.append(FileDrift(path, "not a regular file"))
            continue
        key = stat_key(st)
        # A small file is hashed faster than the cache's columns load (~10 ms at 50k files).
        cached = st.st_size >= _HASH_WITHOUT_CACHE or cache.loaded
        oid = cache.lookup(path, key) if cached else None
        if oid is None:
            try:
                oid = hash_file(repo, path)
            except ThroughSymlinkError as exc:  # made a symlink just now
                drift.append(FileDrift(path, exc.why))
                continue
            except (OSError, pygit2.GitError) as exc:
                drift.append(FileDrift(path, f"unreadable: {exc}"))
                continue
            if cached:
                cache.store(path, key, oid)
        if oid != snapshot:
            modified.append(path)
    cache.save()
    if absent:
        # A sparse checkout leaves files out on purpose: git's, not a deletion.
        sparse = skip_worktree(repo.git.path, repo.workdir, absent)
        drift.extend(FileDrift(path, "missing") for path in absent if path not in sparse)
    if modified:
        symbols = SymbolCache(repo.cache_dir)
        try:
            drift.extend(_entity_drift(repo, view, path, symbols) for path in modified)
        finally:
            symbols.close()
    for d in drift:
        if not d.stale and d.why != "modified":
            meta = view.meta(d.path)
            if meta is not None:
                d.stale = [
                    StaleEntity(meta.key(r.symbol), r.symbol, r.kind, d.why)
                    for r in meta.live_entities()
                ]
    drift.sort(key=lambda d: d.path)
    return EtvReport(checked=len(listing) if checked is None else checked, drift=drift)


class _LinkedDirs:
    """Which directories of the work tree are symlinks, each asked of the file system once
    per pass."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self._dirs: dict[str, str | None] = {}
        self._prefixes: dict[str, bool] = {}

    def on_way(self, path: str) -> str | None:
        """The first directory of `path` that is a symlink, else None."""
        parent = path.rpartition("/")[0]
        if not parent:
            return None
        try:
            return self._dirs[parent]
        except KeyError:
            found = self._dirs[parent] = symlinked_dir(self.workdir, path, self._prefixes)
            return found


def _entity_drift(repo: Repo, view: StateView, path: str, symbols: SymbolCache) -> FileDrift:
    meta = view.meta(path)
    try:
        wf = read_file(repo, path)
    except ThroughSymlinkError as exc:
        return FileDrift(path, exc.why)
    except OSError as exc:
        return FileDrift(path, f"unreadable: {exc.strerror or exc}")
    drift = FileDrift(path, "modified")
    if meta is None:
        return drift
    ex = extraction_for(symbols, wf.path, wf.oid, wf.data, wf.kind)
    on_disk: dict[str, str] = {}
    for sym in entity_spans(wf, ex):
        on_disk[sym.name] = (
            wf.oid if sym.name == FILE_SYMBOL else blob_id(wf.data[sym.start : sym.end])
        )
    known = set()
    for rec in meta.live_entities():
        known.add(rec.symbol)
        now = on_disk.get(rec.symbol)
        if now is None:
            why = "missing from the file" if ex is not None else f"file is now {wf.kind}"
            drift.stale.append(StaleEntity(entity_key(path, rec.symbol), rec.symbol, rec.kind, why))
        elif now != rec.artifact:
            drift.stale.append(
                StaleEntity(entity_key(path, rec.symbol), rec.symbol, rec.kind, "changed on disk")
            )
    drift.new_symbols = sorted(n for n in on_disk if n not in known and n != FILE_SYMBOL)
    before = _cut(view.blob(meta.snapshot), ((r.start, r.end) for r in meta.live_entities()))
    after = _cut(wf.data, ((s.start, s.end) for s in entity_spans(wf, ex)))
    drift.outside = before != after
    return drift


def _cut(data: bytes, spans: Iterable[tuple[int, int]]) -> bytes:
    out = bytearray()
    pos = 0
    for start, end in sorted(spans):
        if start < pos:
            continue  # nested inside a span already cut
        out += data[pos:start]
        pos = end
    out += data[pos:]
    return bytes(out)
