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
  first line of the code (``# a.py``, ``// src/x.ts``);
- several files in one fence separated by comment lines naming them;
- no fences at all;
- elisions (``# ... rest of the code unchanged``) that would delete code if taken literally;
- the whole reply wrapped in ```` ```markdown ```` (unwrapped when the wrapper names no file);
- a leading ``<think>...</think>`` section (reasoning models): drafts there are not proposals.

Deletion is never inferred from an omission: only an explicit directive line outside fences,
``DELETE: path::Symbol`` or ``DELETE: path`` (keyword case-insensitive, optionally bold or in
backticks, optionally a list item), is a deletion. See `DELETE_DIRECTIVE_HELP`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

from tinymem.errors import UnsafePathError
from tinymem.paths import is_dotgit_component, is_placeholder_path, repo_relative

__all__ = [
    "DELETE_DIRECTIVE_HELP",
    "Block",
    "DeleteDirective",
    "ParsedReply",
    "block_path",
    "find_elisions",
    "parse_reply",
]


@dataclass(frozen=True, slots=True)
class Block:
    """One code block of a reply, attributed to at most one file."""

    code: str  # the fence body exactly (line endings normalized to \n), without the fence lines
    raw_path: str | None  # path as written by the model, before validation
    # "info" (fence info string) | "heading" (line(s) before the fence) | "inline-comment"
    # (the first non-blank line of `code` is a comment naming the file, kept in `code`) | None
    path_source: str | None
    language: str | None  # language word of the info string, as written ("python", "py", ...)
    # 1-based line of the opening fence in the reply; for each file of a multi-file fence, the
    # line of the comment that starts it; 0 for unfenced code
    start_line: int
    fenced: bool
    elisions: tuple[str, ...]  # elision marker lines found in code (stripped), see find_elisions


@dataclass(frozen=True, slots=True)
class DeleteDirective:
    target: str  # "path::Symbol" or "path" (whole file), as written
    line: int  # 1-based line in the reply


@dataclass(frozen=True, slots=True)
class ParsedReply:
    blocks: tuple[Block, ...]
    deletes: tuple[DeleteDirective, ...]
    prose: str  # the reply outside code blocks (for the record)


# The example deliberately avoids `path/to/file.py`: models copy example paths from prompts.
DELETE_DIRECTIVE_HELP = (
    "To delete code, write a line of its own, outside any code block, of exactly this form: "
    "`DELETE: src/app.py::parse_args` deletes that one function or class (write "
    "`DELETE: src/app.py::Parser.parse` for a method), and `DELETE: src/app.py` deletes the "
    "whole file. Use one DELETE line per deletion and the real repository path. Leaving code "
    "out of a code block never deletes it: whatever you omit is kept unchanged, so never write "
    "placeholders such as `# ... rest of the code unchanged`; show complete definitions."
)


# --- what looks like a file path ----------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Extensions that make a bare word a file name. Deliberately excludes one-letter ones that
# occur in prose abbreviations ("a.m.", "U.S.", "e.g.": m, s, g, d, v, f, l).
_KNOWN_EXTS = _words(
    """
    py pyi pyx pxd ipynb js jsx mjs cjs ts tsx mts cts vue svelte astro go rs c h cc cpp
    cxx hpp hh hxx ino java kt kts scala sc groovy gradle rb erb rake gemspec php cs csx
    fs fsx fsi vb swift mm lua pl pm r jl sh bash zsh fish ps1 psm1 bat cmd sql html htm
    xhtml css scss sass less styl json jsonc json5 yaml yml toml ini cfg conf env xml
    xsd xsl md markdown mdx rst txt csv tsv proto graphql gql tf tfvars hcl nix ex exs
    heex erl hrl hs lhs ml mli clj cljs cljc edn dart zig nim cmake mk lock tex bib adoc
    org svg j2 jinja jinja2 tmpl tpl ejs hbs mustache pug sol vy asm f90 f95 pas
    dockerfile properties service desktop plist csproj fsproj sln vcxproj xaml razor
    cshtml elm purs res resi rkt scm lisp el vim awk sed cob cbl ada adb ads tcl prisma
    wgsl glsl hlsl frag vert cu cuh patch diff http rego cue just
    """
)
# Extensionless file names, case-sensitive on purpose: ```dockerfile / ```makefile are
# language tags, ```Dockerfile / ```Makefile name files.
_KNOWN_NAMES = _words(
    """
    Makefile GNUmakefile Dockerfile Containerfile Jenkinsfile Procfile Gemfile Rakefile
    Vagrantfile Brewfile Justfile Pipfile Podfile Fastfile Caddyfile Snakefile Tiltfile
    Earthfile Taskfile
    """
)
_KNOWN_DOTFILES = _words(
    """
    .gitignore .gitattributes .gitmodules .dockerignore .editorconfig .env .npmrc .nvmrc
    .prettierrc .prettierignore .eslintrc .eslintignore .babelrc .flake8 .pylintrc
    .coveragerc .python-version .ruby-version .node-version .tool-versions .clang-format
    .clang-tidy .stylelintrc .yarnrc .htaccess .envrc
    """
)
# Framework names that end in a code extension but are not files when they appear in prose.
_PRODUCT_NAMES = _words(
    """
    node.js vue.js next.js nuxt.js express.js react.js three.js d3.js chart.js
    angular.js ember.js backbone.js nest.js p5.js moment.js socket.io alpine.js solid.js
    ext.js
    """
)
_VERSION_RE = re.compile(r"v?\d+(?:\.\d+)+(?:[a-z][a-z0-9]*)?", re.I)
_DRIVE_PATH_RE = re.compile(r"^[A-Za-z]:[\\/]")
_LANG_RE = re.compile(r"[A-Za-z][A-Za-z0-9_+#.\-]*")
# Suffixes a model appends to a path when it means a place in the file: ::Symbol, :12, :12-30.
_LOCATION_SUFFIX_RE = re.compile(r"(?::\d+(?:[-:]\d+)?|#L\d+(?:-L?\d+)?)$")
_MD_LINK_RE = re.compile(r"\[([^\]\n]{0,300})\]\([^)\n]{0,500}\)")


def _clean_token(token: str) -> str:
    """Strip the Markdown and punctuation a path is wrapped in when written in a sentence."""
    if len(token) > 400:  # never a path; and keeps the suffix regex below linear
        return token
    tok = token.strip().strip("`*\"'")
    tok = tok.rstrip(".,;:!?")
    if tok.endswith(")") and "(" not in tok:
        tok = tok[:-1]
    if tok.startswith("(") and ")" not in tok:
        tok = tok[1:]
    tok = tok.strip("`*\"'")
    if not _DRIVE_PATH_RE.match(tok):
        tok = _LOCATION_SUFFIX_RE.sub("", tok.split("::", 1)[0])
    return tok.rstrip(".,;:!?")


def _looks_like_path(token: str, *, loose: bool) -> bool:
    """Whether a token names a file.

    Strict (prose): a known extension or file name is required, so `and/or`, `os.path`,
    `Node.js` or `/api/users` are not paths, but `../x` and `.git/x` are reported (to be refused
    loudly rather than silently ignored). Loose (info strings, `File:` labels): any token with a
    separator also counts.
    """
    if not token or len(token) > 400 or any(ch.isspace() for ch in token):
        return False
    low = token.lower()
    if "://" in token or low.startswith(("www.", "mailto:")):
        return False
    if _VERSION_RE.fullmatch(token):
        return False
    has_sep = "/" in token or "\\" in token
    parts = re.split(r"[\\/]", token)
    base = parts[-1]
    if not base:
        return False
    if base in _KNOWN_NAMES or base.split(".")[0] in _KNOWN_NAMES:
        return True
    if base.lower() in _KNOWN_DOTFILES:
        return True
    stem, dot, ext = base.rpartition(".")
    if dot and stem.strip(".") and ext.lower() in _KNOWN_EXTS:
        return has_sep or loose or low not in _PRODUCT_NAMES
    if low.startswith(("../", "..\\", "~/", "~\\")):
        return True
    if any(is_dotgit_component(p) for p in parts[:-1]):
        return True
    return loose and has_sep and any(ch.isalnum() for ch in base)


# --- fences --------------------------------------------------------------------------------

_OPEN_FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_CLOSE_FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*$")
_KV_RE = re.compile(
    r"(?P<key>[A-Za-z_][\w-]*)[ \t]*=[ \t]*"
    r"(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|(?P<bare>[^\s\"'{},]+))"
)
_PATH_KEYS = frozenset({"path", "file", "filename", "filepath", "file_path", "file-path"})
_TITLE_KEYS = frozenset({"title", "name", "caption", "label", "src"})
# Languages whose bodies legitimately contain comment-like lines naming files (headings,
# diff headers): never split these into several files.
_NO_SPLIT_LANGS = frozenset({"md", "markdown", "mdx", "diff", "patch", "udiff"})


def _width(indent: str) -> int:
    return sum(4 if ch == "\t" else 1 for ch in indent)


def _dedent(line: str, columns: int) -> str:
    """Remove up to `columns` columns of leading whitespace (CommonMark fence content rule)."""
    removed = 0
    index = 0
    while index < len(line) and removed < columns and line[index] in " \t":
        removed += 4 if line[index] == "\t" else 1
        index += 1
    return line[index:]


@dataclass(slots=True)
class _Fence:
    open_index: int  # 0-based index of the opening fence line
    close_index: int | None  # None: unterminated, runs to the end of the text
    info: str
    body: list[str]  # dedented body lines


def _split_fences(lines: list[str], start: int = 0) -> tuple[list[_Fence], list[int]]:
    """CommonMark-style fence scan from line `start` (earlier lines count as outside)."""
    fences: list[_Fence] = []
    outside: list[int] = list(range(start))
    index = start
    count = len(lines)
    while index < count:
        match = _OPEN_FENCE_RE.match(lines[index])
        if match is None or (match["fence"][0] == "`" and "`" in match["info"]):
            outside.append(index)
            index += 1
            continue
        indent = _width(match["indent"])
        char = match["fence"][0]
        length = len(match["fence"])
        end = index + 1
        close: int | None = None
        while end < count:
            closing = _CLOSE_FENCE_RE.match(lines[end])
            # A closer may be indented a little more than the opener (list items), but a
            # deeper one is content: a fence inside a docstring must not end the block.
            if (
                closing is not None
                and closing["fence"][0] == char
                and len(closing["fence"]) >= length
                and _width(closing["indent"]) <= indent + 3
            ):
                close = end
                break
            end += 1
        stop = close if close is not None else count
        body = [_dedent(line, indent) for line in lines[index + 1 : stop]]
        fences.append(_Fence(index, close, match["info"].strip(), body))
        index = stop + 1
    return fences, outside


def _parse_info(info: str) -> tuple[str | None, str | None]:
    """(language, path) from a fence info string."""
    if not info or len(info) > 500:  # a paragraph after ``` is not an info string
        return None, None
    path: str | None = None
    titled: str | None = None
    for kv in _KV_RE.finditer(info):
        key = kv["key"].lower()
        value = next((v for v in (kv["dq"], kv["sq"], kv["bare"]) if v is not None), "").strip()
        if not value:
            continue
        if key in _PATH_KEYS and path is None:
            path = value
        elif key in _TITLE_KEYS and titled is None and _looks_like_path(value, loose=True):
            titled = value
    path = path or titled
    rest = _KV_RE.sub(" ", info).replace("{", " ").replace("}", " ")
    tokens = rest.split()
    language: str | None = None
    if tokens:
        first = tokens[0]
        if first.startswith(".") and first.lower() not in _KNOWN_DOTFILES:
            first = first.lstrip(".")  # pandoc `{.python}`
        if _DRIVE_PATH_RE.match(first):
            path = path or first
        elif ":" in first and "://" not in first:
            lang, _, rest_path = first.partition(":")
            if _LANG_RE.fullmatch(lang) and rest_path:
                language = lang
                path = path or rest_path
            elif _looks_like_path(_clean_token(first), loose=True):
                path = path or _clean_token(first)
        elif _looks_like_path(first, loose=True):
            path = path or first
        elif _LANG_RE.fullmatch(first):
            language = first
        if path is None:
            for token in tokens[1:]:
                cleaned = _clean_token(token)
                if _looks_like_path(cleaned, loose=True):
                    path = cleaned
                    break
    return language, path


# --- the line(s) before a fence ------------------------------------------------------------

_LABEL_RE = re.compile(
    r"\b(?:file(?:name|path)?|path)[ \t]*(?:\*+[ \t]*)?[:=][ \t]*(?:\*+[ \t]*)?`?(?P<tok>[^\s`*]+)",
    re.I,
)
_BACKTICK_RE = re.compile(r"`([^`\n]{1,400})`")


def _path_from_line(line: str) -> str | None:
    """The path a prose line names: last backticked path, else last path-looking token."""
    text = _MD_LINK_RE.sub(r"\1", line) if "](" in line else line
    label = _LABEL_RE.search(text)
    for span in reversed(_BACKTICK_RE.findall(text)):
        cleaned = _clean_token(span)
        if _looks_like_path(cleaned, loose=label is not None):
            return cleaned
    if label is not None:
        cleaned = _clean_token(label["tok"])
        if _looks_like_path(cleaned, loose=True):
            return cleaned
    for token in reversed(text.split()):
        cleaned = _clean_token(token.strip("#>"))
        if _looks_like_path(cleaned, loose=False):
            return cleaned
    return None


def _is_heading_like(line: str) -> bool:
    """A line that only titles what follows: `# x`, `**x**`, `` `x` ``, a bare path."""
    s = line.strip()
    if s.startswith("#") or (s.startswith("**") and s.rstrip(":").endswith("**")):
        return True
    if s.startswith("`") and s.rstrip(":").endswith("`"):
        return True
    return len(s.split()) == 1


def _heading_path(lines: list[str], fence_index: int, floor: int) -> str | None:
    """Path from the nearest non-blank line before a fence (or a title line just above it)."""
    seen = 0
    index = fence_index - 1
    while index >= floor and seen < 2:
        line = lines[index]
        index -= 1
        if not line.strip():
            continue
        if _OPEN_FENCE_RE.match(line) or _DELETE_RE.match(line):
            return None
        seen += 1
        if seen == 2 and not _is_heading_like(line):
            return None
        found = _path_from_line(line)
        if found is not None:
            return found
    return None


# --- comments naming files -----------------------------------------------------------------

# Parsed by hand, token by token, rather than with one big regex: the optional decorations,
# label and note all overlap with the path token, and such a regex backtracks exponentially on
# a line like `# ------...--- a a a`.
_COMMENT_OPEN_RE = re.compile(r"^(?:#+|//+|--|;+|%+|/\*+|<!--|\{/\*+)")
_DECO_RE = re.compile(r"[-=*~#_]{2,}")
_LABEL_PREFIX_RE = re.compile(r"^(?:file(?:name|path)?|path)[ \t]*[:=][ \t]*", re.I)
_NOTE_WORDS = ("new", "updated", "modified", "changed", "complete", "full", "entire", "unchanged")
_MAX_PATH_COMMENT = 300  # a comment naming a file is short; longer lines are never one


def _strip_comment_closer(text: str) -> str:
    """`a.c */` -> `a.c`, `x -->` -> `x`, `y */}` -> `y`.

    Plain string operations on purpose: a regex search for a closer made of a starred run is
    quadratic on a long line of stars.
    """
    text = text.rstrip()
    if text.endswith("-->"):
        return text[:-3]
    if text.endswith("}") and text[:-1].rstrip().endswith("*/"):
        text = text[:-1].rstrip()
    if text.endswith("*/"):
        return text[:-2].rstrip("*")
    return text


def _strip_note(tokens: list[str]) -> list[str]:
    """Drop a trailing `(new file)` / `(updated)` annotation."""
    if not tokens or not tokens[-1].endswith(")"):
        return tokens
    for index in range(len(tokens) - 1, max(len(tokens) - 6, 0), -1):
        if tokens[index].startswith("("):
            if tokens[index][1:].lower().startswith(_NOTE_WORDS):
                return tokens[:index]
            return tokens
    return tokens


def _named_in(inner: str, *, banner: bool) -> tuple[str, bool] | None:
    tokens = inner.split()
    deco1 = bool(tokens) and _DECO_RE.fullmatch(tokens[0]) is not None
    if deco1:
        tokens = tokens[1:]
    deco2 = bool(tokens) and _DECO_RE.fullmatch(tokens[-1]) is not None
    if deco2:
        tokens = tokens[:-1]
    if banner and not (deco1 and deco2):
        return None
    tokens = _strip_note(tokens)
    rest = " ".join(tokens)
    label = _LABEL_PREFIX_RE.match(rest)
    if label is not None:
        rest = rest[label.end() :]
    if not rest or " " in rest:
        return None
    path = _clean_token(rest)
    labelled = label is not None
    if not _looks_like_path(path, loose=labelled):
        return None
    return path, labelled or deco1 or deco2


def _comment_path(line: str) -> tuple[str, bool] | None:
    """(path, decorated) when the whole line is a comment naming a file, e.g. `# --- a.py ---`.

    Forms: `<opener> [deco] [File:|filename:|path:] PATH [(note)] [deco] [closer]` with opener
    one of `#` `//` `--` `;` `%` `/*` `<!--` `{/*`, or a bare banner `--- PATH ---` (decoration
    on both sides required). `decorated` (a banner, a label, or `##`) makes a mid-body line a
    file separator even with no blank line above it.
    """
    s = line.strip()
    if not s or len(s) > _MAX_PATH_COMMENT:
        return None
    opener = _COMMENT_OPEN_RE.match(s)
    if opener is not None:
        inner = _strip_comment_closer(s[opener.end() :])
        named = _named_in(inner, banner=False)
        if named is not None:
            path, decorated = named
            heading = opener.group().startswith("##")
            return path, decorated or heading
    return _named_in(s, banner=True)


# --- elisions ------------------------------------------------------------------------------

_LEADING_COMMENT_RE = re.compile(r"^(?:<!--|\{/\*+|/\*+|//+|#+|--+|;+|%+|\*+)")
_TRAILING_COMMENT_RE = re.compile(r"[ \t](?:#|//|--|/\*)[ \t]*(?P<text>.*)$")
_ELLIPSIS = ("...", "…")
_MAX_ELISION_COMMENT = 200
_SUBJECT = (
    r"(?:code|implementation|methods?|functions?|logic|content|contents|imports|tests?|fields"
    r"|properties|routes|handlers|definitions|helpers|class(?:es)?|configuration|config|body"
    r"|lines|markup|styles|components?|file|module|script|program|page|template|cases)"
)
_ELISION_RES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        rf"\brest of (?:the |this |your |my |that |its )?(?:\w+ )?{_SUBJECT}",
        r"\brest\b(?: [\w']+){0,3} (?:unchanged|the same|as before|as[- ]is|omitted|untouched"
        r"|intact|not shown)\b",
        r"(?:unchanged|untouched|omitted|elided|not shown|as before|truncated|abridged)\W*$",
        r"\b(?:remains?|stays?|kept|keep|left|leave) (?:the same|as[- ]is|intact|unchanged"
        r"|untouched)\b",
        r"\bfor brevity\b",
        rf"\b{_SUBJECT} (?:omitted|elided|not shown|skipped|hidden)\b",
        rf"\b(?:your|the|my|existing|more|other|remaining) (?:\w+ )?{_SUBJECT} (?:goes )?here\b",
        r"\bgoes here\b",
        r"\b(?:add|insert|put|paste|include) (?:your|the|any|more|other|remaining|existing) "
        r"[\w ]{0,30}\bhere\b",
        r"\bkeep (?:the |all |your )?(?:rest|remaining|everything else)\b",
        rf"\bkeep (?:the |all |your )?(?:existing|original|other|previous) {_SUBJECT}",
        r"\b(?:no|without) (?:other |further )?changes?\b",
        r"\bnothing (?:else )?(?:changed|changes)\b",
        r"\bsame as (?:before|above|original|previous|the original|the existing|in the original)",
        r"^(?:snip|snipped|<snip>|\[snip\]|etc\.?|and so on|and so forth)$",
    )
)
_SHORT_SUBJECT_RE = re.compile(rf"^(?:the )?(?:existing|previous|original|remaining) {_SUBJECT}")
_MARKED_SUBJECT_RE = re.compile(
    rf"\b(?:existing|previous|original|remaining|unchanged|same|other|old|current) {_SUBJECT}\b"
    r".*\b(?:unchanged|here|remains?|stays?|as before|as[- ]is|omitted|same|goes|not shown"
    r"|keep|kept|untouched|intact|elided|skipped)\b"
)
_ELLIPSIS_WORD_RE = re.compile(
    r"\b(?:code|rest|existing|unchanged|same|remaining|other|previous|omitted|here|before"
    r"|above|methods?|functions?|implementation|imports|etc|original|so on)\b"
)


