"""Which edit format a block is written in, and its blocks when it is not plain code.

Besides whole definitions (the format tm asks for), models trained on other tools answer
with unified diffs (```diff fences, or bare `--- a/x` / `+++ b/x` sections, several files in
one) and aider's SEARCH/REPLACE blocks. Both become blocks of their own format, one per
file, with the elisions of the lines they *add* (a context line that says `# ...` deletes
nothing). A fence's file may also be named inside it, as for code: a comment line (`#
src/app.py`) or a bare path first, and for SEARCH/REPLACE such a line between pairs starts
the pairs of another file.
"""

from __future__ import annotations

import re

from tinymem.edits.blocks import Block, join_lines
from tinymem.edits.comments import comment_path
from tinymem.edits.elisions import find_elisions
from tinymem.edits.filenames import clean_token, looks_like_path, path_from_line
from tinymem.edits.searchreplace import has_search_replace, parse_pairs
from tinymem.edits.spacedpaths import line_candidates
from tinymem.edits.udiff import looks_like_diff, split_files

__all__ = ["DIFF_LANGS", "bare_edit_blocks", "edit_blocks"]

DIFF_LANGS = frozenset({"diff", "patch", "udiff"})
_SR = "search-replace"
_DIFF_LINE = re.compile(r"^(?:[ +\-@\\]|diff |index |new file mode|deleted file mode)")
_SEARCH_LINE = re.compile(r"^\s*<{5,9} ?SEARCH\s*$")
_REPLACE_LINE = re.compile(r"^\s*>{5,9} ?REPLACE\s*$")


def _has_diff_lines(body: list[str]) -> bool:
    return any(line.startswith(("+", "-", "@@")) for line in body)


def _diff_elisions(code: str) -> tuple[str, ...]:
    added = [
        line[1:] for line in code.split("\n") if line.startswith("+") and not line.startswith("+++")
    ]
    return find_elisions("\n".join(added))


def _pairs_elisions(code: str) -> tuple[str, ...]:
    pairs, _problem = parse_pairs(code)
    return find_elisions("\n".join(line for p in pairs for line in p.replace))


def _block(
    code: str,
    path: str | None,
    source: str | None,
    language: str | None,
    start_line: int,
    fenced: bool,
    fmt: str,
    spaced: tuple[str, ...] = (),
) -> Block:
    elisions = _diff_elisions(code) if fmt == "udiff" else _pairs_elisions(code)
    return Block(
        code=code,
        raw_path=path,
        path_source=source if path is not None or spaced else None,
        language=language,
        start_line=start_line,
        fenced=fenced,
        elisions=elisions,
        format=fmt,
        spaced=spaced,
    )


def _named_path(line: str) -> str | None:
    """The path a line outside SEARCH/REPLACE pairs names: a comment naming a file (`#
    src/app.py`), or a bare path (any token with a separator: nothing else is code there)."""
    stripped = line.strip()
    named = comment_path(stripped)
    if named is not None:
        return named[0]
    token = clean_token(stripped)
    return token if " " not in stripped and looks_like_path(token, loose=True) else None


def _line_path(line: str) -> tuple[str | None, tuple[str, ...]]:
    """The path a prose line names, and its spaced candidates (`spacedpaths.py`)."""
    spaced, words = line_candidates(line)
    return path_from_line(words), spaced


def _leading_comment_path(body: list[str]) -> tuple[str | None, int]:
    """A comment naming a file on the first line of a diff (`# src/app.py`), and where the
    diff starts after it. Unprefixed lines are context in a lenient diff, so only a line that
    is no diff line and names a file is taken."""
    for row, line in enumerate(body):
        if not line.strip():
            continue
        if line.startswith(("--- ", "+++ ", "@@", " ", "+", "-", "\\")):
            return None, 0
        named = comment_path(line)
        return (named[0], row + 1) if named is not None else (None, 0)
    return None, 0


