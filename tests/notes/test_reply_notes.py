"""Notes from the model (NOTE lines of a reply) and `tm reject --why`."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import tm, tm_ask
from tests.modelserver import ModelServer
from tinymem.edits.notelines import note_directive
from tinymem.edits.reply import _parse
from tinymem.hydration.prompt import system_prompt
from tinymem.ledger import current, history
from tinymem.notes.store import read_notes
from tinymem.repository import open_repo


def test_note_lines() -> None:
    assert note_directive("DECISION: keep dicts") == ("decision", "keep dicts")
    assert note_directive("NOTE: gotcha: ids are strings") == ("gotcha", "ids are strings")
    assert note_directive("NOTE: remember the cache") == ("note", "remember the cache")
    assert note_directive("- **CONSTRAINT:** no network in tests") == (
        "constraint",
        "no network in tests",
    )
    assert note_directive("**TRIED**: a regex; it failed on IPv6") == (
        "tried",
        "a regex; it failed on IPv6",
    )
    # Prose that merely starts like one, or an empty one, is no note.
    assert note_directive("Note: this keeps the order") is None
    assert note_directive("DECISION:") is None
    assert note_directive("    DECISION: indented as code") is None
    assert note_directive("# NOTE: a comment") is None
    assert "DECISION:" in system_prompt() and "outside any code block" in system_prompt()


def test_lines_inside_code_blocks_are_code() -> None:
    reply = (
        "Here it is.\n\n```python path=app.py\ndef f():\n    '''\nNOTE: decision: not me\n"
        "DECISION: nor me\n'''\n    # NOTE: nor this\n    return 1\n```\n\nDECISION: me only\n"
    )
    parsed = _parse(reply)
    assert [(n.kind, n.text) for n in parsed.notes] == [("decision", "me only")]
    assert "DECISION: nor me" in parsed.blocks[0].code


def test_a_note_line_in_unfenced_code_is_not_code() -> None:
    parsed = _parse("def f():\n    return 1\n\nGOTCHA: f is called from a signal handler\n")
    assert [(n.kind, n.text) for n in parsed.notes] == [
        ("gotcha", "f is called from a signal handler")
    ]
    assert "GOTCHA" not in "".join(b.code for b in parsed.blocks)


def _notes(reply: str) -> list[tuple[str, str, int]]:
    return [(n.kind, n.text, n.line) for n in _parse(reply).notes]


def test_note_lines_of_a_reply_wrapped_in_markdown_count() -> None:
    """Small models wrap their whole answer in ```markdown: its NOTE lines are the reply's,
    while the code blocks inside stay code."""
    code = '```python path=app.py\nX = "NOTE: not me"\nDECISION: nor me\n```\n'
    # Same-length nesting (CommonMark closes the wrapper at the code's closing fence).
    same = f"```markdown\nDECISION: keep dicts\n{code}\nGOTCHA: ids are strings\n```\n"
    assert _notes(same) == [("decision", "keep dicts", 2), ("gotcha", "ids are strings", 8)]
    # A longer wrapper fence: everything inside it is the reply.
    longer = f"````markdown\nDECISION: keep dicts\n{code}\nGOTCHA: ids are strings\n````\n"
    assert _notes(longer) == [("decision", "keep dicts", 2), ("gotcha", "ids are strings", 8)]
    assert [b.raw_path for b in _parse(longer).blocks] == ["app.py"]
    # Prose only, the whole reply in the wrapper.
    prose = "```md\nNothing to change.\n\n- **CONSTRAINT:** no network in tests\n```\n"
    assert _notes(prose) == [("constraint", "no network in tests", 4)]
    # Its DELETE lines are the reply's too (still needing --allow-delete to be accepted).
    assert [d.target for d in _parse(f"````md\n{code}DELETE: app.py::g\n````\n").deletes] == [
        "app.py::g"
    ]


def test_a_markdown_block_of_a_file_is_content_not_notes() -> None:
    """Markdown that is a file's text (named, or one block among prose) keeps its lines."""
    body = "# Setup\n\nNOTE: run make first\n"
    named = [
        f"```markdown path=README.md\n{body}```\n",
        f"### README.md\n\n```markdown\n{body}```\n",
        f"Add this section:\n\n```markdown\n{body}```\n\nThat is all.\n",
    ]
    for reply in named:
        parsed = _parse(reply)
        assert parsed.notes == (), reply
        assert "NOTE: run make first" in parsed.blocks[0].code


def test_a_wrapped_reply_gives_note_proposals(inited: Path, server: ModelServer) -> None:
    doc = _ask(inited, server, f"````markdown\nHere it is:\n\n{REPLY}````\n")
    props = doc["proposals"]
    assert isinstance(props, list)
    assert sorted(p["kind"] for p in props) == ["note", "note", "symbols"]
    notes = [p["note"] for p in props if p["kind"] == "note"]
    assert [n["kind"] for n in notes] == ["decision", "gotcha"]
    assert notes[0]["anchors"] == ["app.py::fetch_user"]


_LINE = st.one_of(
    st.sampled_from(
        [
            "NOTE: decision: x",
            "DECISION: y",
            "- CONSTRAINT: z",
            "**GOTCHA:** w",
            "TRIED: v",
            "def f():",
            "    return 1",
            "",
            "```",
        ]
    ),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
        max_size=30,
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    before=st.lists(_LINE, max_size=5),
    inside=st.lists(_LINE.filter(lambda s: "`" not in s and "~" not in s), max_size=8),
    after=st.lists(_LINE.filter(lambda s: "`" not in s and "~" not in s), max_size=5),
)
def test_no_line_of_a_code_block_ever_becomes_a_note(
    before: list[str], inside: list[str], after: list[str]
) -> None:
    """Whatever comes before, the body of the last fence (closed, with no fence after it) is
    code: none of its lines is a note, and every note is a line outside it."""
    head = [line for line in before if "`" not in line and "~" not in line]
    lines = [*head, "```python", *inside, "```", *after]
    parsed = _parse("\n".join(lines) + "\n")
    start = len(head) + 1  # the opening fence's 1-based line
    end = start + len(inside) + 1  # the closing fence's
    for n in parsed.notes:
        assert not start <= n.line <= end
        assert note_directive(lines[n.line - 1]) == (n.kind, n.text)


