"""Proposals of one reply for one file are accepted together (#24): a new function beside a
DELETE line of another, whichever order accept takes them in."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.edits.realcorpus import make_repo
from tinymem.accept import plan
from tinymem.edits.proposals import build
from tinymem.edits.reply import parse_reply
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import current
from tinymem.proposalrecords import Proposal
from tinymem.repository import open_repo
from tinymem.symbols import extract

CLICK = "click/src/click/utils.py"
PATH = "src/click/utils.py"

REPLY = f"""Add `to_text` to `{PATH}`:

```python path={PATH}
def to_text(value: t.Any) -> str:
    \"\"\"Converts a value into a valid string.\"\"\"
    return str(value)
```

and remove the old helper:

DELETE: {PATH}::make_str
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("together") / "repo", [CLICK])


def _proposals(repo: Path) -> list[Proposal]:
    handle = open_repo(str(repo))
    view = current(handle)
    writer = ObjectWriter(handle.git)
    out = build(view, writer, handle.workdir, parse_reply(REPLY), verify(handle, view), {}, "t")
    writer.flush()
    assert sorted(p.kind for p in out.proposals) == ["delete", "symbols"]
    return out.proposals


@pytest.mark.parametrize("order", ["add first", "delete first"])
def test_an_added_function_and_a_deleted_one_are_accepted_together(repo: Path, order: str) -> None:
    # Delete first, today's accept found make_str "lost" by the other proposal (the State
    # Map still had it), blocked it, and so held the deletion back too.
    proposals = sorted(_proposals(repo), key=lambda p: p.kind != "delete")
    if order == "add first":
        proposals.reverse()
    handle = open_repo(str(repo))
    result = plan(handle, current(handle), proposals, allow_delete=True)
    assert [c.blocked for c in result.checks] == [None, None]
    after = result.files[PATH].after
    assert after is not None
    names = {s.name for s in extract(PATH, after).symbols}
    assert "to_text" in names and "make_str" not in names


def test_without_allow_delete_the_deletion_still_blocks(repo: Path) -> None:
    handle = open_repo(str(repo))
    result = plan(handle, current(handle), _proposals(repo))
    assert not result.ok
    assert result.files[PATH].after == result.files[PATH].before
