"""Regex fallback for languages without a grammar, driven by `tinymem/data/patterns.json`.

Regex results are never CONFIRMED (`clean=False`): a pattern can match inside a string or a
comment, and spans are guessed from indentation:

- a definition runs from its match line to the line before the next match at the same or a
  lower indentation, or before the first non-blank line indented *less* than the match line
  (the end of the enclosing block, e.g. the `}` closing a class), or to EOF;
- but a closing line (`}`, `)`, `]`, `end`) at the match line's own indentation ends the
  definition *with* that line: without this rule a method would run on over non-matching
  peers that follow it (a Kotlin `companion object { ... }`);
- trailing blank lines are trimmed, as is the final line break.

The data file is read once, on first use; each language's regexes compile on first use.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from importlib import resources

from tinymem.symbols.assemble import RawDef, assemble
from tinymem.symbols.languages import extension_of
from tinymem.symbols.model import KINDS, METHOD_REGEX, Extraction

# Kinds that make a nested "function" a method (module-like kinds do not: Elixir, Perl).
_METHOD_CONTAINERS = frozenset({"class", "struct", "interface", "trait", "enum", "impl"})
_CLOSER = re.compile(r"[ \t]*(?:[})\]]|end\b)")


@dataclass(frozen=True, slots=True)
class _Pattern:
    kind: str
    regex: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class _RegexLanguage:
    name: str
    split_names: bool
    sources: tuple[tuple[str, str], ...]  # (kind, regex source), compiled lazily


_BY_EXTENSION: dict[str, _RegexLanguage] | None = None
_COMPILED: dict[str, tuple[_Pattern, ...]] = {}


def _load() -> dict[str, _RegexLanguage]:
    global _BY_EXTENSION
    if _BY_EXTENSION is None:
        raw = resources.files("tinymem").joinpath("data/patterns.json").read_bytes()
        doc = json.loads(raw)
        table: dict[str, _RegexLanguage] = {}
        for name, entry in doc["languages"].items():
            sources = tuple((str(p["kind"]), str(p["regex"])) for p in entry["patterns"])
            for kind, _ in sources:
                if kind not in KINDS:
                    raise ValueError(f"patterns.json: unknown kind {kind!r} for {name}")
            lang = _RegexLanguage(name, bool(entry.get("split_names", False)), sources)
            for ext in entry["extensions"]:
                table[str(ext).lower()] = lang
        _BY_EXTENSION = table
    return _BY_EXTENSION


def regex_language_for_path(path: str) -> str | None:
    lang = _load().get(extension_of(path))
    return None if lang is None else lang.name


def _patterns(lang: _RegexLanguage) -> tuple[_Pattern, ...]:
    compiled = _COMPILED.get(lang.name)
    if compiled is None:
        compiled = tuple(
            _Pattern(kind, re.compile(src, re.MULTILINE)) for kind, src in lang.sources
        )
        _COMPILED[lang.name] = compiled
    return compiled


def _indent(line: str) -> int:
    stripped = line.lstrip(" \t")
    if not stripped.strip():
        return -1  # blank: no indentation of its own
    prefix = line[: len(line) - len(stripped)]
    return len(prefix.expandtabs(4))


def _name_parts(name: str, split: bool) -> tuple[str, ...]:
    if not split:
        return (name,) if name else ()
    name = name.replace("::", ".").replace(":", ".")
    return tuple(p for p in name.split(".") if p)


def extract_regex(path: str, data: bytes) -> Extraction | None:
    """Symbols by regex for a fallback extension; None when no patterns cover `path`."""
    lang = _load().get(extension_of(path))
    if lang is None:
        return None
    # surrogateescape: undecodable bytes survive one-to-one, so offsets stay computable.
    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    char_starts: list[int] = []
    byte_starts: list[int] = []
    ascii_only = data.isascii()
    char_pos = byte_pos = 0
    for line in lines:
        char_starts.append(char_pos)
        byte_starts.append(byte_pos)
        char_pos += len(line) + 1
        byte_pos += _byte_len(line, ascii_only) + 1

    # One definition per line: the first pattern (in file order) that matches it.
    found: dict[int, tuple[str, str]] = {}
    for pattern in _patterns(lang):
        for match in pattern.regex.finditer(text):
            line_no = bisect.bisect_right(char_starts, match.start()) - 1
            name = match.group("name")
            if line_no not in found and name:
                found[line_no] = (pattern.kind, name)
    if not found:
        return _result(lang.name, path, ())

    indents = [_indent(line) for line in lines]
    # next_dedent[i]: first later non-blank line indented less than line i (monotonic stack).
    count = len(lines)
    next_dedent = [count] * count
    stack: list[int] = []
    for i in range(count):
        if indents[i] < 0:
            continue
        while stack and indents[stack[-1]] > indents[i]:
            next_dedent[stack.pop()] = i
        stack.append(i)
    match_lines = sorted(found)
    # next_peer[i]: the next match line at the same or a lower indentation.
    next_peer: dict[int, int] = {}
    stack = []
    for line_no in match_lines:
        while stack and indents[stack[-1]] >= indents[line_no]:
            next_peer[stack.pop()] = line_no
        stack.append(line_no)

    # Closing lines by indentation, in line order, for a bisect per match.
    closers: dict[int, list[int]] = {}
    for i, line in enumerate(lines):
        if indents[i] >= 0 and _CLOSER.match(line):
            closers.setdefault(indents[i], []).append(i)

    raws: list[RawDef] = []
    for line_no in match_lines:
        last = min(next_peer.get(line_no, count), next_dedent[line_no]) - 1
        same_indent = closers.get(indents[line_no], [])
        k = bisect.bisect_right(same_indent, line_no)
        if k < len(same_indent):
            last = min(last, same_indent[k])
        while last > line_no and indents[last] < 0:
            last -= 1
        start = byte_starts[line_no] + _leading_ws(lines[line_no])
        end = byte_starts[last] + _byte_len(lines[last], ascii_only)
        end = min(end, len(data))
        while end > start and data[end - 1] in b" \t\r\n":
            end -= 1
        kind, name = found[line_no]
        parts = _name_parts(name, lang.split_names)
        if parts and end > start:
            raws.append(RawDef(start, end, parts, kind))
    return _result(lang.name, path, tuple(raws))


def _byte_len(line: str, ascii_only: bool) -> int:
    return len(line) if ascii_only else len(line.encode("utf-8", "surrogateescape"))


def _leading_ws(line: str) -> int:
    # Spans start at the definition's first character, like tree-sitter spans do; the
    # skipped indentation is ASCII, so its length in characters is its length in bytes.
    return len(line) - len(line.lstrip(" \t"))


def _result(language: str, path: str, raws: tuple[RawDef, ...]) -> Extraction:
    ext = extension_of(path)
    return Extraction(
        language=language,
        method=METHOD_REGEX,
        symbols=assemble(raws, _METHOD_CONTAINERS),
        clean=False,
        reason=f"regex fallback: no grammar for {ext}",
    )