def _comment_text(line: str) -> str | None:
    s = line.strip()
    lead = _LEADING_COMMENT_RE.match(s)
    if lead is not None:
        text = s[lead.end() :]
    else:
        trail = _TRAILING_COMMENT_RE.search(s)
        if trail is None:
            return None
        text = trail["text"]
    return _strip_comment_closer(text).strip()


def _is_elision_text(comment: str) -> bool:
    text = comment.lower().strip(" \t()[]<>{}-=*_:;,!~'\"`")
    if not text:
        return False
    if text.startswith(_ELLIPSIS):
        return True
    if len(text) > _MAX_ELISION_COMMENT:  # a marker is a short remark, not a paragraph
        return False
    if any(rx.search(text) for rx in _ELISION_RES):
        return True
    if (_SHORT_SUBJECT_RE.match(text) and len(text.split()) <= 3) or _MARKED_SUBJECT_RE.search(
        text
    ):
        return True
    return text.endswith(_ELLIPSIS) and _ELLIPSIS_WORD_RE.search(text) is not None


def find_elisions(code: str) -> tuple[str, ...]:
    """Lines of `code` (stripped) that stand for code the model left out.

    Counted: a comment (`#`, `//`, `/* */`, `--`, `<!-- -->`, `;`, `%`, `*` continuation, or a
    trailing comment after code) whose text
      - starts with `...` or `…` (`# ...`, `// ... existing code ...`, `/* ... */`);
      - says "rest of the <code/file/class/...>", "the rest ... unchanged", "... unchanged",
        "... omitted", "not shown", "as before", "for brevity", "remains the same",
        "<code> goes here", "add your ... here", "keep the rest", "no changes",
        "same as before", "snip", "etc.";
      - is a short "existing/previous/original/remaining <code/methods/...>", or such a phrase
        with a marker word ("(other methods unchanged)", "existing code here");
      - ends with `...` and names code ("# other methods ...");
    and, outside comments: `…` alone on a line, `[...]`/`(...)`/`{...}` alone, and `...` alone
    at column 0. An *indented* bare `...` is not counted: in Python it is a valid body (`def
    f(): ...` stubs, protocols), and in other languages it does not parse, so the syntax gate
    catches it anyway.
    """
    found: list[str] = []
    try:
        for line in code.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            s = line.strip()
            if not s:
                continue
            if s in ("…", "[...]", "(...)", "{...}", "[…]", "(…)", "{…}") or (
                s == "..." and not line[0].isspace()
            ):
                found.append(s)
                continue
            comment = _comment_text(line)
            if comment is not None and _is_elision_text(comment):
                found.append(s)
    except Exception:  # never let a detector crash the parse; keep what was found
        pass
    return tuple(found)


