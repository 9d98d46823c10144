"""A block given as a whole file must account for all of the file: for a file tm reads no
definitions in, its lines (`textparity.py`); for a grammar language, its lines outside every
definition (`statements.py`). Through the real pipeline (build on a real State Map, then the
accept plan, which writes nothing)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Initialise
from tinymem.accept import plan
from tinymem.acceptplan import Plan
from tinymem.edits.proposals import build
from tinymem.edits.reply import parse_reply
from tinymem.edits.statements import dropped_statements
from tinymem.edits.textparity import collapsed_text
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import current
from tinymem.proposalrecords import Proposal
from tinymem.repository import open_repo

TOOL = '''"""Tool."""
import logging
import sys

logging.basicConfig(level=logging.INFO)
DEFAULT = 3


def load(path: str) -> str:
    with open(path) as fh:
        return fh.read()


def main() -> None:
    print(load(sys.argv[1]), DEFAULT)


if __name__ == "__main__":
    main()
'''
# Every definition and import, without the two statements.
TOOL_CUT = '''"""Tool."""
import logging
import sys

DEFAULT = 3


def load(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def main() -> None:
    print(load(sys.argv[1]), DEFAULT)
'''
SERVER = """const express = require('express')
const app = express()

function home (req, res) {
  res.send('home')
}

app.get('/', home)
app.post('/admin/reset', requireAdmin, reset)

