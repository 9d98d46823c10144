"""Turn a small model's reply (Markdown-ish text) into code blocks, raw paths and deletions.

Pure text in, data out, and `parse_reply` never raises: a reply is untrusted input and a
parser crash would lose the whole episode. Paths are *reported* here exactly as the model
wrote them; deciding whether one is safe is `paths.repo_relative`'s job (see `block_path`).

What small (3B-14B) coding models really emit, and what this module survives:

- fences of ``` or ~~~ (3+), longer fences around shorter ones, fences indented inside list
  items, a last fence never closed (the reply hit max tokens), CRLF;
- the file named in the info string (```` ```python path=a.py ````, ```` ```py:a.py ````,
  ```` ```a.py ````, ``title=``/``file=``/``{file="a.py"}``), on the line before the fence
  (``### a.py``, ``**File:** `a.py` ``, ``Here is the updated `a.py`:``), or in a comment on the
  first line of the code (``# a.py``, ``// src/x.ts``), of a diff or of SEARCH/REPLACE pairs;
- several files in one fence separated by comment lines naming them (between pairs, for
  SEARCH/REPLACE);
- no fences at all;
- elisions (``# ... rest of the code unchanged``) that would delete code if taken literally;
- the whole reply wrapped in ```` ```markdown ```` (unwrapped when the wrapper names no file:
  its DELETE and NOTE lines are the reply's, the code blocks inside it stay code);
- a leading ``<think>...</think>`` section (reasoning models): drafts there are not proposals.

Deletion is never inferred from an omission: an explicit directive line outside fences,
``DELETE: path::Symbol`` or ``DELETE: path`` (keyword case-insensitive, optionally bold or in
backticks, optionally a list item), is a deletion, and so is a diff or SEARCH/REPLACE block
that removes a definition's lines (`directives.py`). See `DELETE_DIRECTIVE_HELP`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Container
from dataclasses import replace
from typing import NamedTuple

from tinymem.edits.blocks import Block, ParsedReply, join_lines, make_block
from tinymem.edits.comments import comment_path
from tinymem.edits.directives import DeleteDirective, delete_target
from tinymem.edits.fences import OPEN_FENCE_RE, Fence, heading_path, split_fences
from tinymem.edits.formats import bare_edit_blocks, edit_blocks
from tinymem.edits.infostring import parse_info
from tinymem.edits.notelines import NoteDirective, note_directive
from tinymem.edits.spacedpaths import existing_file
from tinymem.edits.unfenced import unfenced_region
from tinymem.errors import UnsafePathError
from tinymem.paths import is_placeholder_path, repo_relative

__all__ = ["Block", "BlockPath", "ParsedReply", "block_path", "parse_reply"]

# Languages whose bodies legitimately contain comment-like lines naming files (headings,
# diff headers): never split these into several files.
_NO_SPLIT_LANGS = frozenset({"md", "markdown", "mdx", "diff", "patch", "udiff"})


def _blocks_from_body(
    body: list[str],
    code: str,
    outer_path: str | None,
    outer_source: str | None,
    language: str | None,
    start_line: int,
    fenced: bool,
    outer_spaced: tuple[str, ...] = (),
) -> list[Block]:
    """One block, or one per file when comment lines naming files separate several."""
    first = next((i for i, line in enumerate(body) if line.strip()), None)
    if first is None:
        return []
    separators: list[tuple[int, str]] = []
    if (language or "").lower() not in _NO_SPLIT_LANGS:
        for i, line in enumerate(body):
            named = comment_path(line)
            if named is None:
                continue
            path, decorated = named
            # Mid-body, a plain `# x.py` comment right under code is more likely a remark than a
            # new file; a blank line above it or a banner/`File:` label makes it a separator.
            if i == first or decorated or not body[i - 1].strip():
                separators.append((i, path))
    at_start = bool(separators) and separators[0][0] == first
    if not separators or (len(separators) == 1 and at_start):
        # The code's own first line naming its file wins over a name in the prose before the
        # fence (`Here is the updated certs.py:` above `# src/requests/certs.py`): the prose
        # often gives the base name only. An info string (`path=`) is the block's own label.
        heading = outer_source == "heading"
        if (outer_path is not None or outer_spaced) and not (at_start and heading):
            return [
                make_block(
                    code, outer_path, outer_source, language, start_line, fenced, outer_spaced
                )
            ]
        if at_start:
            path = separators[0][1]
            return [make_block(code, path, "inline-comment", language, start_line, fenced)]
        return [make_block(code, None, None, language, start_line, fenced)]
    # Several files: each separator names its own segment. An info/heading path (often just
    # the last of several files the sentence lists) only claims code before the first one.
    blocks: list[Block] = []
    preamble = body[: separators[0][0]]
    if any(line.strip() for line in preamble):
        blocks.append(
            make_block(
                join_lines(_trim_blank_tail(preamble)),
                outer_path,
                outer_source,
                language,
                start_line,
                fenced,
                outer_spaced,
            )
        )
    bounds = [i for i, _ in separators] + [len(body)]
    for (index, path), end in zip(separators, bounds[1:], strict=True):
        segment = _trim_blank_tail(body[index:end])
        line_no = start_line + 1 + index if fenced else 0
        blocks.append(
            make_block(join_lines(segment), path, "inline-comment", language, line_no, fenced)
        )
    return blocks


def _trim_blank_tail(lines: list[str]) -> list[str]:
    end = len(lines)
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


# Reasoning models (qwen3, deepseek-r1 distills) may put a `<think>` section first when the
# server does not split it out; code drafted and discarded there is not a proposal.
_THINK_OPEN_RE = re.compile(r"^\s*<(think|thinking|reasoning)>", re.I)
# A whole reply wrapped in ```markdown ... ``` (small models do this when told to "answer in
# Markdown"): the real blocks are inside.
_WRAPPER_LANGS = frozenset({"markdown", "md"})


def _think_end(lines: list[str]) -> int:
    """Index of the first line after a leading `<think>...</think>` section (0 when none)."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return 0
    match = _THINK_OPEN_RE.match(lines[first])
    if match is None:
        return 0
    closer = f"</{match.group(1).lower()}>"
    for index in range(first, len(lines)):
        if closer in lines[index].lower():
            return index + 1
    return len(lines)  # never closed: the model only thought


