"""A definition given as a fragment (its header and the first lines of a long body, the rest
left to prose) never replaces the whole definition; a body cut from its header is never
placed on its own; a diff that removes most of a body lands only with --allow-delete
(`tinymem/edits/fragments.py`, #24)."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.edits.generated import FILES
from tests.edits.realcorpus import CODE, make_repo
from tinymem.accept import plan
from tinymem.edits.fragments import MIN_NODES
from tinymem.edits.proposals import Outcome, build
from tinymem.edits.reply import parse_reply
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import current
from tinymem.records import entity_key
from tinymem.repair.triage import triage
from tinymem.repository import open_repo
from tinymem.symbols import GRAMMAR_LANGUAGES, Symbol, analyze, extract, language_for_path

CLICK = "click/src/click/utils.py"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every corpus file at `<project>/<path>`, tm init'ed."""
    return make_repo(tmp_path_factory.mktemp("fragments") / "repo", FILES, keep_project=True)


def _build(repo: Path, reply: str, shown: tuple[tuple[str, str], ...] = ()) -> Outcome:
    handle = open_repo(str(repo))
    view = current(handle)
    hydrated = {}
    for file, name in shown:
        meta = view.meta(file)
        assert meta is not None
        hydrated[entity_key(file, name)] = meta.entities[name].artifact
    writer = ObjectWriter(handle.git)
    out = build(
        view, writer, handle.workdir, parse_reply(reply), verify(handle, view), hydrated, "t"
    )
    writer.flush()
    return out


def _written(repo: Path, out: Outcome, *, allow_delete: bool = False) -> dict[str, bytes | None]:
    """The files the accept plan of every proposal would change (it writes nothing)."""
    handle = open_repo(str(repo))
    result = plan(handle, current(handle), out.proposals, allow_delete=allow_delete)
    return {f.path: f.after for f in result.files.values() if f.after != f.before}


def _reasons(repo: Path, out: Outcome) -> list[str]:
    handle = open_repo(str(repo))
    result = plan(handle, current(handle), out.proposals)
    return [c.blocked.detail for c in result.checks if c.blocked]


def _symbol(file: str, name: str) -> Symbol:
    return {s.name: s for s in extract(file, (CODE / file).read_bytes()).symbols}[name]


ECHO_HEAD = """\
def echo(
    message: object = None,
    file: t.IO[t.Any] | None = None,
    nl: bool = True,
    err: bool = False,
    color: bool | None = None,
) -> None:
    if message is None and not nl:
        return
"""


def test_a_function_given_as_its_first_lines_is_blocked_as_a_fragment(repo: Path) -> None:
    # Today's code proposed it as `modify`, every gate passed, and accept wrote it: 90 of the
    # 94 lines of echo gone.
    reply = (
        f"Add a check at the start of `echo`:\n\n```python path={CLICK}\n{ECHO_HEAD}```\n\n"
        "The stream lookup stays as it is. At the end keep flushing:\n\n"
        "```python\n    file.write(out)  # type: ignore\n    file.flush()\n```\n"
    )
    out = _build(repo, reply, ((CLICK, "echo"),))
    mine = [p for p in out.proposals if p.path == CLICK]
    assert mine and all(p.gates["A"].startswith("elided: echo is a fragment") for p in mine)
    assert _written(repo, out) == {}
    assert _written(repo, out, allow_delete=True) == {}  # a fragment removes nothing explicitly


def test_accept_blocks_a_fragment_that_passed_at_ask_time(repo: Path) -> None:
    """Proposals recorded before the rule (Gate A "pass") are judged again by accept."""
    out = _build(repo, f"```python path={CLICK}\n{ECHO_HEAD}```\n", ((CLICK, "echo"),))
    for p in out.proposals:
        p.gates["A"] = "pass"
    reasons = _reasons(repo, out)
    assert reasons and "echo is a fragment" in reasons[0], reasons
    assert _written(repo, out, allow_delete=True) == {}


def test_a_fragment_goes_back_in_a_repair_round_asking_for_the_whole_definition(
    repo: Path,
) -> None:
    out = _build(repo, f"```python path={CLICK}\n{ECHO_HEAD}```\n", ((CLICK, "echo"),))
    handle = open_repo(str(repo))
    view = current(handle)
    items = triage(view, out, out.proposals, verify(handle, view))
    assert len(items) == 1
    assert "give the complete definition" in items[0].reason
    assert items[0].aims == frozenset({"echo"})