app.listen(3000)
"""
DOCKERFILE = """FROM python:3.12-slim
WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt
COPY . .
CMD ["python", "-m", "app"]
"""


def _plan(repo: Path, reply: str, *, allow_delete: bool = False) -> tuple[list[Proposal], Plan]:
    opened = open_repo(str(repo))
    view = current(opened)
    writer = ObjectWriter(opened.git)
    outcome = build(
        view, writer, opened.workdir, parse_reply(reply), verify(opened, view), {}, "test"
    )
    writer.flush()
    return outcome.proposals, plan(opened, view, outcome.proposals, allow_delete=allow_delete)


def _blocked(result: Plan) -> list[str]:
    return [c.blocked.detail for c in result.checks if c.blocked is not None]


def test_lines_outside_definitions_a_whole_file_leaves_out_are_named() -> None:
    assert dropped_statements("tool.py", TOOL.encode(), TOOL_CUT.encode()) == [
        "logging.basicConfig(level=logging.INFO)",
        'if __name__ == "__main__":',
    ]
    cut = SERVER.replace("app.post('/admin/reset', requireAdmin, reset)\n", "")
    assert dropped_statements("server.js", SERVER.encode(), cut.encode()) == [
        "app.post('/admin/reset', requireAdmin, reset)"
    ]
    # Imports re-ordered or trimmed, and a statement changed rather than left out: no removal.
    moved = TOOL.replace("import logging\nimport sys\n", "import sys\n").replace(
        "level=logging.INFO", "level=logging.DEBUG"
    )
    assert dropped_statements("tool.py", TOOL.encode(), moved.encode()) == []
    licence = "# Copyright 2024 The Authors\n# SPDX-License-Identifier: MIT\n\n" + TOOL
    assert dropped_statements("tool.py", licence.encode(), TOOL.encode()) == [
        "# Copyright 2024 The Authors"
    ]
    assert dropped_statements("Dockerfile", DOCKERFILE.encode(), b"FROM x\n") == []


def test_a_whole_file_dropping_statements_needs_allow_delete(
    repo: Path, initialised: Initialise
) -> None:
    initialised({"tool.py": TOOL, "server.js": SERVER})
    reply = f"Here is the updated `tool.py`:\n\n```python\n{TOOL_CUT}```\n"
    proposals, result = _plan(repo, reply)
    (p,) = proposals
    assert p.kind == "whole-file" and p.gates["A"] == "pass"
    assert p.gates["B"] == "user accept with --allow-delete" and not p.hydrated
    # Only what changes is listed (DEFAULT and main are given as the file has them).
    assert [(e.symbol, e.op) for e in p.entities] == [("load", "modify")]
    assert any("logging.basicConfig" in n and "--allow-delete" in n for n in p.notes), p.notes
    (why,) = _blocked(result)
    assert "outside every definition" in why and "if __name__" in why
    assert "--allow-delete" in why
    _, allowed = _plan(repo, reply, allow_delete=True)
    assert _blocked(allowed) == []
    assert allowed.files["tool.py"].after == TOOL_CUT.encode()

    js = SERVER.replace("app.post('/admin/reset', requireAdmin, reset)\n", "").replace(
        "'home'", "'welcome home'"
    )
    _, result = _plan(repo, f"Here is the updated `server.js`:\n\n```js\n{js}```\n")
    (why,) = _blocked(result)
    assert "app.post('/admin/reset'" in why


def test_a_whole_file_keeping_every_statement_is_written(
    repo: Path, initialised: Initialise
) -> None:
    initialised({"tool.py": TOOL})
    whole = TOOL.replace("with open(path) as fh", 'with open(path, encoding="utf-8") as fh')
    whole = whole.replace("import logging\nimport sys\n", "import sys\nimport logging\n")
    _, result = _plan(repo, f"Here is the whole `tool.py`:\n\n```python\n{whole}```\n")
    assert _blocked(result) == []
    assert result.files["tool.py"].after == whole.encode()


def test_a_snippet_for_a_file_without_grammar_is_no_whole_file(
    repo: Path, initialised: Initialise
) -> None:
    assert collapsed_text("Dockerfile", DOCKERFILE.encode(), DOCKERFILE.encode()) is None
    assert collapsed_text("a.txt", b"one\n", b"two\n") is None  # a small file rewritten
    initialised({"Dockerfile": DOCKERFILE, ".nvmrc": "18\n"})
    proposals, result = _plan(
        repo, "Use Python 3.13 in `Dockerfile`:\n\n```dockerfile\nFROM python:3.13-slim\n```\n"
    )
    (p,) = proposals
    assert "replaces the whole file" in p.gates["A"]
    (why,) = _blocked(result)
    assert "1 non-blank line where Dockerfile has 6" in why and "SEARCH/REPLACE" in why
    assert result.files["Dockerfile"].after == DOCKERFILE.encode()
    # The whole file, rewritten: written; so is a small file and a new one.
    whole = DOCKERFILE.replace("3.12", "3.13").replace("COPY . .\n", "COPY src/ src/\n")
    for reply, path, text in [
        (f"The whole `Dockerfile`:\n\n```dockerfile\n{whole}```\n", "Dockerfile", whole),
        ("`.nvmrc`:\n\n```\n20\n```\n", ".nvmrc", "20\n"),
        ("A new `docs/notes.md`:\n\n```markdown\n# Notes\n```\n", "docs/notes.md", "# Notes\n"),
    ]:
        _, result = _plan(repo, reply)
        assert _blocked(result) == [], reply
        assert result.files[path].after == text.encode()


PACKAGE = '{\n  "name": "app",\n  "dependencies": {\n    "express": "^4.18.0"\n  }\n}\n'
REQUIREMENTS = "flask==3.0.0\nrequests==2.31.0\ngunicorn==21.2.0\npsycopg2-binary==2.9.9\n"


def test_a_fragment_of_a_json_or_toml_file_is_no_whole_file(
    repo: Path, initialised: Initialise
) -> None:
    # Review item 4: four of package.json's six lines passed the half rule, and the file was
    # written without "name" and its outer braces (no JSON at all).
    fragment = '"dependencies": {\n  "express": "^4.18.0",\n  "lodash": "^4.17.21"\n}\n'
    assert "no JSON document" in (collapsed_text("package.json", PACKAGE.encode(), b"x") or "")
    toml = b'[project]\nname = "app"\nversion = "1.0"\n'
    assert "no TOML document" in (collapsed_text("p.toml", toml, b'name = "app"\n[x\n') or "")
    bumped = PACKAGE.replace("4.18.0", "4.19.0")
    assert collapsed_text("package.json", PACKAGE.encode(), bumped.encode()) is None
    # A file that does not parse itself (JSON with comments) is judged by its lines only.
    assert collapsed_text("t.json", b"// c\n{\n}\n", b"{\n  1\n") is None
    initialised({"package.json": PACKAGE})
    proposals, result = _plan(repo, f"Add lodash to `package.json`:\n\n```json\n{fragment}```\n")
    (p,) = proposals
    assert "no JSON document" in p.gates["A"]
    (why,) = _blocked(result)
    assert "no JSON document where package.json is one" in why and "SEARCH/REPLACE" in why
    _, allowed = _plan(
        repo, f"Add lodash to `package.json`:\n\n```json\n{fragment}```\n", allow_delete=True
    )
    assert _blocked(allowed) != []  # no word of the user's makes a fragment the file


def test_a_block_with_fewer_lines_than_a_file_without_grammar_needs_allow_delete(
    repo: Path, initialised: Initialise
) -> None:
    # Review item 4: two of requirements.txt's four lines (half) replaced the file, two
    # requirements deleted without a word.
    initialised({"requirements.txt": REQUIREMENTS})
    reply = "Update `requirements.txt`:\n\n```text\nflask==3.0.3\nclick==8.1.7\n```\n"
    proposals, result = _plan(repo, reply)
    (p,) = proposals
    assert p.kind == "whole-file" and p.gates["A"] == "pass"
    assert p.gates["B"] == "user accept with --allow-delete" and not p.hydrated
    assert any("leaves out 4 lines of requirements.txt" in n for n in p.notes), p.notes
    (why,) = _blocked(result)
    assert "leaves out 4 lines" in why and "`gunicorn==21.2.0`" in why
    assert "--allow-delete" in why
    assert result.files["requirements.txt"].after == REQUIREMENTS.encode()
    _, allowed = _plan(repo, reply, allow_delete=True)
    assert _blocked(allowed) == []
    assert allowed.files["requirements.txt"].after == b"flask==3.0.3\nclick==8.1.7\n"
    # As many lines or more (a version bump, a line added): written as given.
    for text in [REQUIREMENTS.replace("3.0.0", "3.0.3"), REQUIREMENTS + "click==8.1.7\n"]:
        proposals, result = _plan(repo, f"The whole `requirements.txt`:\n\n```\n{text}```\n")
        assert not any("leaves out" in n for p in proposals for n in p.notes)
        assert _blocked(result) == []
        assert result.files["requirements.txt"].after == text.encode()


CLI = """import logging
import sys

