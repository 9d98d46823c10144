"""Replies with no fences at all: is the whole reply code, and where does it start and end?"""

from __future__ import annotations

import re

__all__ = ["unfenced_region"]


_CODE_START_RE = re.compile(
    r"^(?:def |class |async def |async fn |import |from [\w.]+ import |func |fn |pub |package "
    r"|#include|#define|#import|#pragma|#ifn?def|#endif|#!|const |let |var |function[ *(]"
    r"|export |return\b|if ?\(|for ?\(|while ?\(|switch ?\(|struct |enum |impl\b|use |mod "
    r"|interface |type \w+ ?[=<{]|public |private |protected |static |void |int |char "
    r"|float |double |bool |auto |template ?<|namespace |using |module\.|require\(|@\w"
    r"|try ?[:{]|except\b|catch ?\(|finally\b|else\b|elif |with .*:$|yield\b|raise\b"
    r"|throw |await |self\.|this\.|console\.|print\(|SELECT |INSERT |UPDATE |CREATE |ALTER "
    r"|DROP |<\?php|<!DOCTYPE|<html|<div|<template|<script)"
)
_ASSIGN_RE = re.compile(
    r"^[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?[ \t]*(?:[-+*/%|&^]|//|\*\*)?=[ \t]*[^=\s]"
)
_CALL_RE = re.compile(r"^[A-Za-z_][\w.]*\(.*\)[ \t]*;?$")
_BULLET_RE = re.compile(r"^(?:[-*+]|\d{1,3}[.)])[ \t]")


def _line_kind(line: str) -> str:
    """Classify a line as code, prose, neutral (a comment or a heading: either) or blank."""
    s = line.strip()
    if not s:
        return "blank"
    if s.startswith("#!"):
        return "code"
    if s.startswith(("#", "//", "/*", "<!--")) and not _CODE_START_RE.match(s):
        return "neutral"
    if line[0] in " \t" and not _BULLET_RE.match(s):
        return "code"
    if _CODE_START_RE.match(s) or _ASSIGN_RE.match(s) or _CALL_RE.match(s):
        return "code"
    closing = s.rstrip(";,")
    if s.endswith(("{", ";", "}", "),", "],")) or (closing and not closing.strip("}])")):
        return "code"
    return "prose"


def unfenced_region(lines: list[str], skip: set[int]) -> tuple[int, int] | None:
    """(first, last) line indexes of the code when the whole reply looks like code."""
    kinds = ["blank" if i in skip else _line_kind(line) for i, line in enumerate(lines)]
    code = kinds.count("code")
    prose = kinds.count("prose")
    # Mostly code, by a clear margin: a prose reply with a couple of indented lines stays prose.
    if code == 0 or code < 0.6 * (code + prose):
        return None
    substantive = [i for i, k in enumerate(kinds) if k in ("code", "neutral")]
    return substantive[0], substantive[-1]
