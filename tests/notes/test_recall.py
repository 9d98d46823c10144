"""Recall: which notes a prompt shows (PROJECT MEMORY), inside their share of the budget."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import git, tm, write
from tinymem.hydration.hydrate import estimate_tokens
from tinymem.hydration.memory import FOOTER, HEADER, Mark, Recall, note_words, recall, render
from tinymem.notes.model import Anchor, Note
from tinymem.notes.store import add_note
from tinymem.repository import open_repo


def _note(nid: str, kind: str, text: str, *on: str, deleted: str | None = None) -> Note:
    return Note(
        id=nid,
        kind=kind,
        text=text,
        anchors=tuple(Anchor(t, "0" * 40) for t in on),
        key=None,
        scope="project",
        created="2026-01-01T00:00:00Z",
        updated="2026-01-01T00:00:00Z",
        deleted=deleted,
        source="user",
        episode="e",
    )


NOTES = [
    _note("c1", "constraint", "Never log request bodies."),
    _note("d1", "decision", "Redirects keep the method on 307.", "src/sessions.py::resolve"),
    _note("g1", "gotcha", "Cookie jars are shared between threads.", "src/cookies.py"),
    _note("t1", "tried", "A regex for hosts failed on IPv6.", "src/utils.py::parse_host"),
    _note("f1", "fact", "The proxy environment variables are read once per session."),
    _note("x1", "constraint", "gone", deleted="2026-01-02T00:00:00Z"),
]


def test_constraints_always_and_deleted_never() -> None:
    mem = recall(NOTES, {}, [], "rename a variable", 1000)
    assert mem.shown == ("c1",)
    assert "- constraint: Never log request bodies." in mem.text
    assert mem.text.startswith("[PROJECT MEMORY")


def test_anchored_notes_follow_the_hydrated_entities() -> None:
    # The method hydrated is a member of nothing here; its file holds the gotcha's anchor.
    mem = recall(NOTES, {}, ["src/cookies.py::merge", "src/sessions.py::resolve"], "x", 1000)
    assert mem.shown == ("c1", "g1", "d1")  # constraints, then by the entities' relevance
    # A member asked about recalls a note on its container; a class asked about does not
    # recall the notes of each of its methods.
    assert "d1" in recall(NOTES, {}, ["src/sessions.py::resolve.inner"], "x", 1000).shown
    on_method = [_note("d2", "decision", "y", "a.py::Client.get")]
    assert recall(on_method, {}, ["a.py::Client"], "x", 1000).shown == ()
    assert recall(on_method, {}, ["a.py::Client.get"], "x", 1000).shown == ("d2",)
    on_class = [_note("d3", "decision", "y", "a.py::Client")]
    assert recall(on_class, {}, ["a.py::Client.get"], "x", 1000).shown == ("d3",)
    assert recall(on_class, {}, ["a.py::Clientele"], "x", 1000).shown == ()
    assert recall(on_class, {}, ["b.py::Client"], "x", 1000).shown == ()


def test_other_notes_by_the_words_of_the_request() -> None:
    mem = recall(NOTES, {}, [], "Why are proxies read only at session start?", 1000)
    assert mem.shown == ("c1", "f1")
    # An anchored decision, gotcha or tried note comes by its anchor only, never by words.
    assert "t1" not in recall(NOTES, {}, [], "a regex for hosts", 1000).shown
    # Words of an anchor count for the other kinds (identifiers split into their parts).
    fact = [_note("f2", "fact", "Ports are ints.", "src/utils.py::parse_host")]
    assert recall(fact, {}, [], "the host parser", 1000).shown == ("f2",)
    loose = [_note("d4", "decision", "Hosts are lower-cased.")]
    assert recall(loose, {}, [], "compare hosts", 1000).shown == ("d4",)
    assert note_words("parseHost parse_host proxies") == {"parse", "host", "proxy"}


def test_drift_and_deletion_are_marked() -> None:
    marks = {"d1": Mark.DRIFTED, "g1": Mark.ANCHOR_DELETED}
    mem = recall(NOTES, marks, ["src/sessions.py::resolve", "src/cookies.py"], "x", 1000)
    assert "decision on src/sessions.py::resolve [DRIFTED" in mem.text
    assert "gotcha on src/cookies.py [ANCHOR DELETED" in mem.text


def test_a_current_note_comes_before_one_written_for_code_that_changed_since() -> None:
    # The first entity's decision drifted; the second's gotcha still describes its code.
    notes = [
        _note("d1", "decision", "prepare keeps its signature for callers.", "s.py::prepare"),
        _note("g1", "gotcha", "A key mapped to None drops that key.", "s.py::merge"),
    ]
    keys = ["s.py::prepare", "s.py::merge"]
    drifted = {"d1": Mark.DRIFTED}
    assert recall(notes, {}, keys, "x", 1000).shown == ("d1", "g1")  # by relevance
    assert recall(notes, drifted, keys, "x", 1000).shown == ("g1", "d1")
    assert recall(notes, {"d1": Mark.ANCHOR_DELETED}, keys, "x", 1000).shown == ("g1", "d1")
    # A share that holds either but not both holds the current one.
    costs = [estimate_tokens(render(n, Mark.DRIFTED)) for n in notes]
    one = estimate_tokens(HEADER + FOOTER) + max(costs)
    assert recall(notes, {}, keys, "x", one).shown == ("d1",)
    assert recall(notes, drifted, keys, "x", one).shown == ("g1",)


def test_an_anchor_in_a_file_the_prompt_shows_is_written_by_its_symbol() -> None:
    keys = ["src/sessions.py::resolve", "src/cookies.py"]
    full = recall(NOTES, {}, keys, "x", 1000)
    assert "- decision on src/sessions.py::resolve: " in full.text
    # sessions.py's code is in the prompt (its fence gives the path): the symbol is enough.
    # A file's own anchor, and an anchor in a file not shown, keep their paths.
    seen = recall(NOTES, {}, keys, "x", 1000, in_view=frozenset({"src/sessions.py"}))
    assert "- decision on resolve: Redirects keep the method on 307." in seen.text
    assert "- gotcha on src/cookies.py: " in seen.text
    assert seen.shown == full.shown and seen.tokens < full.tokens
    both = recall(NOTES, {}, keys, "x", 1000, in_view=frozenset({"src/cookies.py"}))
    assert "- gotcha on src/cookies.py: " in both.text
    assert "- decision on src/sessions.py::resolve: " in both.text


def test_a_share_of_zero_shows_nothing() -> None:
    assert recall(NOTES, {}, ["src/sessions.py::resolve"], "x", 0).text == ""
    assert Recall(NOTES, {}, 0.0).cap(8000) == 0
    # With few notes, only what they need is set aside.
    assert 0 < Recall(NOTES, {}, 0.15).cap(100_000) < 200


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=30),
    cap=st.integers(min_value=0, max_value=400),
)
def test_the_block_never_exceeds_its_share(texts: list[str], cap: int) -> None:
    notes = [_note(f"n{i}", "constraint", t) for i, t in enumerate(texts)]
    mem = recall(notes, {}, [], "anything", cap)
    assert estimate_tokens(mem.text) == mem.tokens <= cap
    # Every note shown is shown whole, never cut.
    for nid in mem.shown:
        text = " ".join(notes[int(nid[1:])].text.split())
        assert text in mem.text


# --- through tm ask --dry-run -------------------------------------------------------------


def _dry(repo: Path, prompt: str, *extra: str) -> dict[str, object]:
    proc = tm(repo, "ask", "--dry-run", "--json", *extra, prompt)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def _user(doc: dict[str, object]) -> str:
    messages = doc["messages"]
    assert isinstance(messages, list)
    return str(messages[1]["content"])


def test_dry_run_shows_the_notes_ahead_of_the_code(inited: Path) -> None:
    store = open_repo(str(inited))
    c = add_note(store, "constraint", "Keep every public function synchronous.")
    d = add_note(store, "decision", "Users are dicts, not objects.", on=["app.py::fetch_user"])
    g = add_note(store, "gotcha", "post() sends the body as is.", on=["app.py::Client.post"])
    doc = _dry(inited, "make fetch_user return a name too")
    user = _user(doc)
    assert doc["notes"] == [c.id, d.id]
    assert user.index("[PROJECT MEMORY") < user.index("[CURRENT STATE")
    assert "- decision on fetch_user: Users are dicts, not objects." in user
    assert g.text not in user
    # Asked about the other method, its gotcha comes instead.
    assert _dry(inited, "Client.post should retry")["notes"] == [c.id, g.id]
    # The plain text form shows them too.
    proc = tm(inited, "ask", "--dry-run", "make fetch_user return a name too")
    assert "Users are dicts, not objects." in proc.stdout


def test_a_drifted_note_says_so_and_memory_share_zero_turns_notes_off(inited: Path) -> None:
    store = open_repo(str(inited))
    add_note(store, "decision", "Users are dicts.", on=["app.py::fetch_user"])
    text = (inited / "app.py").read_text().replace('{"id": uid}', '{"id": uid, "n": 1}')
    write(inited, "app.py", text)
    assert tm(inited, "adopt", "app.py").returncode == 0
    user = _user(_dry(inited, "fix fetch_user"))
    assert "decision on fetch_user [DRIFTED" in user
    git(inited, "config", "tinymem.memoryShare", "0")
    doc = _dry(inited, "fix fetch_user")
    assert doc["notes"] == [] and "PROJECT MEMORY" not in _user(doc)
    bad = tm(inited, "ask", "--dry-run", "x", env={"TM_MEMORY_SHARE": "2"})
    assert bad.returncode != 0 and "memoryShare must be a number from 0 to 0.5" in bad.stderr


def test_no_notes_leaves_the_prompt_as_it_was(inited: Path) -> None:
    before = _user(_dry(inited, "make fetch_user return a name too"))
    assert "PROJECT MEMORY" not in before


def test_config_refuses_a_share_out_of_range(inited: Path) -> None:
    proc = tm(inited, "config", "memoryShare", "0.9")
    assert proc.returncode != 0 and "memoryShare must be a number from 0 to 0.5" in proc.stderr
    assert tm(inited, "config", "memoryShare", "0.3").returncode == 0


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(st.text(min_size=1, max_size=200), min_size=1, max_size=20))
def test_what_is_set_aside_holds_every_note_when_the_share_allows(texts: list[str]) -> None:
    notes = [_note(f"n{i}", "constraint", t) for i, t in enumerate(texts)]
    cap = Recall(notes, {}, 0.5).cap(1_000_000)
    assert len(recall(notes, {}, [], "", cap).shown) == len(notes)


def test_what_a_request_is_about() -> None:
    from tinymem.hydration.memory import about
    from tinymem.ledger import Episode, Transition
    from tinymem.records import State

    ranked = [
        ("a.py::named", 120.0),
        ("a.py::Helper", 40.0),  # a class the named function makes
        *((f"a.py::n{i}", 30.0 - i) for i in range(7)),  # neighbours: the first five count
        ("a.py::weak", 2.0),
    ]
    assert about(ranked, frozenset({"a.py::Helper"}), []) == [
        "a.py::named",
        *(f"a.py::n{i}" for i in range(5)),
    ]
    # Changed by a recent episode is no reason by itself: its 20 points are set aside.
    ep = Episode(kind="accept", summary="")
    ep.transitions = [Transition("b.py::touched", None, State.AUTHORITATIVE, "0" * 40, "x")]
    assert about([("b.py::touched", 22.0)], frozenset(), [("c", ep)]) == ["b.py::touched"]
    assert about([("b.py::touched", 21.0), ("b.py::x", 3.0)], frozenset(), [("c", ep)]) == [
        "b.py::x"
    ]
    # Words alone: the first few, when about as strong as the best.
    assert about([("k::a", 4.0), ("k::b", 3.0), ("k::c", 1.0)], frozenset(), []) == [
        "k::a",
        "k::b",
    ]


# Helpers in files whose paths sort before the class's: ranking lists equal scores by path.
_HELPERS = {
    f"a{i}.py": f"def util{i}(x):\n    return x + {i}\n\n\ndef spare{i}(x):\n    return x - {i}\n"
    for i in range(6)
}
_MIXIN = """from a0 import util0
from a1 import util1
from a2 import util2
from a3 import util3
from a4 import util4
from a5 import util5