logging.basicConfig(level=logging.INFO)
log = logging.getLogger(__name__)


def main(argv):
    for path in argv[1:]:
        log.info("%s: %d bytes", path, len(open(path).read()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
"""


def test_a_statement_replaced_by_a_definition_is_left_out() -> None:
    # Review item 5: the reply put a new function where the `__main__` block was (difflib
    # 'replace', not 'delete'), and the block was deleted without a note.
    replaced = CLI.replace(
        'if __name__ == "__main__":\n    sys.exit(main(sys.argv))\n',
        "def count_lines(text):\n    return len(text.splitlines())\n",
    )
    assert dropped_statements("cli.py", CLI.encode(), replaced.encode()) == [
        'if __name__ == "__main__":'
    ]
    # A statement changed in its place is still a change.
    changed = CLI.replace("level=logging.INFO", "level=logging.DEBUG")
    assert dropped_statements("cli.py", CLI.encode(), changed.encode()) == []


def test_a_statement_moved_elsewhere_is_not_left_out(repo: Path, initialised: Initialise) -> None:
    # Review item 9: basicConfig moved into the `__main__` block was called left out, and
    # the whole file needed --allow-delete.
    moved = CLI.replace("logging.basicConfig(level=logging.INFO)\n", "").replace(
        "    sys.exit(main(sys.argv))\n",
        "    logging.basicConfig(level=logging.INFO)\n    sys.exit(main(sys.argv))\n",
    )
    assert dropped_statements("cli.py", CLI.encode(), moved.encode()) == []
    initialised({"cli.py": CLI})
    proposals, result = _plan(repo, f"Here is the whole `cli.py`:\n\n```python\n{moved}```\n")
    (p,) = proposals
    assert not any("leaves out" in n for n in p.notes), p.notes
    assert _blocked(result) == []
    assert result.files["cli.py"].after == moved.encode()
