"""`tm status`'s pending proposals: read from git's listing of `proposals/` and a cache keyed
by entry ids, so a status does not read every proposal record again (34.8 s at 10,000); the
answer is always the one reading every record gives."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

import tinymem.pendingids as pendingids
import tinymem.statemap as statemap
from tests.conftest import Initialise, tm
from tinymem.gitobjects import MODE_TREE, ObjectWriter
from tinymem.ledger import Draft, Episode, commit_episode, current
from tinymem.proposalrecords import Proposal, ProposedEntity, pending, store
from tinymem.repository import Repo, open_repo
from tinymem.statemap import PROPOSALS, StateView


def _record(repo: Repo, statuses: dict[str, str]) -> None:
    """Proposals stored as `tm ask` stores them (or re-stored with a new status, as
    `tm reject` does), in one ledger commit."""

    def operation(view: StateView, writer: ObjectWriter) -> Draft:
        episode = Episode(kind="ask", summary="generated")
        changes: dict[str, tuple[int, str] | None] = {}
        for pid, status in statuses.items():
            text = f"def a():\n    return {pid!r}\n".encode()
            p = Proposal(
                id=pid,
                episode=episode.id,
                path="a.py",
                kind="symbols",
                confidence="CONFIRMED",
                reason=None,
                entities=[ProposedEntity("a", "modify", writer.blob(text), None)],
                block=writer.blob(text),
                file_base=None,
                status=status,
            )
            changes[f"{PROPOSALS}/{pid}"] = (MODE_TREE, store(writer, p))
        return Draft(episode=episode, changes=changes)

    commit_episode(repo, operation)


@pytest.fixture
def opened(initialised: Initialise) -> Repo:
    return open_repo(str(initialised({"a.py": "def a():\n    return 1\n"}, commit=False)))


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The proposal records pendingids reads (a spy on its one reader, not a mock)."""
    reads: list[str] = []
    real = pendingids._is_pending

    def counted(git: object, oid: str) -> bool:
        reads.append(oid)
        return real(git, oid)  # type: ignore[arg-type]

    monkeypatch.setattr(pendingids, "_is_pending", counted)
    return reads


def test_records_are_read_once_and_the_answer_is_pendings(
    opened: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = opened
    reads = _reads(monkeypatch)
    ids = {f"{n:06x}": "pending" if n % 3 else "rejected" for n in range(60)}
    _record(repo, ids)
    want = sorted(pending(current(repo)))
    assert len(want) == 40
    assert pendingids.pending_ids(repo, current(repo)) == want
    assert len(reads) == 60
    # Unchanged proposals/: answered without reading a record.
    assert pendingids.pending_ids(repo, current(repo)) == want
    assert len(reads) == 60
    # Two new ones and one rejected since: only those three are read.
    new = {secrets.token_hex(3): "pending", secrets.token_hex(3): "pending"}
    _record(repo, {**new, want[0]: "rejected"})
    want = sorted(pending(current(repo)))
    assert pendingids.pending_ids(repo, current(repo)) == want
    assert len(reads) == 63
    assert set(new) <= set(want) and "000001" not in want
    # The cache is derived: garbage or nothing in its place is an empty one.
    cache = Path(repo.cache_dir) / "pending"
    cache.write_bytes(b"not marshal")
    assert pendingids.pending_ids(repo, current(repo)) == want
    cache.unlink()
    assert pendingids.pending_ids(repo, current(repo)) == want
    assert len(reads) == 63 + 2 * 62
    # What tm status prints is the same list.
    doc = json.loads(tm(Path(repo.workdir), "status", "--json").stdout)
    assert doc["pending_proposals"] == want


def test_a_state_view_parses_a_large_subtree_once(
    opened: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # libgit2 caches no tree over 4 KiB: each lookup in proposals/ parsed it again, so
    # reading every proposal was quadratic in their number.
    repo = opened
    _record(repo, {f"{n:06x}": "pending" for n in range(200)})
    parsed: list[str] = []
    real = statemap.read_tree

    def counted(git: object, oid: str) -> object:
        parsed.append(oid)
        return real(git, oid)  # type: ignore[arg-type]

    monkeypatch.setattr(statemap, "read_tree", counted)
    assert len(pending(current(repo))) == 200
    assert len(parsed) <= 3, len(parsed)  # the root, proposals/ listed, proposals/ looked in
