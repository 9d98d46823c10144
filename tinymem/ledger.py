"""The ledger: one commit per episode on the current branch's `refs/tinymem/heads/<branch>`,
written by compare-and-swap.

`commit_episode` runs an operation against the current tip and commits its result with the tip
as the first parent. libgit2 refuses the ref update when the tip moved in the meantime (another
tm process), and `git update-ref` refuses to create a ref that appeared meanwhile; then the
whole operation is run again against the new tip, so concurrent processes never lose an
episode and every change is atomic.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice, pairwise
from typing import Any

import pygit2

from tinymem import refjournal
from tinymem.branches.refs import branch_of_ref, current_branch, head_commit
from tinymem.displacing import settle
from tinymem.errors import (
    ConcurrencyError,
    CorruptStateError,
    HeadMovedError,
    NotInitializedError,
    UsageError,
)
from tinymem.gitobjects import MODE_BLOB, MODE_TREE, ObjectWriter, TreeChanges, edit_tree
from tinymem.jsontext import quoted, quoted_or_null
from tinymem.notices import emit
from tinymem.objectpacking import pack_if_needed
from tinymem.records import State
from tinymem.reflock import clear_if_stale, lock_age, ref_lock_path, swap_ref, updating
from tinymem.repository import CACHE_DIRNAME, Repo
from tinymem.statemap import EPISODE, StateView
from tinymem.trailers import message_trailer as message_trailer  # re-exported: its old home

MAX_ATTEMPTS = 50
_COMPRESS_AHEAD_MIN = 1 << 20  # bytes of episode record worth a thread to compress
EPISODE_FILE = "episode.json"


def response_attachment(number: int) -> str:
    """The attachment of an ask episode holding round `number`'s raw reply (0: the answer,
    N: the Nth repair round)."""
    return "response.txt" if number == 0 else f"response-{number}.txt"


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_episode_id() -> str:
    # Random rather than the commit id: records inside the tree name their episode, and a
    # commit cannot contain its own id.
    return secrets.token_hex(6)


@dataclass(frozen=True)
class Transition:
    entity: str
    from_state: State | None
    to_state: State
    artifact: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "entity": self.entity,
            "from": self.from_state.value if self.from_state else None,
            "to": self.to_state.value,
            "artifact": self.artifact,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Transition:
        return cls(
            entity=raw["entity"],
            from_state=State(raw["from"]) if raw.get("from") else None,
            to_state=State(raw["to"]),
            artifact=raw["artifact"],
            reason=raw.get("reason", ""),
        )


def encode_transitions(transitions: Iterable[Transition]) -> str:
    """Transitions as the items of a JSON array (no brackets), as episode records store them:
    `json.dumps([t.to_json() ...], ensure_ascii=False)[1:-1]`, written out by hand (`jsontext`)
    since a baseline records one per entity."""
    q = quoted
    return ", ".join(
        f'{{"entity": {q(t.entity)}, '
        f'"from": {quoted_or_null(t.from_state)}, '  # StrEnum members: strings themselves
        f'"to": {q(t.to_state)}, "artifact": {q(t.artifact)}, "reason": {q(t.reason)}}}'
        for t in transitions
    )


def encode_files(files: Mapping[str, Mapping[str, str | None]]) -> EncodedFiles:
    """Episode file entries as the items of a JSON object (no braces), sorted by path, as
    episode records store them; with the first and last path, so `Episode.to_bytes` can put
    the parts of several workers in order without decoding them."""
    paths = sorted(files)
    q, qn = quoted, quoted_or_null
    text = ", ".join(
        f'{q(p)}: {{"snapshot": {qn(files[p]["snapshot"])}, "meta": {qn(files[p]["meta"])}}}'
        for p in paths
    )
    return EncodedFiles(paths[0], paths[-1], text) if paths else EncodedFiles("", "", "")


@dataclass(frozen=True)
class EncodedFiles:
    first: str
    last: str
    text: str  # `encode_files`


@dataclass
class Episode:
    """What one ledger commit records; `episode/episode.json` in its tree."""

    kind: str
    summary: str
    id: str = field(default_factory=new_episode_id)
    time: str = field(default_factory=now_iso)
    who: str = ""
    outcome: str = "ok"
    branch: str = ""  # the branch whose ledger holds it
    head: str | None = None  # the git commit HEAD was at (a branch's start is chosen by it)
    # path -> {"snapshot": blob id or None (file no longer live), "meta": blob id of FileMeta}
    files: dict[str, dict[str, str | None]] = field(default_factory=dict)
    # proposal id -> blob id of its record, or None when it left the pending set
    proposals: dict[str, str | None] = field(default_factory=dict)
    transitions: list[Transition] = field(default_factory=list)
    # note id -> {"scope": "project" | "branch", "record": blob id of its JSON, or None when
    # `tm note gc` removed it for good} (`tinymem.notes.store`); stored only when not empty,
    # so the records of every other episode keep their bytes.
    notes: dict[str, dict[str, str | None]] = field(default_factory=dict)
    # More transitions, already encoded by `encode_transitions` in worker processes (`tm init`)
    # and recorded after `transitions`: decoding hundreds of thousands of them here only to
    # encode them again cost ~1 s on a 50,000-file baseline.
    encoded_transitions: list[str] = field(default_factory=list)
    # More file entries, encoded by `encode_files` in the same worker processes.
    encoded_files: list[EncodedFiles] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    # Built from the commit message alone (`episode_header`): its record was not read, so
    # files, proposals, transitions, notes and details are empty and outcome is unknown.
    header_only: bool = False

    def to_bytes(self) -> bytes:
        head = {
            "version": 1,
            "id": self.id,
            "kind": self.kind,
            "time": self.time,
            "who": self.who,
            "summary": self.summary,
            "outcome": self.outcome,
            "branch": self.branch,
            "head": self.head,
        }
        proposals = {p: self.proposals[p] for p in sorted(self.proposals)}
        items = [encode_transitions(self.transitions), *self.encoded_transitions]
        # Exactly what json.dumps of the whole record gives (its separators are ", " and ": ").
        # One join: a chain of `+` copies a baseline's ~40 MB of text once per operand.
        text = "".join(
            (
                json.dumps(head, ensure_ascii=False)[:-1],
                ', "files": {',
                self._files_text(),
                '}, "proposals": ',
                json.dumps(proposals, ensure_ascii=False),
                ', "transitions": [',
                ", ".join(i for i in items if i),
                "]",
                self._notes_text(),
                ', "details": ',
                json.dumps(self.details, ensure_ascii=False),
                "}\n",
            )
        )
        return text.encode()

    def _notes_text(self) -> str:
        if not self.notes:
            return ""
        notes = {n: self.notes[n] for n in sorted(self.notes)}
        return ', "notes": ' + json.dumps(notes, ensure_ascii=False)

    def _files_text(self) -> str:
        parts = [p for p in self.encoded_files if p.text]
        if not self.files and all(a.last < b.first for a, b in pairwise(parts)):
            return ", ".join(p.text for p in parts)  # in order already: a `tm init`
        files = dict(self.files)
        for part in parts:
            files.update(json.loads("{" + part.text + "}"))
        return json.dumps({p: files[p] for p in sorted(files)}, ensure_ascii=False)[1:-1]

    @classmethod
    def from_bytes(cls, data: bytes) -> Episode:
        try:
            raw = json.loads(data)
            return cls(
                kind=raw["kind"],
                summary=raw.get("summary", ""),
                id=raw["id"],
                time=raw["time"],
                who=raw.get("who", ""),
                outcome=raw.get("outcome", "ok"),
                branch=raw.get("branch", ""),
                head=raw.get("head"),
                files=raw.get("files", {}),
                proposals=raw.get("proposals", {}),
                transitions=[Transition.from_json(t) for t in raw.get("transitions", [])],
                notes=raw.get("notes", {}),
                details=raw.get("details", {}),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptStateError(f"unreadable episode record: {exc}") from exc


@dataclass
class Draft:
    """What an operation wants to commit: tree changes (outside episode/) and the record."""

    episode: Episode
    changes: dict[str, tuple[int, str] | None] = field(default_factory=dict)
    # Extra files stored next to episode.json (prompt, messages, reply): name -> content.
    attachments: dict[str, bytes] = field(default_factory=dict)
    # Other refs this episode moves with its ledger commit (`refs/tinymem/notes`): ref ->
    # (the id it must still hold, None: absent; its new id). Moved under the ledger lock right
    # before the ledger ref and put back when the ledger commit fails, so neither lands alone.
    refs: dict[str, tuple[str | None, str]] = field(default_factory=dict)


Operation = Callable[[StateView, ObjectWriter], "Draft | None"]


@dataclass(frozen=True)
class Committed:
    commit: str
    episode: Episode
    view: StateView


def _is_cas_failure(exc: Exception) -> bool:
    # libgit2 words the lost race differently depending on where it notices it.
    text = str(exc).lower()
    return any(
        marker in text
        for marker in (
            "current tip is not the first parent",
            "old reference value does not match",
            "lock",
            "already exists",
        )
    )


def commit_episode(
    repo: Repo,
    operation: Operation,
    *,
    start: str | None = None,
    merged: str | None = None,
    ref: str | None = None,
) -> Committed | None:
    """Run `operation` against the tip of the current branch's ledger and commit its draft;
    retry when the tip moves.

    `start`: the ledger commit a branch with no ledger yet starts from (its first parent).
    `merged`: a second parent (another ledger of the same branch, `tm merge-ledger`).
    `ref`: the ledger ref the caller read when it started (an accept, whose files were
    written for that branch): committed to only while HEAD still selects it, checked right
    before the ref moves; HeadMovedError when HEAD names another branch by then.
    Returns None when the operation had nothing to record.
    """
    pinned = ref is not None
    ref = ref or repo.state_ref  # once: a `git switch` meanwhile must not split the episode
    sig = repo.signature()
    for attempt in range(MAX_ATTEMPTS):
        tip = repo.state_tip(ref)
        base = tip if tip is not None else start
        view = StateView(repo.git, base)
        writer = ObjectWriter(repo.git)
        try:
            draft = operation(view, writer)
            if draft is None:
                writer.discard()
                return None
            writer.seal_spooled()  # while the episode record and the trees are built
            episode = draft.episode
            # Records of deleted files where a path of the other kind is made live leave the
            # State Map, named in the record (`displacing`); a live one raises.
            settle(view, episode.files, draft.changes)
            episode.who = episode.who or f"{sig.name} <{sig.email}>"
            episode.branch = branch_of_ref(ref) or ""
            # A caller may name the HEAD its episode describes (`sync.headmove`).
            episode.head = episode.head or head_commit(repo.git)
            episode_entries = [
                (name, MODE_BLOB, writer.blob(data)) for name, data in draft.attachments.items()
            ]
            record = episode.to_bytes()
            record_id = writer.blob(record)
            episode_entries.append((EPISODE_FILE, MODE_BLOB, record_id))
            changes: TreeChanges = {
                **draft.changes,
                EPISODE: (MODE_TREE, writer.tree(episode_entries)),
            }
            if len(record) < _COMPRESS_AHEAD_MIN:
                tree = edit_tree(writer, view.tree_id, changes)
            else:
                # A baseline's record is ~40 MB: compressing it overlaps building the trees.
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(max_workers=1) as ahead:
                    compressing = ahead.submit(writer.compress_ahead, record_id)
                    tree = edit_tree(writer, view.tree_id, changes)
                    compressing.result()
            writer.flush()
        except BaseException:
            writer.discard()  # pack spools that worker processes filled for this attempt
            raise
        message = episode_message(episode)
        parents = [pygit2.Oid(hex=p) for p in (base, merged) if p is not None]
        with updating(repo):
            left = refjournal.recover(repo)  # what a tm killed mid-episode left behind
            if left is not None:
                emit(left)
            if pinned:
                _still_selected(repo, ref)
            moving = tuple((n, o, w) for n, (o, w) in draft.refs.items() if o != w)
            if moving:
                refjournal.record(repo, refjournal.Moving(ref, tip, episode.id, moving))
            moved = _move_refs(repo, draft.refs, episode)
            said = None
            if moved is None:
                refjournal.clear(repo)
            else:
                try:
                    commit = _commit(repo, ref, tip, _at(sig, episode), message, tree, parents)
                except (pygit2.GitError, OSError, ValueError) as exc:
                    _put_back(repo, moved, episode)
                    refjournal.clear(repo)
                    # pygit2 maps libgit2's lock and exists errors to OSError and ValueError.
                    if not _is_cas_failure(exc):
                        raise
                    said = clear_if_stale(repo, ref)  # no tm is mid-update: we hold `updating`
                except BaseException:
                    _put_back(repo, moved, episode)
                    refjournal.clear(repo)
                    raise
                else:
                    if moving:
                        refjournal.clear(repo)
                    pack_if_needed(
                        repo.common_dir,
                        os.path.join(repo.common_dir, CACHE_DIRNAME),
                        repo.git.config,
                    )
                    return Committed(commit, episode, StateView(repo.git, commit))
        if said is not None:
            emit(said)
            continue
        # Another process won the race: back off a little and redo the work on its tip.
        time.sleep(random.uniform(0.005, 0.05) * min(attempt + 1, 10))
    age = lock_age(repo, ref)
    if age is not None:
        raise ConcurrencyError(
            f"{ref_lock_path(repo, ref)} exists ({age:.0f} s old): a git process holds {ref};"
            " if none is running, remove that file and try again"
        )
    raise ConcurrencyError(
        f"{ref} kept moving under {MAX_ATTEMPTS} attempts; another tm process is busy, try again"
    )


def _move_refs(
    repo: Repo, refs: Mapping[str, tuple[str | None, str]], episode: Episode
) -> list[tuple[str, str | None, str]] | None:
    """Move each of a draft's other refs by compare-and-swap; None (and every one moved put
    back) when one no longer held the id the operation read: the operation is redone."""
    moved: list[tuple[str, str | None, str]] = []
    for name, (old, new) in refs.items():
        if old == new:
            continue
        if not swap_ref(repo, name, new, old, f"{episode.kind} {episode.id}"):
            _put_back(repo, moved, episode)
            return None
        moved.append((name, old, new))
    return moved


def _put_back(repo: Repo, moved: list[tuple[str, str | None, str]], episode: Episode) -> None:
    for name, old, new in reversed(moved):
        swap_ref(repo, name, old, new, f"{episode.kind} {episode.id} not recorded")


def _still_selected(repo: Repo, ref: str) -> None:
    """Refuse when HEAD no longer selects `ref`: the work tree is another branch's now, and
    an episode about it belongs in neither ledger."""
    now = current_branch(repo.git)
    started = branch_of_ref(ref) or ref
    if now != started:
        raise HeadMovedError(started, now)


def episode_message(episode: Episode) -> str:
    """The ledger commit's message; its trailers let `git log` (and a branch's start) read
    the episode, branch and HEAD without opening the record."""
    trailers = [f"Tinymem-Episode: {episode.id}"]
    if episode.branch:
        trailers.append(f"Tinymem-Branch: {episode.branch}")
    if episode.head:
        trailers.append(f"Tinymem-Head: {episode.head}")
    return f"tm {episode.kind}: {episode.summary}\n\n" + "".join(t + "\n" for t in trailers)


def _at(sig: pygit2.Signature, episode: Episode) -> pygit2.Signature:
    """The author at the episode's own time, so that the commit (what `episode_header` and
    `git log` read) and the record give the same second: the signature is taken before the
    operation runs, the episode's time while it runs."""
    try:
        when = datetime.strptime(episode.time[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return sig
    return pygit2.Signature(sig.name, sig.email, int(when.timestamp()), sig.offset)


class _RefExists(ValueError):
    """`git update-ref` refused to create the ref: another process created it first."""

    def __str__(self) -> str:
        return "already exists"


def _commit(
    repo: Repo,
    ref: str,
    tip: str | None,
    sig: pygit2.Signature,
    message: str,
    tree: str,
    parents: list[pygit2.Oid],
) -> str:
    if tip is not None:
        # libgit2 moves the ref only if it still points at the first parent.
        oid = repo.git.create_commit(ref, sig, sig, message, pygit2.Oid(hex=tree), parents)
        return str(oid)
    commit = str(repo.git.create_commit(None, sig, sig, message, pygit2.Oid(hex=tree), parents))
    if not swap_ref(repo, ref, commit, None, "new ledger"):
        raise _RefExists()
    return commit


def current(repo: Repo) -> StateView:
    """The State Map at the tip of the current branch's ledger; NotInitializedError when it
    has none. A command brings it up to HEAD first (`sync.bring_up_to_head`: a branch's first
    use starts its ledger there), never this read."""
    tip = repo.state_tip()
    if tip is None:
        raise NotInitializedError(f"tm is not initialized in {repo.workdir}; run `tm init` first")
    return StateView(repo.git, tip)


def view_at(repo: Repo, commit: str | None) -> StateView:
    """The State Map at a ledger commit read earlier (by `git rev-parse`, say); the tip when
    that is None."""
    return current(repo) if commit is None else StateView(repo.git, commit)


def read_episode(repo: pygit2.Repository, commit_id: str) -> Episode:
    data = StateView(repo, commit_id).episode_blob(EPISODE_FILE)
    if data is None:
        raise CorruptStateError(f"ledger commit {commit_id[:12]} has no episode record")
    return Episode.from_bytes(data)


_SUBJECT_PREFIX = "tm "
_EPISODE_TRAILER = "\n\nTinymem-Episode: "


def episode_header(commit: pygit2.Commit) -> Episode | None:
    """The episode of a ledger commit as its message gives it (`episode_message`): kind,
    summary, id, branch and HEAD, with who and time (to the second) from the commit; None
    when the message is not one tm writes (a ledger of an older tm: read the record)."""
    message = commit.message
    cut = message.rfind(_EPISODE_TRAILER)
    kind, colon, _ = message.partition(": ")
    name = kind[len(_SUBJECT_PREFIX) :]
    if cut < 0 or not colon or not kind.startswith(_SUBJECT_PREFIX) or " " in name:
        return None
    episode_id = message_trailer(message, "Tinymem-Episode")
    if not episode_id:
        return None
    when = datetime.fromtimestamp(commit.author.time, UTC)
    return Episode(
        kind=name,
        summary=message[len(kind) + 2 : cut],
        id=episode_id,
        time=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        who=f"{commit.author.name} <{commit.author.email}>",
        outcome="",
        branch=message_trailer(message, "Tinymem-Branch") or "",
        head=message_trailer(message, "Tinymem-Head"),
        header_only=True,
    )


def not_init(kind: str) -> bool:
    """For `history(read=...)`: every record but an `init`'s, which holds the whole baseline
    (a transition per entity: tens of MB on a large repository) and is read for its kind."""
    return kind != "init"


def never(kind: str) -> bool:
    """For `history(read=...)`: headers only (ids, kinds, summaries)."""
    return False


def history(
    repo: Repo,
    newest_first: bool = True,
    *,
    tips: Sequence[str] = (),
    first_parent: bool = True,
    read: Callable[[str], bool] | None = None,
) -> Iterator[tuple[str, Episode]]:
    """(commit id, episode) along the ledger at `tips` (default: the current branch's). The
    first-parent chain of one tip is a branch's own sequence of State Maps; with
    `first_parent` False the episodes a ledger merge brought in are listed too, and several
    tips are walked together (each commit once); both newest first by time.
    `read`: given an episode's kind (from its commit message), whether its record is read;
    the others come as `episode_header` gives them (default: every record is read)."""
    current_tip = None if tips else repo.state_tip()
    starts = list(tips) if tips else [current_tip] if current_tip is not None else []
    if not starts:
        return
    if first_parent and newest_first and len(starts) == 1:
        # One branch's own sequence, newest first: parent after parent. A sorted walk reads
        # the whole ledger before its first commit (640 episodes: ~30 ms for a prompt's six
        # recent ones), and a ledger only grows.
        commits = _first_parents(repo.git, starts[0])
    else:
        commits = _walk(repo.git, starts, newest_first=newest_first, first_parent=first_parent)
    for commit in commits:
        header = episode_header(commit) if read is not None else None
        if header is not None and read is not None and not read(header.kind):
            yield str(commit.id), header
        else:
            yield str(commit.id), read_episode(repo.git, str(commit.id))


def _first_parents(git: pygit2.Repository, tip: str) -> Iterator[pygit2.Commit]:
    commit = git[tip]
    while True:
        assert isinstance(commit, pygit2.Commit)
        yield commit
        if not commit.parent_ids:
            return
        commit = git[commit.parent_ids[0]]


def _walk(
    git: pygit2.Repository, starts: Sequence[str], *, newest_first: bool, first_parent: bool
) -> Iterator[pygit2.Commit]:
    order = pygit2.enums.SortMode.TOPOLOGICAL
    if not first_parent or len(starts) > 1:
        order |= pygit2.enums.SortMode.TIME
    if not newest_first:
        order |= pygit2.enums.SortMode.REVERSE
    walker = git.walk(pygit2.Oid(hex=starts[0]), order)
    for other in starts[1:]:
        walker.push(pygit2.Oid(hex=other))
    if first_parent and len(starts) == 1:
        walker.simplify_first_parent()
    yield from walker


def recent(repo: Repo, count: int) -> list[tuple[str, Episode]]:
    """The newest `count` episodes of the current branch, as a prompt's recent window and
    relevance read them: an `init` by its header (`not_init`)."""
    return list(islice(history(repo, read=not_init), count))


def resolve_episode(repo: Repo, ref: str) -> str:
    """A ledger commit id from a commit-id prefix or an episode id (as `tm log` prints them)."""
    ref = ref.strip().lower()
    if not ref:
        raise UsageError("an empty episode id was given")
    current(repo)  # a branch's first use starts its ledger, and "not initialized" is said
    matches = [
        cid
        for cid, ep in history(repo, first_parent=False, read=never)
        if cid.startswith(ref) or ep.id.startswith(ref)
    ]
    if not matches:
        raise UsageError(f"no episode matches {ref!r}; `tm log` lists them")
    if len(set(matches)) > 1:
        raise UsageError(f"{ref!r} is ambiguous: it matches {len(matches)} episodes")
    return matches[0]