# --- delete directives ---------------------------------------------------------------------

_BOLD = r"(?:\*{1,2}|_{2})"
_DELETE_RE = re.compile(
    r"^[ \t]{0,3}(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?"
    rf"(?:(?:{_BOLD}|`)[ \t]*)?DELETE[ \t]*(?:{_BOLD}[ \t]*)?:[ \t]*(?:{_BOLD}[ \t]*)?"
    rf"`?(?P<target>[^\s`*]+)`?[ \t]*(?:{_BOLD}|`)?[ \t]*$",
    re.I,
)


def _delete_target(line: str) -> str | None:
    match = _DELETE_RE.match(line)
    if match is None:
        return None
    target = match["target"].rstrip(".,;")
    path, sep, symbol = target.partition("::")
    # `DELETE: a.py::` must not silently become a whole-file deletion.
    if not path or path.endswith(":") or (sep and (not symbol or symbol.endswith(":"))):
        return None
    return target


# --- unfenced code -------------------------------------------------------------------------

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


def _unfenced_region(lines: list[str], skip: set[int]) -> tuple[int, int] | None:
    """(first, last) line indexes of the code when the whole reply looks like code."""
    kinds = ["blank" if i in skip else _line_kind(line) for i, line in enumerate(lines)]
    code = kinds.count("code")
    prose = kinds.count("prose")
    # Mostly code, by a clear margin: a prose reply with a couple of indented lines stays prose.
    if code == 0 or code < 0.6 * (code + prose):
        return None
    substantive = [i for i, k in enumerate(kinds) if k in ("code", "neutral")]
    return substantive[0], substantive[-1]