def _parse(text: str, interrupted: bool = False) -> ParsedReply:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if interrupted:
        # A stream stopped mid-reply: its last line may be cut short (`DELETE: a.py` of
        # `DELETE: a.py::f`), so only lines it ended are read as directives.
        lines[-1] = ""
    return _parse_lines(lines, nested=False, interrupted=interrupted)


def _parse_lines(lines: list[str], *, nested: bool, interrupted: bool = False) -> ParsedReply:
    thinking = _think_end(lines)
    fences, outside = split_fences(lines, thinking)
    deletes = tuple(
        DeleteDirective(target, i + 1)
        for i in outside
        if i >= thinking and (target := delete_target(lines[i])) is not None
    )
    notes = tuple(
        NoteDirective(*found, i + 1)
        for i in outside
        if i >= thinking and (found := note_directive(lines[i])) is not None
    )
    blocks: list[Block] = []
    if fences:
        floor = thinking
        # The whole reply is one fence: nothing but blank lines around it.
        whole = len(fences) == 1 and not any(lines[i].strip() for i in outside if i >= thinking)
        for fence in fences:
            if interrupted and fence.close_index is None:
                break  # the stream stopped inside this block: what it holds is unfinished
            language, path, spaced = parse_info(fence.info)
            named = (path, spaced)
            wrapped = None if nested else _wrapper(fence, language, named, whole)
            if wrapped is not None:
                # A prose wrapper's directive lines are the reply's, as if it were unwrapped.
                offset = fence.open_index + 1
                deletes += tuple(replace(d, line=d.line + offset) for d in wrapped.deletes)
                notes += tuple(replace(n, line=n.line + offset) for n in wrapped.notes)
            if wrapped is not None and wrapped.blocks and all(b.fenced for b in wrapped.blocks):
                blocks.extend(replace(b, start_line=b.start_line + offset) for b in wrapped.blocks)
            else:
                blocks.extend(_fence_blocks(lines, fence, language, named, floor))
            floor = (fence.close_index if fence.close_index is not None else len(lines)) + 1
        prose = "\n".join(lines[i] for i in outside).strip()
        deletes = tuple(sorted(deletes, key=lambda d: d.line))  # in the reply's order
        notes = tuple(sorted(notes, key=lambda n: n.line))
        return ParsedReply(tuple(blocks), deletes, prose, notes)
    if interrupted:
        # Code with no fences has no end to tell a finished block by.
        return ParsedReply((), deletes, "\n".join(lines).strip(), notes)
    skip = {d.line - 1 for d in deletes} | {n.line - 1 for n in notes} | set(range(thinking))
    edits, used = bare_edit_blocks(lines, skip)
    if edits:
        prose = "\n".join(line for i, line in enumerate(lines) if i not in used).strip()
        return ParsedReply(tuple(edits), deletes, prose, notes)
    region = unfenced_region(lines, skip)
    if region is None:
        return ParsedReply((), deletes, "\n".join(lines).strip(), notes)
    first, last = region
    body = [line for i, line in enumerate(lines[first : last + 1], first) if i not in skip]
    blocks = _blocks_from_body(body, join_lines(body), None, None, None, 0, False)
    prose_lines = lines[:first] + [lines[i] for i in sorted(skip) if first <= i <= last]
    prose = "\n".join(prose_lines + lines[last + 1 :]).strip()
    return ParsedReply(tuple(blocks), deletes, prose, notes)


