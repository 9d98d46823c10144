"""`reapply.rebase_edit`, the rule by which tm applies a proposal's edit again to a file its own
accepts changed since the ask, against a three-way merge: the edit re-applied gives what
applying it to the ask-time text and then the change since gives, and it is refused where the
two touch (audit D6, review items 1 and 2)."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from tinymem.edits.patches import apply_edit
from tinymem.reapply import rebase_edit

LINE = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h", "    a", ""])
LINES = st.lists(LINE, min_size=1, max_size=12)


def _sr(search: list[str], replace: list[str]) -> str:
    def body(lines: list[str]) -> str:
        return "".join(line + "\n" for line in lines)

    return f"<<<<<<< SEARCH\n{body(search)}=======\n{body(replace)}>>>>>>> REPLACE\n"


def _text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


@st.composite
def _edit(draw: st.DrawFn, size: int) -> tuple[int, int, list[str]]:
    start = draw(st.integers(0, size - 1))
    end = draw(st.integers(start + 1, min(size, start + 3)))
    return start, end, draw(st.lists(LINE, max_size=3))


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_an_edit_applied_again_is_the_merge_or_refused(data: st.DataObject) -> None:
    base = data.draw(LINES)
    i, j, mine = data.draw(_edit(len(base)))
    k, m, theirs = data.draw(_edit(len(base)))
    edit = _sr(base[i:j], base[i:j] + mine)
    change = _sr(base[k:m], theirs)
    if not any(line.strip() for line in base[i:j]) or not any(line.strip() for line in base[k:m]):
        return  # an empty SEARCH is no edit
    now = apply_edit("search-replace", change, _text(base), "f.txt", exact=True)
    if now.problem is not None or now.data is None:
        return  # the change since is not one tm could have made
    merged = rebase_edit("search-replace", edit, _text(base), now.data, "f.txt")
    after = now.data.decode().splitlines()
    if isinstance(merged, bytes):
        # The merge: the change since as difflib aligns it, the edit's lines at the place its
        # SEARCH held in the ask-time text, moved by what the change added or took out above.
        shift = sum(
            (j2 - j1) - (i2 - i1)
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
                None, base, after, autojunk=False
            ).get_opcodes()
            if tag != "equal" and i2 <= i
        )
        at = i + shift
        assert after[at : at + j - i] == base[i:j]
        assert merged == _text(after[:at] + base[i:j] + mine + after[at + j - i :]), (
            base,
            edit,
            change,
        )
        assert merged != now.data
    # A line between the two, both where they were made and where a diff of the two texts
    # places the change since: in a run of equal lines the texts alone cannot say which of
    # them went (git's merge cannot either).
    apart = (j < k or m < i) and all(
        i2 < i or j < i1
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(
            None, base, after, autojunk=False
        ).get_opcodes()
        if tag != "equal"
    )
    unique = (
        _count(base, base[i:j]) == 1
        and _count(base, base[k:m]) == 1
        and _count(after, base[i:j]) == 1
    )
    if apart and unique and mine and now.data != _text(base):
        assert isinstance(merged, bytes), (base, edit, change, merged)


def _count(lines: list[str], run: list[str]) -> int:
    return sum(lines[x : x + len(run)] == run for x in range(len(lines) - len(run) + 1))


BASE = b"import os\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"
DIFF = "--- a/a.py\n+++ b/a.py\n@@ -7,3 +7,3 @@\n \n def g():\n-    return 2\n+    return 3\n"


def test_a_diff_is_applied_again_away_from_the_change_and_refused_beside_it() -> None:
    apart = BASE.replace(b"import os\n", b"import os\nimport re\n")
    assert rebase_edit("udiff", DIFF, BASE, apart, "a.py") == apart.replace(
        b"return 2", b"return 3"
    )
    # A line added between the hunk's context lines (the blank line and def g).
    beside = BASE.replace(b"    return 1\n\n\n", b"    return 1\n\n\nX = 1\n")
    assert isinstance(rebase_edit("udiff", DIFF, BASE, beside, "a.py"), str)
    assert isinstance(rebase_edit("udiff", DIFF, BASE, BASE.replace(b"2", b"5"), "a.py"), str)


def test_a_change_a_diff_places_beside_the_edit_is_refused() -> None:
    """Three lines taken out of a run of `a`s two lines above the edit: a diff of the texts
    places the change right beside it (which `a`s went, the texts cannot say), so it is
    refused, not merged on a guess (hypothesis found it)."""
    base = _text(["a"] * 8 + ["b", "a", "c"])
    now = _text(["a"] * 7 + ["c"])
    merged = rebase_edit("search-replace", _sr(["c"], ["c", "a"]), base, now, "f.txt")
    assert isinstance(merged, str)
    assert "beside" in merged
