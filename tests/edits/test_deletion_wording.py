"""What deletes a definition, said as the accept gate decides it (#12): `--allow-delete` alone
lets a reply that removes a definition (a DELETE line, a diff or SEARCH/REPLACE block taking
it out) delete it; a definition a reply merely leaves out is never deleted, flag or not.

Real file (requests' sessions.py), real pipeline (`build`, then the accept plan, which
writes nothing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.edits.realcorpus import CODE, make_repo
from tinymem.accept import plan
from tinymem.acceptgate import gate_a_reason
from tinymem.edits.proposals import build
from tinymem.edits.reply import parse_reply
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import current
from tinymem.proposalrecords import Proposal
from tinymem.repository import open_repo

FILE = "requests/src/requests/sessions.py"
PATH = "src/requests/sessions.py"
TEXT = (CODE / FILE).read_text()
SESSION = TEXT[TEXT.index("\n\ndef session() -> Session:") :]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("deletion") / "requests", [FILE])


def _proposals(repo: Path, reply: str) -> list[Proposal]:
    opened = open_repo(str(repo))
    view = current(opened)
    writer = ObjectWriter(opened.git)
    outcome = build(view, writer, opened.workdir, parse_reply(reply), verify(opened, view), {}, "t")
    writer.flush()
    return outcome.proposals


def _plan(repo: Path, proposals: list[Proposal], *, allow_delete: bool) -> tuple[bool, str, bytes]:
    opened = open_repo(str(repo))
    result = plan(opened, current(opened), proposals, allow_delete=allow_delete)
    (check,) = result.checks
    reasons = "; ".join(g.detail for g in check.gates if not g.ok)
    after = result.files[PATH].after or b""
    return check.ok, reasons, after


def test_allow_delete_alone_lets_a_search_replace_remove_a_definition(repo: Path) -> None:
    search = SESSION.strip("\n")
    reply = f"{PATH}\n```python\n<<<<<<< SEARCH\n{search}\n=======\n>>>>>>> REPLACE\n```\n"
    proposals = _proposals(repo, reply)
    assert [(e.symbol, e.op) for p in proposals for e in p.entities] == [("session", "delete")]
    ok, reasons, _ = _plan(repo, proposals, allow_delete=False)
    assert not ok
    assert "session would be deleted: the reply removes it; accept with --allow-delete" in reasons
    assert "DELETE directive" not in reasons
    ok, reasons, after = _plan(repo, proposals, allow_delete=True)
    assert ok, reasons
    assert b"def session()" not in after and b"class Session(" in after


def test_a_definition_left_out_is_never_deleted_and_the_gate_says_what_would(repo: Path) -> None:
    # A real proposal for the file (Session.close changed), judged against a text that lacks
    # `session` without any proposal removing it: what a whole-file reply written against an
    # older text, or a splice gone wrong, would do.
    close = "    def close(self) -> None:\n"
    reply = f"```python path={PATH}\n{close}        self.adapters.clear()\n```\n"
    (proposal,) = _proposals(repo, reply)
    opened = open_repo(str(repo))
    meta = current(opened).meta(PATH)
    assert meta is not None
    live = {r.symbol: r for r in meta.live_entities()}
    before = TEXT.encode()
    after = TEXT.replace(SESSION, "\n").encode()
    reason = gate_a_reason(PATH, before, after, live, proposal, allow_delete=True)
    assert reason is not None
    assert "session would be lost: the reply leaves it out without removing it" in reason
    assert "a DELETE line, or a diff or SEARCH/REPLACE block that takes it out" in reason