def test_a_body_continuation_with_no_header_is_never_placed(repo: Path) -> None:
    reply = f"```python path={CLICK}\n    file.write(out)  # type: ignore\n    file.flush()\n```\n"
    out = _build(repo, reply)
    (gate,) = [p.gates["A"] for p in out.proposals if p.path == CLICK]
    assert gate.startswith("UNRESOLVED: the block defines nothing tm can place"), gate
    assert _written(repo, out, allow_delete=True) == {}


def test_a_moderately_shorter_rewrite_still_lands(repo: Path) -> None:
    sym = _symbol(CLICK, "_make_default_short_help")
    text = (CODE / CLICK).read_bytes()[sym.start : sym.end].decode()
    head, _, _rest = text.partition('    """\n')  # keep the header and docstring
    body = (
        '    words = help.split("\\n\\n", 1)[0].split()\n'
        '    if words and words[0] == "\\b":\n'
        "        words = words[1:]\n"
        "    for i, word in enumerate(words):\n"
        '        if word.endswith(".") and len(" ".join(words[: i + 1])) <= max_length:\n'
        '            return " ".join(words[: i + 1])\n'
        '    return textwrap.shorten(" ".join(words), max_length, placeholder="...")\n'
    )
    new = head + '    """\n' + body
    language = "python"
    ratio = analyze(language, new.encode()).node_count / analyze(language, text.encode()).node_count
    assert 0.5 < ratio < 0.7, ratio  # a real shortening, short of a collapse
    out = _build(repo, f"```python path={CLICK}\n{new}```\n")
    assert list(_written(repo, out)) == [CLICK]


def test_a_diff_that_removes_most_of_a_body_needs_allow_delete(repo: Path) -> None:
    data = (CODE / CLICK).read_bytes()
    sym = _symbol(CLICK, "echo")
    header = data[sym.start : sym.end].split(b"\n")[:7]  # `def echo(` to `) -> None:`
    after = data[: sym.start] + b"\n".join(header) + b"\n    return" + data[sym.end :]
    hunks = difflib.unified_diff(
        data.decode().splitlines(keepends=True),
        after.decode().splitlines(keepends=True),
        f"a/{CLICK}",
        f"b/{CLICK}",
    )
    diff = "```diff\n" + "".join(hunks) + "```\n"
    out = _build(repo, diff)
    (p,) = [p for p in out.proposals if p.path == CLICK]
    assert p.gates["A"] == "pass"
    assert p.gates["B"] == "user accept with --allow-delete"
    assert any("removes most of echo" in n for n in p.notes)
    reasons = _reasons(repo, out)
    assert reasons and "--allow-delete" in reasons[0]
    assert list(_written(repo, out, allow_delete=True)) == [CLICK]


def _functions() -> list[tuple[str, Symbol]]:
    out = []
    for file in FILES:
        language = language_for_path(file)
        if language not in GRAMMAR_LANGUAGES:
            continue
        assert language is not None
        data = (CODE / file).read_bytes()
        for s in extract(file, data).symbols:
            text = data[s.start : s.end]
            # Below MIN_NODES a rewrite to a few lines is an ordinary edit (`fragments.py`).
            if s.kind in ("function", "method") and analyze(language, text).node_count >= MIN_NODES:
                out.append((file, s))
    return out


FUNCTIONS = _functions()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_prefix_of_a_body_never_reaches_the_work_tree(repo: Path, data: st.DataObject) -> None:
    """For any function of the corpus, a reply holding its real header and only a prefix of
    its body (under half of its syntax nodes: a prefix holding most of the body cannot be
    told from an edit that drops the last lines) is not written, unless --allow-delete and
    an explicit removal, which a code block is not."""
    file, sym = data.draw(st.sampled_from(FUNCTIONS), label="function")
    language = language_for_path(file)
    assert language is not None
    source = (CODE / file).read_bytes()
    line_start = source.rfind(b"\n", 0, sym.start) + 1
    lines = source[line_start : sym.end].decode().split("\n")
    cut = data.draw(st.integers(min_value=1, max_value=len(lines) - 1), label="lines kept")
    kept = lines[:cut]
    if language != "python" and lines[-1].strip():
        kept.append(lines[-1])  # a brace language's fragment closes its body
    prefix = "\n".join(kept)
    whole = analyze(language, "\n".join(lines).encode()).node_count
    assume(analyze(language, prefix.encode()).node_count * 2 < whole)
    out = _build(repo, f"Only the start changes:\n\n```code path={file}\n{prefix}\n```\n")
    for allow in (False, True):
        written = _written(repo, out, allow_delete=allow)
        assert file not in written, (sym.name, cut, [p.gates for p in out.proposals])


def test_the_property_has_functions_in_several_languages() -> None:
    assert len({language_for_path(f) for f, _ in FUNCTIONS}) >= 5
