"""A proposal record a newer tm wrote, with keys this one does not know: read by every
command, written back whole by a rejection, never accepted here (its rules are not ours)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import PY_APP, Initialise, git, tm, tm_ask
from tests.modelserver import ModelServer
from tinymem.gitobjects import MODE_TREE, ObjectWriter
from tinymem.ledger import Draft, Episode, commit_episode
from tinymem.proposalrecords import Proposal, ProposedEntity, pending, store
from tinymem.repository import open_repo
from tinymem.statemap import PROPOSALS, StateView

NEW_FETCH = 'def fetch_user(uid, retries=3):\n    return {"id": uid}'
REPLY = f"Sure:\n\n```python path=app.py\n{NEW_FETCH}\n```\n"


def _record() -> Proposal:
    return Proposal(
        id="p1",
        episode="e1",
        path="a.py",
        kind="symbols",
        confidence="CONFIRMED",
        reason=None,
        entities=[ProposedEntity("f", "modify", "a" * 40, "b" * 40)],
        block="c" * 40,
        file_base="d" * 40,
    )


KEY = st.text("abcdefghij_", min_size=1, max_size=12)
VALUE = st.one_of(st.none(), st.integers(), st.text(max_size=8), st.lists(st.integers()))


@given(st.dictionaries(KEY, VALUE, max_size=3), st.dictionaries(KEY, VALUE, max_size=3))
def test_keys_this_tm_does_not_know_are_written_back_as_they_were(
    top: dict[str, object], inner: dict[str, object]
) -> None:
    raw = json.loads(_record().to_bytes())
    known_top, known_inner = set(raw), set(raw["entities"][0])
    top = {k: v for k, v in top.items() if k not in known_top}
    inner = {k: v for k, v in inner.items() if k not in known_inner}
    raw.update(top)
    raw["entities"][0].update(inner)
    p = Proposal.from_bytes(json.dumps(raw).encode())
    assert p.newer == top and p.entities[0].newer == inner
    assert p.newer_keys == sorted({*top, *(f"entities.{k}" for k in inner)})
    assert json.loads(p.to_bytes()) == raw


def test_a_record_this_tm_wrote_has_no_newer_keys() -> None:
    p = _record()
    assert Proposal.from_bytes(p.to_bytes()) == p
    assert p.newer_keys == []
    assert b"newer" not in p.to_bytes()


def _as_a_newer_tm_wrote_it(repo: Path, pid: str) -> None:
    """The pending proposal `pid` given a key this tm does not know, in a ledger episode of
    its own, as a newer tm sharing the ledger would have recorded it."""
    r = open_repo(str(repo))

    def operation(view: StateView, writer: ObjectWriter) -> Draft:
        p = pending(view)[pid]
        p.newer = {"apply_rule": {"version": 2}}
        episode = Episode(kind="reject", summary="a newer tm's record")
        oid = store(writer, p)
        episode.proposals[pid] = oid
        return Draft(episode=episode, changes={f"{PROPOSALS}/{pid}": (MODE_TREE, oid)})

    assert commit_episode(r, operation) is not None


def test_a_newer_tms_proposal_is_listed_and_rejected_but_never_accepted(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"app.py": PY_APP})
    server.add(REPLY)
    asked = tm_ask(repo, server, "change fetch_user", "--json")
    assert asked.returncode == 0, asked.stderr
    pid = json.loads(asked.stdout)["proposals"][0]["id"]
    _as_a_newer_tm_wrote_it(repo, pid)

    shown = tm(repo, "diff", pid)  # what accept would do: nothing, and why
    assert shown.returncode == 0, shown.stderr
    assert "blocked A: recorded by a newer tm" in shown.stdout
    listed = json.loads(tm(repo, "status", "--json").stdout)
    assert pid in json.dumps(listed)
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "recorded by a newer tm" in proc.stderr and "apply_rule" in proc.stderr
    assert (repo / "app.py").read_text() == PY_APP  # nothing written
    assert tm(repo, "status", "--check").returncode == 0

    assert tm(repo, "reject", pid).returncode == 0
    record = git(repo, "show", f"refs/tinymem/heads/main:{PROPOSALS}/{pid}/proposal.json")
    doc = json.loads(record)
    assert doc["status"] == "rejected"
    assert doc["apply_rule"] == {"version": 2}  # the newer tm still finds what it wrote
