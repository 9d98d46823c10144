"""A block of a reply: its text, the file it names, its format, and its elisions."""

from __future__ import annotations

from dataclasses import dataclass

from tinymem.edits.directives import DeleteDirective
from tinymem.edits.elisions import find_elisions
from tinymem.edits.notelines import NoteDirective

__all__ = ["Block", "ParsedReply", "join_lines", "make_block"]


@dataclass(frozen=True, slots=True)
class Block:
    """One code block of a reply, attributed to at most one file."""

    code: str  # the fence body exactly (line endings normalized to \n), without the fence lines
    raw_path: str | None  # path as written by the model, before validation
    # "info" (fence info string) | "heading" (line(s) before the fence) | "inline-comment"
    # (the first non-blank line of `code` is a comment naming the file, kept in `code`) | None;
    # where `raw_path` or, when it is None, the `spaced` candidates came from
    path_source: str | None
    language: str | None  # language word of the info string, as written ("python", "py", ...)
    # 1-based line of the opening fence in the reply; for each file of a multi-file fence, the
    # line of the comment that starts it; 0 for unfenced code
    start_line: int
    fenced: bool
    elisions: tuple[str, ...]  # elision marker lines found in code (stripped), see find_elisions
    # "code" | "udiff" (a unified diff of this one file) | "search-replace" (aider's blocks)
    format: str = "code"
    # Unquoted words with spaces that may name the file (`path=my dir/a b.py`): the first that
    # names an existing file is the block's path, before raw_path (`spacedpaths.py`).
    spaced: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedReply:
    blocks: tuple[Block, ...]
    deletes: tuple[DeleteDirective, ...]
    prose: str  # the reply outside code blocks (for the record)
    notes: tuple[NoteDirective, ...] = ()  # NOTE lines (`notelines.py`), outside code blocks


def join_lines(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def make_block(
    code: str,
    raw_path: str | None,
    source: str | None,
    language: str | None,
    start_line: int,
    fenced: bool,
    spaced: tuple[str, ...] = (),
) -> Block:
    return Block(
        code=code,
        raw_path=raw_path,
        path_source=source if raw_path is not None or spaced else None,
        language=language,
        start_line=start_line,
        fenced=fenced,
        elisions=find_elisions(code),
        spaced=spaced,
    )