class Mixin:
    def follow(self, resp):
        \"\"\"Walk the chain; spare0 and spare1 are kept for later.\"\"\"
        url = util0(util1(util2(resp)))
        url = util3(util4(util5(url)))
        self.rebuild(resp)
        return url

    def rebuild(self, resp):
        return resp

    def unrelated(self, resp):
        return resp
"""


def test_a_named_methods_own_callees_are_its_neighbours_not_the_first_files_helpers(
    repo: Path,
) -> None:
    """The neighbours of `follow` all score alike; the five whose notes came were the first
    five by path (a0.py..a4.py), so the note on the method it calls on its own class was
    left out. Now: what it calls, its own class first; never a name its docstring merely
    mentions, nor a member of its class it does not call."""
    for path, text in _HELPERS.items():
        write(repo, path, text)
    write(repo, "z_mixin.py", _MIXIN)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "code")
    assert tm(repo, "init").returncode == 0
    store = open_repo(str(repo))
    rebuild = add_note(
        store, "decision", "303 turns POST into GET.", on=["z_mixin.py::Mixin.rebuild"]
    )
    spare = add_note(store, "decision", "spare0 stays.", on=["a0.py::spare0"])
    other = add_note(store, "decision", "unrelated stays.", on=["z_mixin.py::Mixin.unrelated"])
    shown = _dry(repo, "Make Mixin.follow log every hop it follows.")["notes"]
    assert isinstance(shown, list)
    assert rebuild.id in shown
    assert spare.id not in shown and other.id not in shown


def test_neighbours_are_what_the_named_function_calls_nearest_first() -> None:
    from tinymem.hydration.memory import about

    named = "z.py::C.follow"
    ranked = [
        (named, 1000.0),
        ("z.py::C", 120.0),
        *((f"a{i}.py::util{i}", 15.0) for i in range(6)),
        ("a0.py::spare0", 15.0),
        ("z.py::C.rebuild", 15.0),
        ("z.py::helper", 15.0),
    ]
    text = (
        "def follow(self):\n    '''spare0'''\n    "
        + " ".join(f"util{i}(x)" for i in range(6))
        + "\n    helper(x)\n    helper(y)\n    self.rebuild(x)\n"
    )
    keys = about(ranked, frozenset({"z.py::C"}), [], {named: text})
    # Its class's member first, then its file's (called twice), then the others in the
    # order it calls them; a name only its docstring holds is no neighbour.
    assert keys == [
        named,
        "z.py::C",
        "z.py::C.rebuild",
        "z.py::helper",
        *(f"a{i}.py::util{i}" for i in range(3)),
    ]
    # Without the named function's text (or when it calls none of them): as ranked.
    assert about(ranked, frozenset({"z.py::C"}), [])[2:7] == [f"a{i}.py::util{i}" for i in range(5)]
