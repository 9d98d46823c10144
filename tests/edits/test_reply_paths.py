"""The file a SEARCH/REPLACE block or a diff names inside its fence, as code blocks do.

A comment line naming the file first in the fence (`# mypy/errors.py`) named the file of a
code block, but a SEARCH/REPLACE block was then left to correlation (INFERRED, blocked) and a
diff read the comment as a context line that matched nowhere. On mypy's real `errors.py`.
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from tests.edits.realcorpus import CODE, make_repo
from tinymem.accept import plan
from tinymem.edits.proposals import build
from tinymem.edits.reply import parse_reply
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import current
from tinymem.repository import open_repo
from tinymem.symbols import analyze, extract

ERRORS = "mypy/errors.py"
OLD = '''    def is_errors(self) -> bool:
        """Are there any generated messages?"""
        return bool(self.error_info_map)
'''
NEW = OLD.replace("bool(self.error_info_map)", "len(self.error_info_map) > 0")
PAIR = f"<<<<<<< SEARCH\n{OLD}=======\n{NEW}>>>>>>> REPLACE\n"
OTHER = "        return file in self.error_info_map and file not in self.ignored_files\n"
OTHER_NEW = "        return file not in self.ignored_files and file in self.error_info_map\n"
PAIR2 = f"<<<<<<< SEARCH\n{OTHER}=======\n{OTHER_NEW}>>>>>>> REPLACE\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("paths") / "mypy", [f"mypy/{ERRORS}"])


def accepted(workdir: Path, reply: str) -> tuple[list[str], bytes, list[str]]:
    """(confidence of each proposal, the file as accepting would write it, blocked reasons)."""
    repository = open_repo(str(workdir))
    view = current(repository)
    writer = ObjectWriter(repository.git)
    etv = verify(repository, view)
    outcome = build(view, writer, repository.workdir, parse_reply(reply), etv, {}, "t")
    writer.flush()
    result = plan(repository, view, outcome.proposals)
    before = (workdir / ERRORS).read_bytes()
    after = result.files[ERRORS].after if ERRORS in result.files else before
    assert after is not None
    reasons = [f"{c.blocked.gate}: {c.blocked.detail}" for c in result.checks if c.blocked]
    return [p.confidence for p in outcome.proposals], after, reasons


def changed(before: bytes, after: bytes) -> list[str]:
    """The definitions whose text differs; asserts every one is still there exactly once."""
    old = collections.Counter(s.name for s in extract(ERRORS, before).symbols)
    new = collections.Counter(s.name for s in extract(ERRORS, after).symbols)
    assert old == new
    assert analyze("python", after).clean
    a = {s.name: before[s.start : s.end] for s in extract(ERRORS, before).symbols}
    b = {s.name: after[s.start : s.end] for s in extract(ERRORS, after).symbols}
    return sorted(n for n in a if a[n] != b[n] and "." in n)


@pytest.mark.parametrize("comment", [f"# {ERRORS}", f"# File: {ERRORS}", f"# --- {ERRORS} ---"])
def test_search_replace_named_by_a_comment_line_in_the_fence(repo: Path, comment: str) -> None:
    confidences, after, reasons = accepted(repo, f"```python\n{comment}\n{PAIR}```\n")
    assert confidences == ["CONFIRMED"]
    assert reasons == []
    before = (CODE / "mypy" / ERRORS).read_bytes()
    assert changed(before, after) == ["Errors.is_errors"]
    assert after == before.replace(OLD.encode(), NEW.encode())


def test_two_files_in_one_search_replace_fence(repo: Path) -> None:
    """A comment line between pairs names the file of the pairs below it."""
    reply = f"```python\n# {ERRORS}\n{PAIR}\n# mypy/other.py\n{PAIR2}```\n"
    blocks = parse_reply(reply).blocks
    assert [(b.raw_path, b.format) for b in blocks] == [
        (ERRORS, "search-replace"),
        ("mypy/other.py", "search-replace"),
    ]
    assert "is_errors_for_file" not in blocks[0].code and OLD in blocks[0].code
    assert OTHER in blocks[1].code and OLD not in blocks[1].code


def test_pairs_of_one_file_stay_one_block(repo: Path) -> None:
    confidences, after, reasons = accepted(repo, f"```python\n# {ERRORS}\n{PAIR}{PAIR2}```\n")
    assert confidences == ["CONFIRMED"]
    assert reasons == []
    before = (CODE / "mypy" / ERRORS).read_bytes()
    assert changed(before, after) == ["Errors.is_errors", "Errors.is_errors_for_file"]


def test_the_info_string_path_wins_over_a_first_comment_line() -> None:
    reply = f"```python path={ERRORS}\n# mypy/elsewhere.py\n{PAIR}```\n"
    (block,) = parse_reply(reply).blocks
    assert (block.raw_path, block.path_source) == (ERRORS, "info")


def test_a_diff_named_by_a_comment_line_in_the_fence(repo: Path) -> None:
    hunk = "".join(
        [
            "@@ -1,3 +1,3 @@\n",
            "     def is_errors(self) -> bool:\n",
            '         """Are there any generated messages?"""\n',
            "-        return bool(self.error_info_map)\n",
            "+        return len(self.error_info_map) > 0\n",
        ]
    )
    reply = f"```diff\n# {ERRORS}\n{hunk}```\n"
    (block,) = parse_reply(reply).blocks
    assert (block.raw_path, block.format) == (ERRORS, "udiff")
    assert not block.code.startswith("#")
    confidences, after, reasons = accepted(repo, reply)
    assert confidences == ["CONFIRMED"]
    assert reasons == []
    before = (CODE / "mypy" / ERRORS).read_bytes()
    assert after == before.replace(OLD.encode(), NEW.encode())


def test_a_diff_header_wins_over_a_first_comment_line() -> None:
    reply = "```diff\n# mypy/elsewhere.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n```\n"
    (block,) = parse_reply(reply).blocks
    assert (block.raw_path, block.path_source) == ("x.py", "diff-header")