REPLY = (
    '```python path=app.py\ndef fetch_user(uid):\n    return {"id": uid, "name": None}\n```\n\n'
    "DECISION: fetch_user returns a dict with a name key, None when unknown\n"
    "GOTCHA: callers compare the result with ==\n"
)


def _ask(repo: Path, server: ModelServer, reply: str, *extra: str) -> dict[str, object]:
    server.add(reply)
    proc = tm_ask(repo, server, "make fetch_user return a name", "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def test_notes_from_a_reply_accepted_and_rejected(inited: Path, server: ModelServer) -> None:
    doc = _ask(inited, server, REPLY)
    props = doc["proposals"]
    assert isinstance(props, list)
    code = [p for p in props if p["kind"] != "note"]
    notes = [p for p in props if p["kind"] == "note"]
    assert len(code) == 1 and len(notes) == 2
    assert notes[0]["note"]["kind"] == "decision"
    assert notes[0]["note"]["anchors"] == ["app.py::fetch_user"]
    assert notes[0]["note"]["source"] == "model:openai/test"
    store = open_repo(str(inited))
    assert read_notes(store) == []  # nothing is remembered before the user's word
    # tm diff shows what accepting would remember.
    shown = tm(inited, "diff", notes[0]["id"])
    assert "remember decision: fetch_user returns a dict" in shown.stdout
    assert "anchored to app.py::fetch_user" in shown.stdout
    assert f"proposal {notes[0]['id']}  (note)\n" in shown.stdout
    # Accepting the code and the decision: one episode, the note anchored to the new text.
    acc = tm(inited, "accept", code[0]["id"], notes[0]["id"], "--json")
    assert acc.returncode == 0, acc.stderr
    episode = json.loads(acc.stdout)["episode"]
    [note] = read_notes(store)
    assert (note.kind, note.source, note.episode) == ("decision", "model:openai/test", episode)
    view = current(store)
    meta = view.meta("app.py")
    assert meta is not None
    assert note.anchors[0].artifact == meta.entities["fetch_user"].artifact  # not drifted
    kinds = [ep.kind for _, ep in history(store)]
    assert kinds[:2] == ["accept", "ask"]  # no second episode for the note
    # The gotcha rejected: never remembered, and no longer pending.
    rej = tm(inited, "reject", notes[1]["id"])
    assert rej.returncode == 0, rej.stderr
    assert [n.kind for n in read_notes(store)] == ["decision"]
    assert tm(inited, "diff", "--json").stdout.count('"id"') == 0
    # The replay proof holds with a note written by an accept episode.
    proof = tm(inited, "rebuild")
    assert proof.returncode == 0, proof.stdout + proof.stderr


def test_an_accepted_note_shows_in_the_next_prompt(inited: Path, server: ModelServer) -> None:
    doc = _ask(inited, server, REPLY)
    props = doc["proposals"]
    assert isinstance(props, list)
    assert tm(inited, "accept", "--all").returncode == 0
    proc = tm(inited, "ask", "--dry-run", "fetch_user should cache", "--json")
    user = json.loads(proc.stdout)["messages"][1]["content"]
    assert "- decision on fetch_user: fetch_user returns a dict" in user
    assert "- gotcha on fetch_user: callers compare the result with ==" in user
    # Sent for real, the block is in the messages the episode records (`tm show --messages`).
    _ask(inited, server, "Nothing to change.\n")
    assert "PROJECT MEMORY" in server.chat_requests[-1].body["messages"][1]["content"]
    shown = tm(inited, "show", "--messages")
    assert shown.returncode == 0, shown.stderr
    assert "- decision on fetch_user: fetch_user returns a dict" in shown.stdout


def test_a_reply_that_changes_nothing_gives_an_unanchored_note(
    inited: Path, server: ModelServer
) -> None:
    doc = _ask(inited, server, "Nothing to change.\n\nCONSTRAINT: ids are never reused\n")
    [p] = doc["proposals"]  # type: ignore[misc]
    assert p["note"]["anchors"] == []
    assert tm(inited, "accept", p["id"]).returncode == 0
    [note] = read_notes(open_repo(str(inited)))
    assert (note.kind, note.anchors) == ("constraint", ())


def test_ask_accept_does_not_accept_notes(inited: Path, server: ModelServer) -> None:
    """`tm ask --accept` promotes code the model was shown; a note waits for the user."""
    doc = _ask(inited, server, REPLY, "--accept")
    props = doc["proposals"]
    assert isinstance(props, list)
    assert read_notes(open_repo(str(inited))) == []
    pending = json.loads(tm(inited, "diff", "--json").stdout)["proposals"]
    assert sorted(p["kind"] for p in pending) == ["note", "note"]


def test_reject_why_remembers_what_was_tried(inited: Path, server: ModelServer) -> None:
    doc = _ask(inited, server, REPLY.split("\n\nDECISION")[0] + "\n")
    [p] = doc["proposals"]  # type: ignore[misc]
    proc = tm(inited, "reject", p["id"], "--why", "callers need the id only", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    store = open_repo(str(inited))
    [note] = read_notes(store)
    assert out["notes"] == [note.id]
    assert note.kind == "tried" and note.source == "reject"
    # The anchor holds the path and the episode the proposal id: the text repeats neither.
    assert note.text == "rejected: modify fetch_user: callers need the id only"
    assert [a.target for a in note.anchors] == ["app.py::fetch_user"]
    [(_, ep)] = list(history(store))[:1]
    assert ep.kind == "reject" and note.id in ep.notes and ep.details["rejected"] == [p["id"]]
    # The next prompt about fetch_user says what was rejected and why.
    dry = tm(inited, "ask", "--dry-run", "change fetch_user", "--json")
    user = json.loads(dry.stdout)["messages"][1]["content"]
    assert "- tried on fetch_user: rejected: modify fetch_user: callers need the id only" in user
    # An empty reason is refused, nothing written.
    doc = _ask(inited, server, REPLY.split("\n\nDECISION")[0] + "\n")
    [q] = doc["proposals"]  # type: ignore[misc]
    bad = tm(inited, "reject", q["id"], "--why", "  ")
    assert bad.returncode == 2 and "--why needs a reason" in bad.stderr
    assert len(read_notes(store)) == 1
    proof = tm(inited, "rebuild")
    assert proof.returncode == 0, proof.stdout + proof.stderr