# --- blocks --------------------------------------------------------------------------------


def _join(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _make_block(
    code: str,
    raw_path: str | None,
    source: str | None,
    language: str | None,
    start_line: int,
    fenced: bool,
) -> Block:
    return Block(
        code=code,
        raw_path=raw_path,
        path_source=source if raw_path is not None else None,
        language=language,
        start_line=start_line,
        fenced=fenced,
        elisions=find_elisions(code),
    )


def _blocks_from_body(
    body: list[str],
    code: str,
    outer_path: str | None,
    outer_source: str | None,
    language: str | None,
    start_line: int,
    fenced: bool,
) -> list[Block]:
    """One block, or one per file when comment lines naming files separate several."""
    first = next((i for i, line in enumerate(body) if line.strip()), None)
    if first is None:
        return []
    separators: list[tuple[int, str]] = []
    if (language or "").lower() not in _NO_SPLIT_LANGS:
        for i, line in enumerate(body):
            named = _comment_path(line)
            if named is None:
                continue
            path, decorated = named
            # Mid-body, a plain `# x.py` comment right under code is more likely a remark than a
            # new file; a blank line above it or a banner/`File:` label makes it a separator.
            if i == first or decorated or not body[i - 1].strip():
                separators.append((i, path))
    at_start = bool(separators) and separators[0][0] == first
    if not separators or (len(separators) == 1 and at_start):
        if outer_path is not None:
            return [_make_block(code, outer_path, outer_source, language, start_line, fenced)]
        if at_start:
            path = separators[0][1]
            return [_make_block(code, path, "inline-comment", language, start_line, fenced)]
        return [_make_block(code, None, None, language, start_line, fenced)]
    # Several files: each separator names its own segment. An info/heading path (often just
    # the last of several files the sentence lists) only claims code before the first one.
    blocks: list[Block] = []
    preamble = body[: separators[0][0]]
    if any(line.strip() for line in preamble):
        blocks.append(
            _make_block(
                _join(_trim_blank_tail(preamble)),
                outer_path,
                outer_source,
                language,
                start_line,
                fenced,
            )
        )
    bounds = [i for i, _ in separators] + [len(body)]
    for (index, path), end in zip(separators, bounds[1:], strict=True):
        segment = _trim_blank_tail(body[index:end])
        line_no = start_line + 1 + index if fenced else 0
        blocks.append(
            _make_block(_join(segment), path, "inline-comment", language, line_no, fenced)
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


def _parse(text: str) -> ParsedReply:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _parse_lines(text.split("\n"), nested=False)


def _parse_lines(lines: list[str], *, nested: bool) -> ParsedReply:
    thinking = _think_end(lines)
    fences, outside = _split_fences(lines, thinking)
    deletes = tuple(
        DeleteDirective(target, i + 1)
        for i in outside
        if i >= thinking and (target := _delete_target(lines[i])) is not None
    )
    blocks: list[Block] = []
    if fences:
        floor = thinking
        for fence in fences:
            language, path = _parse_info(fence.info)
            blocks.extend(_fence_blocks(lines, fence, language, path, floor, nested))
            floor = (fence.close_index if fence.close_index is not None else len(lines)) + 1
        prose = "\n".join(lines[i] for i in outside).strip()
        return ParsedReply(tuple(blocks), deletes, prose)
    skip = {d.line - 1 for d in deletes} | set(range(thinking))
    region = _unfenced_region(lines, skip)
    if region is None:
        return ParsedReply((), deletes, "\n".join(lines).strip())
    first, last = region
    body = [line for i, line in enumerate(lines[first : last + 1], first) if i not in skip]
    blocks = _blocks_from_body(body, _join(body), None, None, None, 0, False)
    prose_lines = lines[:first] + [lines[i] for i in sorted(skip) if first <= i <= last]
    prose = "\n".join(prose_lines + lines[last + 1 :]).strip()
    return ParsedReply(tuple(blocks), deletes, prose)


def _fence_blocks(
    lines: list[str],
    fence: _Fence,
    language: str | None,
    path: str | None,
    floor: int,
    nested: bool,
) -> list[Block]:
    if (
        path is None
        and not nested
        and (language or "").lower() in _WRAPPER_LANGS
        and any(_OPEN_FENCE_RE.match(line) for line in fence.body)
    ):
        # A closed wrapper's body ended with a newline; keep it for an inner unclosed fence.
        body = [*fence.body, ""] if fence.close_index is not None else fence.body
        inner = _parse_lines(body, nested=True).blocks
        if inner and all(b.fenced for b in inner):
            offset = fence.open_index + 1
            return [replace(b, start_line=b.start_line + offset) for b in inner]
    source: str | None = "info" if path is not None else None
    if path is None:
        path = _heading_path(lines, fence.open_index, floor)
        source = "heading" if path is not None else None
    # An unterminated fence runs to the end of the text, final newline or not.
    terminated = fence.close_index is not None
    code = _join(fence.body) if terminated else "\n".join(fence.body)
    return _blocks_from_body(fence.body, code, path, source, language, fence.open_index + 1, True)


def parse_reply(text: str) -> ParsedReply:
    """Parse a model reply. Never raises: on any internal failure, the reply is all prose."""
    if not isinstance(text, str):
        return ParsedReply((), (), "")
    try:
        return _parse(text)
    except Exception:
        # Defence in depth only: the property tests drive `_parse` directly so that a bug here
        # shows up as a failing test, not as a silently empty parse.
        return ParsedReply((), (), text)


def block_path(block: Block, workdir: str) -> tuple[str | None, str | None]:
    """(safe repo-relative path or None, refusal reason or None) for a block's raw path.

    No raw path gives (None, None): the caller correlates the code with known symbols. An
    unsafe path gives the `UnsafePathError` sentence. An example path (`path/to/file.py`, see
    `paths.is_placeholder_path`) is ignored unless that file really exists in the work tree.
    """
    raw = block.raw_path
    if raw is None:
        return None, None
    try:
        relative = repo_relative(workdir, raw)
        if is_placeholder_path(raw) and not os.path.lexists(os.path.join(workdir, relative)):
            return None, f"example path {raw!r} ignored"
        return relative, None
    except UnsafePathError as err:
        return None, str(err)
    except Exception as err:  # never raise on model input
        return None, f"refused path {raw!r}: {err}"
