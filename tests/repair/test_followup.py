"""The follow-up message, for any block a model may write: it never raises, is deterministic,
and names every item it was given."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import PY_APP, git, init_repo
from tinymem.edits.proposals import build
from tinymem.edits.reply import parse_reply
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.ledger import current
from tinymem.repair.followup import follow_up
from tinymem.repair.triage import triage
from tinymem.repository import open_repo

LINES = st.sampled_from(
    [
        "def fetch_user(uid:",
        "def fetch_user(uid):",
        "    return {'id': uid}",
        "class Client:",
        "    def get(self, path):",
        "        return path",
        "    # ... existing code ...",
        "⋮",
        "@@ -1,2 +1,2 @@",
        "-    return path",
        "+    return path.strip()",
        " def get(self, path):",
        "<<<<<<< SEARCH",
        "=======",
        ">>>>>>> REPLACE",
        "}",
        "",
    ]
)
PATHS = st.sampled_from(["app.py", "path/to/file.py", "new.py", "", "../x.py"])


def test_any_reply_gives_a_well_formed_deterministic_follow_up(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    init_repo(work, {"app.py": PY_APP}, commit=False)
    repo = open_repo(str(work))
    view = current(repo)
    etv = verify(repo, view)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        blocks=st.lists(
            st.tuples(PATHS, st.sampled_from(["python", "diff", ""]), st.lists(LINES, max_size=8)),
            min_size=1,
            max_size=3,
        )
    )
    def check(blocks: list[tuple[str, str, list[str]]]) -> None:
        reply = "".join(
            f"```{lang}{' path=' + path if path else ''}\n" + "\n".join(lines) + "\n```\n"
            for path, lang, lines in blocks
        )
        writer = ObjectWriter(repo.git)
        outcome = build(view, writer, repo.workdir, parse_reply(reply), etv, {}, "e")
        writer.flush()
        items = triage(view, outcome, outcome.proposals, etv)
        if not items:
            return
        first = follow_up(items, view, 1, 1)
        assert first.text == follow_up(items, view, 1, 1).text
        assert first.text.startswith("[REPAIR ROUND 1 OF 1]\n")
        assert first.text.endswith("[END REPAIR]\n")
        for n in range(1, len(items) + 1):
            assert f"\n{n}. " in first.text
        short = follow_up(items, view, 1, 1, current=False)
        assert short.tokens <= first.tokens and not short.shown
        for key, artifact in first.shown.items():
            assert view.blob(artifact)  # what it claims to have shown exists
            assert key.startswith("app.py::")

    check()
