"""`tm rebuild`'s proof of the project notes: `refs/tinymem/notes` re-derived from the episodes.

Every move of the ref is made by one ledger episode, in the same locked step as its ledger
commit (`notes.store`): a note write commits on the chain with `Tinymem-Episode: <id>` in its
message and the episode names each note's new blob; `tm note merge` either commits a merge
(first parent: ours) or fast-forwards to the other clone's commit, and its episode records
`ours`, `theirs` and every note that differs from ours. So, walking back from the tip, each
position of the ref has an episode of some branch's ledger that put it there and the position
it came from. Folding those episodes' project-note records from nothing, oldest first, must give
each position's tree exactly; the tip's is what `tm note` reads. A commit no episode explains
(one made by hand, or notes fetched into place by git without `tm note merge`) is a difference,
and so is every note whose stored record the fold does not give. Nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pygit2

from tinymem.branches.refs import LEGACY_REF, ledger_refs
from tinymem.errors import CorruptStateError
from tinymem.ledger import Episode, message_trailer, read_episode
from tinymem.notes.store import NOTE_EPISODE, NOTES_REF, notes_tip
from tinymem.repository import Repo

_FAST_FORWARD = "fast-forward"


@dataclass
class NotesProof:
    tip: str | None  # the ref's commit (None: no project note was ever written)
    episodes: int = 0  # the episodes that moved the ref, folded
    proven: str | None = None  # the newest position of the ref the fold reproduces
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences


def prove_project_notes(repo: Repo) -> NotesProof:
    """Re-derive `refs/tinymem/notes` from the episodes of every local ledger and compare."""
    git = repo.git
    tip = notes_tip(repo)
    proof = NotesProof(tip=tip)
    if tip is None:
        return proof
    chain = _chain(git, tip)
    wanted = {eid for _, eid in chain if eid is not None}
    by_id, fast_forwards = _episodes(git, wanted)
    # (position, the episode that put the ref there), newest first: a route back from the
    # tip where every move has its episode, else the first-parent walk with the gaps.
    route = _route(git, tip, by_id, fast_forwards)
    steps: list[tuple[str, Episode | None]] = (
        list(route) if route is not None else _walk(git, tip, by_id, fast_forwards)
    )
    folded: dict[str, str] = {}
    for pos, episode in reversed(steps):
        if episode is None:
            proof.differences.append(
                f"{NOTES_REF} commit {pos[:12]} was written by no episode of any ledger (a"
                " commit made by hand, or notes fetched into place without `tm note merge`)"
            )
            continue
        proof.episodes += 1
        for nid, entry in sorted(episode.notes.items()):
            if entry.get("scope") != "project":
                continue
            record = entry.get("record")
            if record is None:
                folded.pop(f"{nid}.json", None)
            else:
                folded[f"{nid}.json"] = record
        if folded == _entries(git, pos):
            proof.proven = pos
    stored = _entries(git, tip)
    for name in sorted(stored.keys() | folded.keys()):
        if stored.get(name) != folded.get(name):
            proof.differences.append(
                f"{NOTES_REF}: {name}: stored {(stored.get(name) or 'nothing')[:12]},"
                f" the episodes give {(folded.get(name) or 'nothing')[:12]}"
            )
    if proof.differences and proof.proven not in (None, tip):
        assert proof.proven is not None
        proof.differences.append(
            f"{NOTES_REF}: the newest commit the episodes prove is {proof.proven[:12]}"
            f" (`git update-ref {NOTES_REF} {proof.proven}` moves the ref back to it)"
        )
    return proof


Moves = dict[str, list[Episode]]


def _moves(
    git: pygit2.Repository, pos: str, by_id: dict[str, Episode], fast_forwards: Moves
) -> list[tuple[Episode, str | None]]:
    """Each way the ref can have come to `pos`: (the episode, where the ref was before): the
    episode its commit names (from its first parent), and any `tm note merge` that
    fast-forwarded to it (from its `ours`)."""
    commit = _commit(git, pos)
    out: list[tuple[Episode, str | None]] = []
    eid = message_trailer(commit.message, "Tinymem-Episode")
    own = by_id.get(eid) if eid is not None else None
    if own is not None:
        out.append((own, str(commit.parent_ids[0]) if commit.parent_ids else None))
    for ff in fast_forwards.get(pos, []):
        ours = ff.details.get("ours")
        out.append((ff, ours if isinstance(ours, str) else None))
    return out


def _route(
    git: pygit2.Repository, tip: str, by_id: dict[str, Episode], fast_forwards: Moves
) -> list[tuple[str, Episode]] | None:
    """A way back from `tip` to the ref's creation in which every move has its episode,
    newest first; None when there is none. Two can exist (a clone's fast-forward to a
    commit that ours also wrote, brought in by `tm merge-ledger`), and only one may be
    complete here (the other through episodes of a ledger this clone never fetched)."""
    came: dict[str, tuple[str, Episode]] = {}  # position -> (the next position, that move)
    stack, seen = [tip], {tip}
    while stack:
        pos = stack.pop()
        for episode, before in reversed(_moves(git, pos, by_id, fast_forwards)):
            if before is None:
                path = [(pos, episode)]
                while pos != tip:
                    pos, move = came[pos]
                    path.append((pos, move))
                path.reverse()
                return path
            if before not in seen:
                seen.add(before)
                came[before] = (pos, episode)
                stack.append(before)
    return None


def _walk(
    git: pygit2.Repository, tip: str, by_id: dict[str, Episode], fast_forwards: Moves
) -> list[tuple[str, Episode | None]]:
    """The first-parent walk back from `tip`, a move's episode where one is known (None: a
    commit no episode wrote), newest first: what `_route` could not complete, to report."""
    steps: list[tuple[str, Episode | None]] = []
    pos: str | None = tip
    seen: set[str] = set()
    while pos is not None and pos not in seen:
        seen.add(pos)
        moves = _moves(git, pos, by_id, fast_forwards)
        if moves:
            steps.append((pos, moves[0][0]))
            pos = moves[0][1]
            continue
        steps.append((pos, None))
        parents = _commit(git, pos).parent_ids
        pos = str(parents[0]) if parents else None
    return steps


def _commit(git: pygit2.Repository, oid: str) -> pygit2.Commit:
    try:
        obj = git[oid]
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise CorruptStateError(f"{NOTES_REF}: commit {oid[:12]} is missing ({exc})") from exc
    if not isinstance(obj, pygit2.Commit):
        raise CorruptStateError(f"{NOTES_REF}: {oid[:12]} is not a commit")
    return obj


def _chain(git: pygit2.Repository, tip: str) -> list[tuple[str, str | None]]:
    """(commit, the episode its message names) of every commit the notes tip reaches."""
    out = []
    for commit in git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL):
        out.append((str(commit.id), message_trailer(commit.message, "Tinymem-Episode")))
    return out


def _episodes(git: pygit2.Repository, wanted: Iterable[str]) -> tuple[dict[str, Episode], Moves]:
    """Of every ledger's commits (all branches, merged-in ones too): the episodes `wanted`
    names, and the notes fast-forwards by the commit they moved the ref to. Only those
    records are read: a ledger commit's message names its episode and kind."""
    wanted = set(wanted)
    tips = list(ledger_refs(git).values())
    legacy = git.references.get(LEGACY_REF)
    if legacy is not None and legacy.type == pygit2.enums.ReferenceType.DIRECT:
        tips.append(str(legacy.target))
    by_id: dict[str, Episode] = {}
    fast_forwards: Moves = {}
    if not tips:
        return by_id, fast_forwards
    walker = git.walk(pygit2.Oid(hex=tips[0]), pygit2.enums.SortMode.TOPOLOGICAL)
    for other in tips[1:]:
        walker.push(pygit2.Oid(hex=other))
    for commit in walker:
        eid = message_trailer(commit.message, "Tinymem-Episode")
        is_note = commit.message.startswith(f"tm {NOTE_EPISODE}:")
        if eid not in wanted and not is_note:
            continue
        episode = read_episode(git, str(commit.id))
        if episode.id in wanted:
            by_id.setdefault(episode.id, episode)
        theirs = episode.details.get("theirs")
        if episode.details.get("outcome") == _FAST_FORWARD and isinstance(theirs, str):
            fast_forwards.setdefault(theirs, []).append(episode)
    return by_id, fast_forwards


def _entries(git: pygit2.Repository, commit: str) -> dict[str, str]:
    """name -> blob id of a notes commit's tree."""
    return {
        entry.name or "": str(entry.id)
        for entry in _commit(git, commit).tree
        if entry.filemode != pygit2.enums.FileMode.TREE
    }


__all__ = ["NotesProof", "prove_project_notes"]
