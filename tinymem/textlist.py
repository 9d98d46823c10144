"""A list said in a sentence: the first few items and how many more, so a message stays one
line however long the list (`a, b, c and 2 more`)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["shortened"]


def shortened(items: Sequence[str], shown: int = 3, *, sep: str = ", ") -> str:
    """The first `shown` of `items` joined by `sep`, then " and N more" for the rest (nothing
    when all are shown). The items come formatted: callers quote or cut them as they need."""
    text = sep.join(items[:shown])
    if len(items) > shown:
        text += f" and {len(items) - shown} more"
    return text
