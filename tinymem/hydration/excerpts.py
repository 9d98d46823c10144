"""An entity shown as it sits in its file, so that what the model copies back aligns.

A member comes under the header line(s) of every container around it (`class Session(…):`,
`impl<E> Iterator for Chain<E> {`), at its original indentation, decorators aligned with
their definition, and the container's closing line (`}`, `end`) after it; `⋮` stands where
lines are left out (as aider's repository map writes it). With the `⋮` lines removed, an
excerpt parses: copied back with one member changed, it is read as that member.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache

from tinymem.containercache import known_containers
from tinymem.edits.normalise import EXCERPT_MARK
from tinymem.symbols.containers import line_starts

__all__ = ["file_part", "render"]


def render(
    language: str | None,
    data: bytes,
    spans: list[tuple[int, int]],
    cache_dir: str | None = None,
) -> str:
    """The lines of `data` that hold `spans` (byte ranges of entities shown in full), under
    the headers and above the closers of the containers around them, `⋮` for the rest.
    `cache_dir`: where the containers found in a text are kept (`containercache`)."""
    boxes = known_containers(cache_dir, language, data)
    starts = line_starts(data)

    def row(offset: int) -> int:
        return bisect_right(starts, offset) - 1

    lines = _lines(data)
    keep: set[int] = set()
    ends: list[int] = []  # the last row of each outermost container an entity is in
    for start, end in spans:
        keep.update(range(row(start), row(max(end - 1, start)) + 1))
        around = [
            b
            for b in boxes
            if b.start <= start and end <= b.end and (b.start, b.end) != (start, end)
        ]
        for box in around:
            keep.update(range(box.head_first, box.head_last + 1))
            if box.closer is not None:
                keep.add(box.closer)
        if around:
            outer = min(around, key=lambda b: b.start)
            ends.append(row(max(outer.end - 1, outer.start)))
    out: list[str] = []
    previous: int | None = None
    for number in sorted(keep):
        if previous is not None and number > previous + 1:
            out.append(_mark(lines, number))
        out.append(lines[number])
        previous = number
    if previous is not None and any(end > previous for end in ends):
        # More of the container follows: mark it at the indentation of what comes next.
        following = next((i for i in range(previous + 1, len(lines)) if lines[i].strip()), previous)
        out.append(_mark(lines, following))
    return "\n".join(out)


def file_part(
    path: str,
    language: str | None,
    data: bytes,
    spans: list[tuple[int, int]],
    keys: list[str],
    cache_dir: str | None = None,
) -> str:
    """One file's part of a prompt: its entity keys, then the excerpt fenced with its path
    (the fence info a reply copies back)."""
    text = render(language, data, spans, cache_dir)
    return f"### {', '.join(keys)}\n```{language or ''} path={path}\n{text}\n```\n"


@lru_cache(maxsize=64)
def _lines(data: bytes) -> tuple[str, ...]:
    """The lines of a text, kept for the texts rendered last (`tm serve` shows the same
    files again; splitting checker.py, 200 KB, for each part cost more than rendering it)."""
    return tuple(data.decode("utf-8", "replace").split("\n"))


def _mark(lines: tuple[str, ...], number: int) -> str:
    """A `⋮` line at the indentation of the line it stands next to."""
    line = lines[number] if number < len(lines) else ""
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    return indent + EXCERPT_MARK
