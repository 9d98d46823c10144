"""Unified diffs and SEARCH/REPLACE blocks: read from replies, applied to the State Map's text."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from tinymem.edits.patches import apply_edit
from tinymem.edits.reply import parse_reply
from tinymem.edits.searchreplace import parse_pairs
from tinymem.edits.udiff import parse_diff, split_files

F = "```"
ORIGINAL = b"import os\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"


# --- reading -------------------------------------------------------------------------------


def test_diff_fence_is_one_block_per_file_named_by_its_headers() -> None:
    reply = (
        f"Here:\n\n{F}diff\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        f"--- a/src/y.py\n+++ b/src/y.py\n@@ -4 +4 @@\n-d\n+e\n{F}\n"
    )
    blocks = parse_reply(reply).blocks
    assert [(b.raw_path, b.path_source, b.format) for b in blocks] == [
        ("src/x.py", "diff-header", "udiff"),
        ("src/y.py", "diff-header", "udiff"),
    ]
    assert blocks[1].code.startswith("--- a/src/y.py\n+++ b/src/y.py\n")


def test_bare_diff_in_a_reply_without_fences_ends_at_the_prose() -> None:
    reply = (
        "I changed b:\n--- a/m.py\n+++ b/m.py\n@@ -8,2 +8,2 @@\n def b():\n-    return 2\n"
        "+    return 3\n\nThis returns 3 now.\n"
    )
    (block,) = parse_reply(reply).blocks
    assert (block.raw_path, block.format, block.fenced) == ("m.py", "udiff", False)
    assert "This returns" not in block.code
    assert "This returns 3 now." in parse_reply(reply).prose


def test_diff_in_a_python_fence_without_the_diff_word_is_still_a_diff() -> None:
    reply = f"{F}python\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-import os\n+import sys\n{F}\n"
    (block,) = parse_reply(reply).blocks
    assert block.format == "udiff"


def test_search_replace_path_before_the_fence_or_inside_it() -> None:
    pair = "<<<<<<< SEARCH\n    return 1\n=======\n    return 10\n>>>>>>> REPLACE\n"
    before = parse_reply(f"m.py\n{F}python\n{pair}{F}\n").blocks[0]
    inside = parse_reply(f"{F}\nm.py\n{pair}{F}\n").blocks[0]
    for block in (before, inside):
        assert (block.raw_path, block.format) == ("m.py", "search-replace")


def test_bare_search_replace_pairs_share_the_path_named_once() -> None:
    pair = "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
    blocks = parse_reply(f"src/m.py\n{pair}{pair}").blocks
    assert [b.raw_path for b in blocks] == ["src/m.py", "src/m.py"]


def test_elisions_counted_only_in_added_lines() -> None:
    context = (
        f"{F}diff\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n # ... rest\n-a = 1\n+a = 2\n{F}\n"
    )
    assert parse_reply(context).blocks[0].elisions == ()
    added = (
        f"{F}diff\n--- a/m.py\n+++ b/m.py\n@@ -1 +1,2 @@\n-a = 1\n+a = 2\n+# ... rest of code\n"
        f"{F}\n"
    )
    assert parse_reply(added).blocks[0].elisions == ("# ... rest of code",)


def test_split_files_new_and_deleted() -> None:
    lines = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n--- a/old.py\n+++ /dev/null\n"
    assert [p for p, _ in split_files(lines.splitlines())] == ["new.py", "old.py"]


def test_parse_diff_tolerates_missing_headers_and_space_prefixes() -> None:
    diff = parse_diff("--- a/m.py\n+++ b/m.py\n def b():\n\n-    return 2\n+    return 3\n")
    (hunk,) = diff.hunks
    assert hunk.header == "" and hunk.old == ["def b():", "", "    return 2"]
    assert hunk.new == ["def b():", "", "    return 3"]


def test_parse_pairs_reports_a_broken_pair() -> None:
    pairs, problem = parse_pairs("<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n")
    assert pairs == [] and problem is not None and "=======" in problem


# --- applying ------------------------------------------------------------------------------


def _lines(data: bytes) -> list[str]:
    # Not str.splitlines: it also breaks at form feeds and other separators, a diff does not.
    return [line + "\n" for line in data.decode().split("\n")[:-1]]


def _diff(old: bytes, new: bytes, context: int = 3) -> str:
    lines = difflib.unified_diff(
        _lines(old),
        _lines(new),
        "a/m.py",
        "b/m.py",
        n=context,
    )
    return "".join(lines)


def test_exact_hunk_applies_and_keeps_the_files_bytes() -> None:
    new = ORIGINAL.replace(b"return 2", b"return 20")
    patched = apply_edit("udiff", _diff(ORIGINAL, new), ORIGINAL, "m.py")
    assert patched.problem is None and patched.data == new


def test_line_numbers_are_hints_context_decides() -> None:
    diff = "--- a/m.py\n+++ b/m.py\n@@ -900,2 +900,2 @@\n def b():\n-    return 2\n+    return 3\n"
    patched = apply_edit("udiff", diff, ORIGINAL, "m.py")
    assert patched.data == ORIGINAL.replace(b"return 2", b"return 3")


def test_hunk_matching_nowhere_or_twice_is_named() -> None:
    nowhere = "--- a/m.py\n+++ b/m.py\n@@ -4,2 +4,2 @@\n def c():\n-    return 1\n+    return 9\n"
    patched = apply_edit("udiff", nowhere, ORIGINAL, "m.py")
    assert patched.data is None and patched.aimed == 4
    assert patched.problem == "hunk 1 (@@ -4,2 +4,2 @@) matches nowhere in the State Map's m.py"
    twice = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    problem = apply_edit("udiff", twice, b"x = 1\ny = 0\nx = 1\n", "m.py").problem
    assert problem == "hunk 1 (@@ -1 +1 @@) matches 2 places in the State Map's m.py"
    blank = "--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-\n+# x\n"
    assert "has no context lines" in (apply_edit("udiff", blank, ORIGINAL, "m.py").problem or "")


def test_trailing_whitespace_and_crlf_are_set_aside_when_matching() -> None:
    crlf = ORIGINAL.replace(b"\n", b"\r\n").replace(b"return 2", b"return 2   ")
    diff = "--- a/m.py\n+++ b/m.py\n@@ -8,2 +8,2 @@\n def b():\n-    return 2\n+    return 3\n"
    patched = apply_edit("udiff", diff, crlf, "m.py")
    assert patched.data == crlf.replace(b"return 2   ", b"return 3")  # CRLF kept


def test_no_final_newline_is_kept() -> None:
    text = b"a = 1\nb = 2"
    patched = apply_edit(
        "udiff", "--- a/m.py\n+++ b/m.py\n@@\n a = 1\n-b = 2\n+b = 3\n", text, "m.py"
    )
    assert patched.data == b"a = 1\nb = 3"


def test_new_and_deleted_files() -> None:
    created = apply_edit(
        "udiff", "--- /dev/null\n+++ b/n.py\n@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n", None, "n.py"
    )
    assert created.creates and created.data == b"a = 1\nb = 2\n"
    gone = apply_edit(
        "udiff", "--- a/m.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-import os\n", ORIGINAL, "m.py"
    )
    assert gone.data is None and gone.problem is None
    exists = apply_edit("udiff", "--- /dev/null\n+++ b/m.py\n@@\n+x\n", ORIGINAL, "m.py")
    assert exists.problem is not None and "already has" in exists.problem


def test_search_replace_pairs_apply_in_order_exactly_once() -> None:
    code = (
        "<<<<<<< SEARCH\n    return 1\n=======\n    return 10\n>>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\n    return 2\n=======\n    return 20\n>>>>>>> REPLACE\n"
    )
    patched = apply_edit("search-replace", code, ORIGINAL, "m.py")
    assert patched.data == ORIGINAL.replace(b"return 1", b"return 10").replace(
        b"return 2", b"return 20"
    )
    missing = "<<<<<<< SEARCH\n    return 7\n=======\n    return 8\n>>>>>>> REPLACE\n"
    problem = apply_edit("search-replace", missing, ORIGINAL, "m.py").problem
    assert problem == "SEARCH/REPLACE 1 (line 1): its SEARCH text matches nowhere in m.py"


def test_empty_search_creates_a_new_file_only() -> None:
    code = "<<<<<<< SEARCH\n=======\nx = 1\n>>>>>>> REPLACE\n"
    assert apply_edit("search-replace", code, None, "n.py").data == b"x = 1\n"
    assert "empty" in (apply_edit("search-replace", code, ORIGINAL, "n.py").problem or "")


_LINE = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(_LINE, min_size=1, max_size=30),
    data=st.data(),
)
def test_a_diff_of_any_text_applies_back_to_exactly_the_new_text(
    lines: list[str], data: st.DataObject
) -> None:
    """Whatever the text, a hunk that matches once gives exactly the new text; one that does
    not match once is refused (never applied somewhere else)."""
    old = ("\n".join(lines) + "\n").encode()
    start = data.draw(st.integers(0, len(lines) - 1))
    end = data.draw(st.integers(start, len(lines)))
    replacement = data.draw(st.lists(_LINE, max_size=4))
    new_lines = lines[:start] + replacement + lines[end:]
    new = ("\n".join(new_lines) + "\n").encode() if new_lines else b""
    patched = apply_edit("udiff", _diff(old, new, context=2), old, "m.py")
    if patched.problem is None:
        assert patched.data == new
    else:
        assert patched.data is None
        assert (
            "matches" in patched.problem
            or "no context" in patched.problem
            or "no hunks" in patched.problem
        )