def _wrapper(
    fence: Fence,
    language: str | None,
    named: tuple[str | None, tuple[str, ...]],
    whole: bool,
) -> ParsedReply | None:
    """The body of a ```markdown fence that wraps the reply's prose, parsed as a reply (line
    numbers relative to the body), or None when the fence is a block of its own.

    A wrapper names no file in its info string and either holds fenced code blocks and
    nothing else that reads as code, or is the whole reply (its blocks are then the fence
    itself unless they are all fenced, as before). A named one is a Markdown file's text,
    and one among prose with no code fence inside is a block the model shows: their lines
    are content, never directives."""
    path, spaced = named
    if path is not None or spaced or (language or "").lower() not in _WRAPPER_LANGS:
        return None
    fenced = any(OPEN_FENCE_RE.match(line) for line in fence.body)
    if not fenced and not whole:
        return None
    # A closed wrapper's body ended with a newline; keep it for an inner unclosed fence.
    body = [*fence.body, ""] if fence.close_index is not None else fence.body
    inner = _parse_lines(body, nested=True)
    if whole or (inner.blocks and all(b.fenced for b in inner.blocks)):
        return inner
    return None


def _fence_blocks(
    lines: list[str],
    fence: Fence,
    language: str | None,
    named: tuple[str | None, tuple[str, ...]],
    floor: int,
) -> list[Block]:
    path, spaced = named
    source: str | None = "info" if path is not None or spaced else None
    if source is None:
        path, spaced = heading_path(lines, fence.open_index, floor)
        source = "heading" if path is not None or spaced else None
    start = fence.open_index + 1
    edits = edit_blocks(fence.body, language, path, source, start, True, spaced)
    if edits is not None:
        return edits
    # An unterminated fence runs to the end of the text, final newline or not.
    terminated = fence.close_index is not None
    code = join_lines(fence.body) if terminated else "\n".join(fence.body)
    return _blocks_from_body(fence.body, code, path, source, language, start, True, spaced)


def parse_reply(text: str, *, interrupted: bool = False) -> ParsedReply:
    """Parse a model reply. Never raises: on any internal failure, the reply is all prose.
    `interrupted`: the stream was stopped (Ctrl-C) before the reply ended; a block it did not
    finish (a fence never closed, code with no fences) is no block, and the last line no
    directive."""
    if not isinstance(text, str):
        return ParsedReply((), (), "")
    try:
        return _parse(text, interrupted)
    except Exception:
        # Defence in depth only: the property tests drive `_parse` directly so that a bug here
        # shows up as a failing test, not as a silently empty parse.
        return ParsedReply((), (), text)


class BlockPath(NamedTuple):
    path: str | None  # safe and repo-relative
    refusal: str | None  # why the raw path is not used
    example: bool = False  # the refusal is an example path: the model can name the real one


def block_path(block: Block, workdir: str, known: Container[str] = frozenset()) -> BlockPath:
    """The safe repo-relative path of a block's raw path, or why it is refused.

    A spaced candidate (`Block.spaced`) that names an existing file, in the work tree or in
    `known` (the State Map's files), comes first. No raw path gives no path and no refusal:
    the caller correlates the code with known symbols. An unsafe path gives the
    `UnsafePathError` sentence. An example path (`path/to/file.py`, see
    `paths.is_placeholder_path`) is ignored unless that file really exists in the work tree.
    """
    if block.spaced:
        found, refusal = existing_file(block.spaced, workdir, known)
        if found is not None:
            return BlockPath(found, None)
        if block.raw_path is None:
            return BlockPath(None, refusal)
    raw = block.raw_path
    if raw is None:
        return BlockPath(None, None)
    try:
        relative = repo_relative(workdir, raw)
        if is_placeholder_path(raw) and not os.path.lexists(os.path.join(workdir, relative)):
            return BlockPath(None, f"example path {raw!r} ignored", example=True)
        return BlockPath(relative, None)
    except UnsafePathError as err:
        return BlockPath(None, str(err))
    except Exception as err:  # never raise on model input
        return BlockPath(None, f"refused path {raw!r}: {err}")
