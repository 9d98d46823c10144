"""A path with spaces, written without quotes, names a file only all together and only when
that file exists; a fragment of it never names a new file (issue #14: ```` ```python
path=my dir/a b.py ```` proposed, and accepting wrote, a new file `my` at the root)."""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Initialise, tm, tm_ask, write
from tests.modelserver import ModelServer
from tinymem.edits.reply import Block, _parse, block_path

F = "```"
SPACED = "my dir/a b.py"
OLD = 'def greet(name):\n    return "hello " + name\n'
OTHER = "\n\ndef other():\n    return 2\n"

# Places a reply names a file, with `{p}` for the path as the model wrote it. In these, no
# word of a spaced path is ever a path: a key's value, the words after a language, a label's
# value, a backticked span, a comment line.
STRICT = [
    F + "python path={p}\n{code}" + F + "\n",
    F + "python file={p}\n{code}" + F + "\n",
    F + "python filename={p}\n{code}" + F + "\n",
    F + "python {p}\n{code}" + F + "\n",
    F + "py:{p}\n{code}" + F + "\n",
    F + "python {{file={p}}}\n{code}" + F + "\n",
    F + "python title={p}\n{code}" + F + "\n",
    "File: {p}\n" + F + "python\n{code}" + F + "\n",
    "**File:** {p}\n\n" + F + "python\n{code}" + F + "\n",
    "`{p}`:\n" + F + "python\n{code}" + F + "\n",
]
# Here words before a file name may be prose (`### Update app.py`, ```` ```ts app.ts ````): the
# last words may still name a file, but never words followed by more of the path.
LOOSE = [
    F + "{p}\n{code}" + F + "\n",
    "{p}\n" + F + "python\n{code}" + F + "\n",
    "### {p}\n" + F + "python\n{code}" + F + "\n",
    "Here is the updated {p}:\n" + F + "python\n{code}" + F + "\n",
]
# A comment line with spaces names no file: it stays code (`normalise.py` drops only a
# comment `comments.comment_path` reads as a path), so it never claims one either.
COMMENTS = [
    F + "python\n# {p}\n{code}" + F + "\n",
    F + "python\n# File: {p}\n{code}" + F + "\n",
]
NAMING = STRICT + LOOSE


def reply(form: str, path: str, code: str = OLD) -> str:
    return form.format(p=path, code=code)


def paths_of(text: str, workdir: Path) -> list[str | None]:
    return [block_path(b, str(workdir)).path for b in _parse(text).blocks]


@pytest.mark.parametrize("form", NAMING + COMMENTS)
def test_an_unquoted_spaced_path_names_no_new_file(form: str, tmp_path: Path) -> None:
    assert paths_of(reply(form, SPACED), tmp_path) == [None]


@pytest.mark.parametrize("form", NAMING)
def test_an_unquoted_spaced_path_names_the_existing_file(form: str, tmp_path: Path) -> None:
    write(tmp_path, SPACED, OLD)
    assert paths_of(reply(form, SPACED), tmp_path) == [SPACED]


def test_a_file_the_state_map_knows_counts_as_existing(tmp_path: Path) -> None:
    parsed = _parse(reply(STRICT[0], SPACED))
    assert [block_path(b, str(tmp_path), {SPACED}).path for b in parsed.blocks] == [SPACED]


@pytest.mark.parametrize("info", ['python path="my dir/a b.py"', "python file='my dir/a b.py'"])
def test_a_quoted_spaced_path_is_a_path_as_written(info: str, tmp_path: Path) -> None:
    (block,) = _parse(f"{F}{info}\nx = 1\n{F}\n").blocks
    assert block.raw_path is not None and " " in block.raw_path
    assert block_path(block, str(tmp_path)).path == block.raw_path


def test_a_quoted_title_with_spaces_names_only_an_existing_file(tmp_path: Path) -> None:
    text = f'{F}python title="my dir/a b.py"\nx = 1\n{F}\n'
    assert paths_of(text, tmp_path) == [None]
    write(tmp_path, SPACED, OLD)
    assert paths_of(text, tmp_path) == [SPACED]
    assert paths_of(f'{F}python title="Updated a b.py"\nx = 1\n{F}\n', tmp_path) == [None]


@pytest.mark.parametrize(
    ("info", "path"),
    [
        ("python path=src/a.py (updated)", "src/a.py"),
        ("python src/a.py (new file)", "src/a.py"),
        ("a.py (new file)", "a.py"),
        ("python path=a.py {1,3}", "a.py"),
        ('python path=a.py linenums="1"', "a.py"),
        ("python a.py extra words", None),
        ("python path=a.py and b.py", None),
    ],
)
def test_one_word_and_a_note_is_a_path_more_words_are_not(
    info: str, path: str | None, tmp_path: Path
) -> None:
    assert paths_of(f"{F}{info}\nx = 1\n{F}\n", tmp_path) == [path]


