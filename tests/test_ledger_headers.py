"""Episodes read from their commit message: a prompt never parses the `init` record (#29).

An init's record holds a transition per entity of the baseline (tens of MB on a large
repository) and every prompt read it for its kind alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from tests.conftest import PY_APP, Initialise, git, tm, tm_ask
from tests.modelserver import ModelServer
from tinymem.ask import AskOptions, prepare
from tinymem.askcontinue import previous_conversation
from tinymem.commands.completers import episodes
from tinymem.errors import UsageError
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import (
    Draft,
    Episode,
    commit_episode,
    episode_header,
    history,
    read_episode,
    recent,
)
from tinymem.repository import open_repo
from tinymem.statemap import StateView


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The kinds of the episode records parsed while the test runs."""
    kinds: list[str] = []
    original = Episode.from_bytes

    def spy(cls: type[Episode], data: bytes) -> Episode:
        episode = original(data)
        kinds.append(episode.kind)
        return episode

    monkeypatch.setattr(Episode, "from_bytes", classmethod(spy))
    yield kinds


APP = {"app.py": PY_APP}


def test_a_prompt_never_parses_the_init_record(
    repo: Path, initialised: Initialise, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    initialised(APP, message="first")
    prep = prepare(open_repo(str(repo)), AskOptions(prompt="fix Client.get"))
    assert prep.hydration.hydrated
    assert "init" not in parsed
    with pytest.raises(UsageError):
        previous_conversation(open_repo(str(repo)))  # `tm ask -c`: no ask yet
    assert "init" not in parsed
    monkeypatch.chdir(repo)  # completion opens the repository it runs in
    (listed,) = episodes("")
    assert listed[1].startswith("init: imported 1 tracked file")
    assert parsed == []


def test_records_past_init_are_read_as_before(
    repo: Path, initialised: Initialise, server: ModelServer, parsed: list[str]
) -> None:
    initialised(APP, message="first")
    server.add("```python path=app.py\ndef fetch_user(uid):\n    return {'id': uid}\n```\n")
    assert tm_ask(repo, server, "quote fetch_user", "--json").returncode == 0
    assert tm(repo, "note", "add", "fact", "ids are ints").returncode == 0
    del parsed[:]
    got = recent(open_repo(str(repo)), 6)
    assert [ep.kind for _, ep in got] == ["note", "ask", "init"]
    assert parsed == ["note", "ask"]
    assert [ep.header_only for _, ep in got] == [False, False, True]
    assert got[1][1].transitions  # the ask's proposal, read from its record


def test_a_header_is_what_the_record_says(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(APP, message="first")
    server.add("A reply\n\nwith no code.\n")
    assert tm_ask(repo, server, "explain\n\nfetch_user: why?").returncode == 0
    assert tm(repo, "note", "add", "gotcha", "tm: colons and\n\nblank lines").returncode == 0
    store = open_repo(str(repo))
    kinds = []
    for cid, full in history(store):
        commit = store.git.get(cid)
        assert isinstance(commit, pygit2.Commit)
        header = episode_header(commit)
        assert header is not None and header.header_only
        kinds.append(header.kind)
        for name in ("kind", "summary", "id", "who", "branch", "head"):
            assert getattr(header, name) == getattr(full, name), name
        assert header.time[:19] == full.time[:19]
        assert not header.transitions and not header.files and not header.details
    assert kinds == ["note", "ask", "init"]


def test_a_message_tm_did_not_write_is_read_from_the_record(
    repo: Path, initialised: Initialise
) -> None:
    initialised(APP, message="first")
    store = open_repo(str(repo))
    tip = store.state_tip()
    assert tip is not None
    commit = store.git.get(tip)
    assert isinstance(commit, pygit2.Commit)
    sig = pygit2.Signature("Old Tm", "old@example.com")
    # An older ledger: the same tree, a message without trailers.
    old = store.git.create_commit(None, sig, sig, "init\n", commit.tree_id, [])
    older = store.git.get(old)
    assert isinstance(older, pygit2.Commit)
    assert episode_header(older) is None
    store.git.references.create(store.state_ref, old, force=True)
    ((cid, ep),) = recent(store, 6)
    assert cid == str(old) and not ep.header_only
    assert ep.id == read_episode(store.git, str(old)).id
    assert json.loads(git(repo, "show", f"{old}:episode/episode.json"))["kind"] == "init"


def test_the_commit_carries_the_second_the_record_gives(
    repo: Path, initialised: Initialise
) -> None:
    """The author signature is taken before the operation runs and the episode's time while
    it runs: across a second's boundary `tm log` (headers) and `tm show` (records) differed."""
    initialised(APP, message="first")
    store = open_repo(str(repo))

    def operation(view: StateView, writer: ObjectWriter) -> Draft:
        episode = Episode(kind="adopt", summary="at a given time")
        episode.time = "2021-03-04T05:06:07.999999Z"
        return Draft(episode=episode, changes={})

    committed = commit_episode(store, operation)
    assert committed is not None
    commit = store.git.get(committed.commit)
    assert isinstance(commit, pygit2.Commit)
    header = episode_header(commit)
    assert header is not None and header.time == "2021-03-04T05:06:07Z"