def _search_replace_blocks(
    body: list[str],
    language: str | None,
    path: str | None,
    source: str | None,
    start_line: int,
    fenced: bool,
    spaced: tuple[str, ...],
) -> list[Block]:
    """One block per file: lines outside the pairs that name a file start its pairs. A path
    the fence's info string or heading gives claims the pairs before the first such line
    (all of them when only the first line names one, as for code)."""
    separators: list[tuple[int, str]] = []
    pairing = False
    for row, line in enumerate(body):
        if _SEARCH_LINE.match(line):
            pairing = True
        elif _REPLACE_LINE.match(line):
            pairing = False
        elif not pairing and line.strip() and (named := _named_path(line)) is not None:
            separators.append((row, named))
    first = next((row for row, line in enumerate(body) if line.strip()), 0)
    if len(separators) == 1 and separators[0][0] == first:
        if path is None and not spaced:
            path, source = separators[0][1], "inline-comment"
        separators = []
    outer = (path, source, language, start_line, fenced, _SR, spaced)
    if not separators:
        return [_block(join_lines(body), *outer)]
    blocks: list[Block] = []
    preamble = body[: separators[0][0]]
    if has_search_replace(preamble):
        blocks.append(_block(join_lines(preamble), *outer))
    bounds = [row for row, _named in separators] + [len(body)]
    for (row, named), end in zip(separators, bounds[1:], strict=True):
        segment = body[row:end]
        if not has_search_replace(segment):
            continue  # a line naming a file with no pair after it
        line_no = start_line + 1 + row if fenced else 0
        blocks.append(
            _block(join_lines(segment), named, "inline-comment", language, line_no, fenced, _SR)
        )
    return blocks


def edit_blocks(
    body: list[str],
    language: str | None,
    path: str | None,
    source: str | None,
    start_line: int,
    fenced: bool,
    spaced: tuple[str, ...] = (),
) -> list[Block] | None:
    """The blocks of a diff or SEARCH/REPLACE body; None when the body is plain code.
    `spaced`: the fence's spaced path candidates, which claim the body as `path` would."""
    lang = (language or "").lower()
    # A ```diff fence holding plain code (no header, no hunk, no +/- column) is code: models
    # label a changed function "diff" without writing a diff.
    if looks_like_diff(body) or (lang in DIFF_LANGS and _has_diff_lines(body)):
        named_here, begin = _leading_comment_path(body)
        if path is None and not spaced and named_here is not None:
            path, source = named_here, "inline-comment"
        blocks = []
        for named, lines in split_files(body[begin:]):
            own = (named, "diff-header", ())  # the diff's own header names its file
            raw, src, claim = (path, source, spaced) if named is None else own
            blocks.append(
                _block(join_lines(lines), raw, src, language, start_line, fenced, "udiff", claim)
            )
        return blocks
    if has_search_replace(body):
        return _search_replace_blocks(body, language, path, source, start_line, fenced, spaced)
    return None


def bare_edit_blocks(lines: list[str], skip: set[int]) -> tuple[list[Block], set[int]]:
    """Diffs and SEARCH/REPLACE blocks in a reply with no fences, and the lines they use."""
    blocks: list[Block] = []
    used: set[int] = set()
    index = 0
    while index < len(lines):
        line = lines[index]
        if index in skip:
            index += 1
            continue
        if (
            line.startswith("--- ")
            and index + 1 < len(lines)
            and lines[index + 1].startswith("+++ ")
        ):
            end = index + 2
            while end < len(lines) and (not lines[end].strip() or _DIFF_LINE.match(lines[end])):
                end += 1
            while end > index and not lines[end - 1].strip():
                end -= 1
            found = edit_blocks(lines[index:end], "diff", None, None, 0, False) or []
            blocks.extend(found)
            used.update(range(index, end))
            index = end
            continue
        if _SEARCH_LINE.match(line):
            closer = next(
                (i for i in range(index, len(lines)) if _REPLACE_LINE.match(lines[i])), None
            )
            if closer is None:
                index += 1
                continue
            end = closer
            before = next((i for i in range(index - 1, -1, -1) if lines[i].strip()), None)
            path, spaced = _line_path(lines[before]) if before is not None else (None, ())
            if before is not None and _REPLACE_LINE.match(lines[before]) and blocks:
                # the next pair of the same file
                path, spaced = blocks[-1].raw_path, blocks[-1].spaced
            body = lines[index : end + 1]
            source = "heading" if path or spaced else None
            blocks.append(_block(join_lines(body), path, source, None, 0, False, _SR, spaced))
            used.update(range(index, end + 1))
            if source is not None and before is not None:
                used.add(before)
            index = end + 1
            continue
        index += 1
    return blocks, used
