"""Which file a block names (#24): a path comment on the block's first line wins over a name
in the prose; a path that is no file but whose end names exactly one known file is that file
(tm never creates a file from a path the reply did not spell out in full and unambiguously);
the path comment is a label, not the file's first line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import tm, write
from tests.edits.realcorpus import CODE, make_repo
from tinymem.accept import plan
from tinymem.edits.proposals import Outcome, build
from tinymem.edits.reply import parse_reply
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import current
from tinymem.repository import open_repo

CERTS = "requests/src/requests/certs.py"
PATH = "src/requests/certs.py"
TEXT = (CODE / CERTS).read_text()
CHANGED = TEXT.replace("    print(where())", '    print("CA bundle:", where())')


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("named") / "repo", [CERTS])


def _build(repo: Path, reply: str) -> Outcome:
    handle = open_repo(str(repo))
    view = current(handle)
    writer = ObjectWriter(handle.git)
    out = build(view, writer, handle.workdir, parse_reply(reply), verify(handle, view), {}, "t")
    writer.flush()
    return out


def _written(repo: Path, out: Outcome) -> dict[str, bytes | None]:
    handle = open_repo(str(repo))
    result = plan(handle, current(handle), out.proposals)
    return {f.path: f.after for f in result.files.values() if f.after != f.before}


def test_a_path_comment_wins_over_a_base_name_in_prose(repo: Path) -> None:
    # Today: a proposal to create certs.py at the repository root, every gate passing.
    reply = f"Here is the updated `certs.py`:\n\n```python\n# {PATH}\n{CHANGED}```\n"
    out = _build(repo, reply)
    assert [(p.path, p.kind) for p in out.proposals] == [(PATH, "whole-file")]
    assert _written(repo, out) == {PATH: CHANGED.encode()}


def test_a_base_name_alone_means_the_one_file_of_that_name(repo: Path) -> None:
    out = _build(repo, f"Here is the updated `certs.py`:\n\n```python\n{CHANGED}```\n")
    (p,) = out.proposals
    assert (p.path, p.kind) == (PATH, "whole-file")
    assert any(f"the one file it can mean is {PATH}" in n for n in p.notes)
    assert _written(repo, out) == {PATH: CHANGED.encode()}


def test_a_short_path_adding_only_new_code_goes_into_the_one_file_it_names(repo: Path) -> None:
    reply = "```python path=requests/certs.py\ndef bundle() -> str:\n    return where()\n```\n"
    out = _build(repo, reply)
    (p,) = out.proposals
    assert (p.path, p.kind) == (PATH, "symbols")
    assert list(_written(repo, out)) == [PATH]


def test_a_base_name_several_files_end_with_creates_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "two", [CERTS])
    write(repo, "tools/certs.py", TEXT)
    proc = tm(repo, "adopt", "tools/certs.py")
    assert proc.returncode == 0, proc.stderr
    out = _build(repo, f"Here is the updated `certs.py`:\n\n```python\n{CHANGED}```\n")
    (p,) = out.proposals
    assert p.path is None and p.kind == "unresolved"
    assert "could be src/requests/certs.py, tools/certs.py" in p.gates["A"]
    assert _written(repo, out) == {}


def test_a_full_path_that_names_no_file_is_a_new_file(repo: Path) -> None:
    out = _build(repo, "```python path=tools/check_bundle.py\nprint(1)\n```\n")
    (p,) = out.proposals
    assert (p.path, p.kind) == ("tools/check_bundle.py", "new-file")


def test_the_path_comment_is_not_written_above_the_shebang(repo: Path) -> None:
    # Today: `# src/requests/certs.py` became the file's first line, above `#!/usr/bin/env`.
    out = _build(repo, f"```python\n# {PATH}\n{CHANGED}```\n")
    written = _written(repo, out)[PATH]
    assert written is not None and written.startswith(b"#!/usr/bin/env python\n")
    assert written == CHANGED.encode()


def test_a_file_that_starts_with_its_own_path_comment_keeps_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "own", [CERTS])
    write(repo, "tool.py", "# tool.py\nX = 1\n")
    proc = tm(repo, "adopt", "tool.py")
    assert proc.returncode == 0, proc.stderr
    out = _build(repo, "```python\n# tool.py\nX = 2\n```\n")
    assert _written(repo, out) == {"tool.py": b"# tool.py\nX = 2\n"}
