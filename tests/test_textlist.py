"""`textlist.shortened`: the first items of a list and how many more."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tinymem.textlist import shortened


def test_short_lists_are_said_whole() -> None:
    assert shortened([]) == ""
    assert shortened(["a"]) == "a"
    assert shortened(["a", "b", "c"]) == "a, b, c"


def test_the_rest_is_counted() -> None:
    assert shortened(["a", "b", "c", "d", "e"]) == "a, b, c and 2 more"
    assert shortened(["a", "b", "c", "d"], 2, sep="; ") == "a; b and 2 more"


# Items without the separator's comma or the word "more", so the text can be read back.
_ITEM = st.text(alphabet="abcxyz_.`/", min_size=1, max_size=8)


@given(st.lists(_ITEM, max_size=30), st.integers(min_value=1, max_value=10))
def test_shown_items_and_count_add_up_to_the_input(items: list[str], shown: int) -> None:
    text = shortened(items, shown)
    match = re.fullmatch(r"(.*?)(?: and (\d+) more)?", text)
    assert match is not None
    said = match.group(1).split(", ") if match.group(1) else []
    rest = int(match.group(2) or 0)
    assert said == items[:shown]
    assert len(said) + rest == len(items)
    assert (rest > 0) == (len(items) > shown)