def test_an_unsafe_spaced_path_is_refused_not_dropped(tmp_path: Path) -> None:
    (block,) = _parse(f"{F}python path=../my dir/a b.py\nx = 1\n{F}\n").blocks
    found = block_path(block, str(tmp_path))
    assert found.path is None and found.refusal is not None and ".." in found.refusal


def test_prose_naming_one_file_is_unchanged(tmp_path: Path) -> None:
    text = f"In src/app.py, change the handler like this:\n\n{F}python\nx = 1\n{F}\n"
    assert paths_of(text, tmp_path) == ["src/app.py"]


# --- properties ----------------------------------------------------------------------------

_WORD = st.text(alphabet=string.ascii_lowercase + "_-", min_size=1, max_size=6)
_SPACED_PATHS = st.builds(
    lambda dirs, stem, ext: "/".join([*dirs, f"{stem}.{ext}"]),
    st.lists(st.lists(_WORD, min_size=1, max_size=3).map(" ".join), max_size=3),
    st.lists(_WORD, min_size=1, max_size=3).map(" ".join),
    st.sampled_from(["py", "ts", "go", "md"]),
).filter(lambda p: " " in p)
_PROPS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def empty_work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spaced-empty")


@_PROPS
@given(st.sampled_from(STRICT + COMMENTS), _SPACED_PATHS)
def test_no_word_of_a_spaced_path_is_ever_a_path(empty_work: Path, form: str, path: str) -> None:
    """With no such file, no block of the reply has a path: not the path, not a piece of it."""
    for block in _parse(reply(form, path)).blocks:
        assert block.raw_path is None, (form, path, block)
        assert block_path(block, str(empty_work)).path is None


@_PROPS
@given(st.sampled_from(LOOSE), _SPACED_PATHS)
def test_no_words_followed_by_more_of_a_spaced_path_are_a_path(
    empty_work: Path, form: str, path: str
) -> None:
    """Where prose may precede a file name, at most the path's last words are taken."""
    for block in _parse(reply(form, path)).blocks:
        found = block_path(block, str(empty_work)).path
        assert found is None or (found != path and path.endswith(found)), (form, path, found)
        assert found is None or path[: -len(found)].endswith((" ", "/")), (form, path, found)


@_PROPS
@given(st.sampled_from(NAMING), _SPACED_PATHS)
def test_an_existing_spaced_path_is_found_whole(
    tmp_path_factory: pytest.TempPathFactory, form: str, path: str
) -> None:
    work = tmp_path_factory.mktemp("spaced-exists")
    write(work, path, OLD)
    blocks: list[Block] = list(_parse(reply(form, path)).blocks)
    assert [block_path(b, str(work)).path for b in blocks] == [path]


# --- end to end ----------------------------------------------------------------------------


FILES = {SPACED: OLD + OTHER, "main.py": "import os\n"}


def _ask(repo: Path, server: ModelServer, text: str) -> dict[str, object]:
    server.add(text)
    proc = tm_ask(repo, server, "change greet", "--json", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert isinstance(prop, dict)
    return prop


def _files(repo: Path) -> set[str]:
    found = set()
    for root, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        found |= {os.path.relpath(os.path.join(root, n), repo) for n in names}
    return found


@pytest.mark.parametrize("form", [STRICT[0], STRICT[3], STRICT[9], LOOSE[2]])
def test_the_existing_spaced_file_gets_the_edit(
    repo: Path, initialised: Initialise, server: ModelServer, form: str
) -> None:
    initialised(FILES)
    new = OLD.replace("hello", "hi")
    prop = _ask(repo, server, reply(form, SPACED, new))
    assert (prop["path"], prop["kind"], prop["blocked"]) == (SPACED, "symbols", None)
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 0, proc.stderr
    assert (repo / SPACED).read_text() == new + OTHER
    assert _files(repo) == {SPACED, "main.py"}  # no `my`, no `b.py`, no `dir/a`


def test_a_spaced_path_naming_no_file_writes_nothing(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    prop = _ask(repo, server, reply(STRICT[0], "new dir/c d.py", "def fresh():\n    return 1\n"))
    assert prop["path"] is None and prop["kind"] == "unresolved"
    notes = prop["notes"]
    assert isinstance(notes, list) and any("'new dir/c d.py', which is no file" in n for n in notes)
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode != 0
    assert _files(repo) == {SPACED, "main.py"}


def test_a_quoted_new_spaced_path_is_created_whole(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    code = "def fresh():\n    return 1\n"
    prop = _ask(repo, server, f'{F}python path="new dir/c d.py"\n{code}{F}\n')
    assert (prop["path"], prop["kind"]) == ("new dir/c d.py", "new-file")
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "new dir" / "c d.py").read_text() == code
    assert _files(repo) == {SPACED, "main.py", "new dir/c d.py"}
