"""A file's last line without a line break, under diffs and SEARCH/REPLACE blocks: `git apply`
is the oracle where the diff is one git would apply (its `\\ No newline at end of file`
markers written), and the file's own ending is kept where a model's diff says nothing."""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinymem.edits.patches import apply_edit

NO_EOL = "\\ No newline at end of file"
HEAD = "--- a/f.txt\n+++ b/f.txt\n"


def _git_apply(tmp: Path, old: bytes, diff: str) -> bytes:
    tmp.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=tmp, check=True)
    (tmp / "f.txt").write_bytes(old)
    (tmp / "p.diff").write_text(diff)
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp, check=True, capture_output=True)
    return (tmp / "f.txt").read_bytes()


GIT_CASES = {
    # the old last line removed and written again with its line break, a line after it
    "append, old side marked": (
        b"requests==2.32.0\nflask==3.0.0",
        "@@ -1,2 +1,3 @@\n requests==2.32.0\n-flask==3.0.0\n" + NO_EOL + "\n"
        "+flask==3.0.0\n+click==8.1.7\n",
    ),
    "append, both sides marked": (
        b"requests==2.32.0\nflask==3.0.0",
        "@@ -1,2 +1,3 @@\n requests==2.32.0\n-flask==3.0.0\n" + NO_EOL + "\n"
        "+flask==3.0.0\n+click==8.1.7\n" + NO_EOL + "\n",
    ),
    "the final newline taken away": (
        b"a\nb\n",
        "@@ -1,2 +1,3 @@\n a\n b\n+c\n" + NO_EOL + "\n",
    ),
    "the last line changed, both sides marked": (
        b"a\nb",
        "@@ -1,2 +1,2 @@\n a\n-b\n" + NO_EOL + "\n+B\n" + NO_EOL + "\n",
    ),
    "the last line changed, a line break given": (
        b"a\nb",
        "@@ -1,2 +1,2 @@\n a\n-b\n" + NO_EOL + "\n+B\n",
    ),
    "a line put before the unchanged last line": (
        b"a\nb",
        "@@ -1,2 +1,3 @@\n a\n+x\n b\n" + NO_EOL + "\n",
    ),
    "the last line removed": (
        b"a\nb\nc",
        "@@ -1,3 +1,2 @@\n a\n b\n-c\n" + NO_EOL + "\n",
    ),
}


@pytest.mark.parametrize("name", sorted(GIT_CASES))
def test_a_diff_git_applies_gives_what_git_apply_writes(name: str, tmp_path: Path) -> None:
    old, hunk = GIT_CASES[name]
    want = _git_apply(tmp_path, old, HEAD + hunk)
    patched = apply_edit("udiff", HEAD + hunk, old, "f.txt")
    assert patched.problem is None
    assert patched.data == want


MODEL_CASES = {
    # What small models write: no marker, the last line given as plain context (git apply
    # refuses these; tm keeps how the file ended and never glues two lines).
    "requirements.txt": (
        b"requests==2.32.0\nflask==3.0.0",
        "@@ -1,2 +1,3 @@\n requests==2.32.0\n flask==3.0.0\n+click==8.1.7\n",
        b"requests==2.32.0\nflask==3.0.0\nclick==8.1.7",
    ),
    "yaml, two lines added": (
        b"server:\n  port: 80",
        "@@\n server:\n   port: 80\n+  host: 0.0.0.0\n+  tls: false\n",
        b"server:\n  port: 80\n  host: 0.0.0.0\n  tls: false",
    ),
    "crlf": (
        b"a\r\nb",
        "@@\n a\n b\n+c\n",
        b"a\r\nb\r\nc",
    ),
    "the last line changed": (b"a\nb", "@@\n a\n-b\n+B\n", b"a\nB"),
    "the last line removed": (b"a\nb\nc", "@@\n b\n-c\n", b"a\nb"),
    "a final newline kept": (b"a\nb\n", "@@\n b\n+c\n", b"a\nb\nc\n"),
}


@pytest.mark.parametrize("name", sorted(MODEL_CASES))
def test_a_models_diff_after_a_last_line_without_a_break_glues_nothing(name: str) -> None:
    old, hunk, want = MODEL_CASES[name]
    patched = apply_edit("udiff", HEAD + hunk, old, "f.txt")
    assert patched.problem is None
    assert patched.data == want


def test_search_replace_after_a_last_line_without_a_break() -> None:
    block = "<<<<<<< SEARCH\nflask==3.0.0\n=======\nflask==3.0.0\nclick==8.1.7\n>>>>>>> REPLACE\n"
    patched = apply_edit("search-replace", block, b"requests==2.32.0\nflask==3.0.0", "f.txt")
    assert patched.data == b"requests==2.32.0\nflask==3.0.0\nclick==8.1.7"


def test_a_new_file_marked_without_a_final_newline() -> None:
    diff = "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n" + NO_EOL + "\n"
    assert apply_edit("udiff", diff, None, "n.txt").data == b"a\nb"


def _git_diff(old: bytes, new: bytes) -> str:
    """The diff git would write: difflib's, a line with no break followed by the marker."""
    out = []
    for line in difflib.unified_diff(
        old.decode().splitlines(keepends=True),
        new.decode().splitlines(keepends=True),
        "a/f.txt",
        "b/f.txt",
        n=2,
    ):
        out.append(line if line.endswith("\n") else line + "\n" + NO_EOL + "\n")
    return "".join(out)


def _text(lines: list[str], ends: bool) -> bytes:
    return ("\n".join(lines) + ("\n" if ends and lines else "")).encode()


@settings(max_examples=200, deadline=None)
@given(
    count=st.integers(1, 12),
    old_ends=st.booleans(),
    new_ends=st.booleans(),
    data=st.data(),
)
def test_any_diff_with_its_markers_applies_back_to_exactly_the_new_text(
    count: int, old_ends: bool, new_ends: bool, data: st.DataObject
) -> None:
    """Lines kept in order, some dropped, fresh ones put anywhere (every line distinct, so each
    hunk matches once), either text with or without a final line break: the diff from old to
    new gives new; written as a model writes it (no markers), it gives new ending as old did."""
    old_lines = [f"line {i}" for i in range(count)]
    kept = [line for line in old_lines if data.draw(st.booleans())]
    new_lines: list[str] = []
    fresh = iter(f"new {i}" for i in range(100))
    for line in [*kept, None]:
        new_lines += [next(fresh) for _ in range(data.draw(st.integers(0, 2)))]
        if line is not None:
            new_lines.append(line)
    old, new = _text(old_lines, old_ends), _text(new_lines, new_ends)
    if old == new:
        return
    diff = _git_diff(old, new)
    patched = apply_edit("udiff", diff, old, "f.txt")
    assert patched.problem is None, diff
    assert patched.data == new, diff
    bare = "".join(line for line in diff.splitlines(keepends=True) if not line.startswith("\\"))
    patched = apply_edit("udiff", bare, old, "f.txt")
    assert patched.problem is None, bare
    assert patched.data == _text(new_lines, old_ends), bare
