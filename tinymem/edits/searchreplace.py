"""SEARCH/REPLACE blocks in aider's form, which models trained on aider write by habit:

    src/app.py
    ```python
    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE
    ```

The path is on the line before the fence, in its info string, or on a line of its own (a
bare path or a comment naming it) before the pairs inside the fence; the reply reader finds it
(`formats.py`). Several pairs may share one fence; they are applied in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Pair", "has_search_replace", "parse_pairs"]

_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\s*$")


@dataclass(frozen=True)
class Pair:
    search: list[str]
    replace: list[str]
    line: int  # 1-based line of its `<<<<<<< SEARCH` within the block


def has_search_replace(lines: list[str]) -> bool:
    return any(_SEARCH.match(line) for line in lines)


def parse_pairs(text: str) -> tuple[list[Pair], str | None]:
    """The pairs of a block, or why the block is not well formed."""
    lines = text.split("\n")
    pairs: list[Pair] = []
    index = 0
    while index < len(lines):
        if not _SEARCH.match(lines[index]):
            index += 1
            continue
        start = index
        divider = next((i for i in range(index + 1, len(lines)) if _DIVIDER.match(lines[i])), None)
        if divider is None:
            return pairs, f"the SEARCH at line {start + 1} has no ======= line"
        end = next((i for i in range(divider + 1, len(lines)) if _REPLACE.match(lines[i])), None)
        if end is None:
            return pairs, f"the SEARCH at line {start + 1} has no >>>>>>> REPLACE line"
        pairs.append(Pair(lines[start + 1 : divider], lines[divider + 1 : end], start + 1))
        index = end + 1
    if not pairs:
        return pairs, "no complete SEARCH/REPLACE pair"
    return pairs, None
