"""What in a reply names a file: a token that looks like a path, a prose line naming one.

Pure text in, text out. Deciding whether a named path is *safe* is `paths.repo_relative`'s job.
"""

from __future__ import annotations

import re

from tinymem.paths import is_dotgit_component

__all__ = ["DRIVE_PATH_RE", "KNOWN_DOTFILES", "clean_token", "looks_like_path", "path_from_line"]


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
KNOWN_DOTFILES = _words(
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
DRIVE_PATH_RE = re.compile(r"^[A-Za-z]:[\\/]")
# Suffixes a model appends to a path when it means a place in the file: ::Symbol, :12, :12-30.
_LOCATION_SUFFIX_RE = re.compile(r"(?::\d+(?:[-:]\d+)?|#L\d+(?:-L?\d+)?)$")
_MD_LINK_RE = re.compile(r"\[([^\]\n]{0,300})\]\([^)\n]{0,500}\)")


def clean_token(token: str) -> str:
    """Strip the Markdown and punctuation a path is wrapped in when written in a sentence."""
    if len(token) > 400:  # never a path; and keeps the suffix regex below linear
        return token
    tok = token.strip().strip("`*\"'")
    tok = tok.rstrip(".,;:!?")
    if tok.endswith(")") and "(" not in tok:
        tok = tok[:-1]
    if tok.startswith("(") and ")" not in tok:
        tok = tok[1:]
    if tok.startswith("(") and tok.endswith(")") and tok.count("(") == 1:
        tok = tok[1:-1]  # "(src/app.py):" in "Updated `f` (src/app.py):"
    tok = tok.strip("`*\"'")
    if not DRIVE_PATH_RE.match(tok):
        tok = _LOCATION_SUFFIX_RE.sub("", tok.split("::", 1)[0])
    return tok.rstrip(".,;:!?")


def looks_like_path(token: str, *, loose: bool) -> bool:
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
    if base.lower() in KNOWN_DOTFILES:
        return True
    stem, dot, ext = base.rpartition(".")
    if dot and stem.strip(".") and ext.lower() in _KNOWN_EXTS:
        return has_sep or loose or low not in _PRODUCT_NAMES
    if low.startswith(("../", "..\\", "~/", "~\\")):
        return True
    if any(is_dotgit_component(p) for p in parts[:-1]):
        return True
    return loose and has_sep and any(ch.isalnum() for ch in base)


_LABEL_RE = re.compile(
    r"\b(?:file(?:name|path)?|path)[ \t]*(?:\*+[ \t]*)?[:=][ \t]*(?:\*+[ \t]*)?`?(?P<tok>[^\s`*]+)",
    re.I,
)
_BACKTICK_RE = re.compile(r"`([^`\n]{1,400})`")


def path_from_line(line: str) -> str | None:
    """The path a prose line names: last backticked path, else last path-looking token."""
    text = _MD_LINK_RE.sub(r"\1", line) if "](" in line else line
    label = _LABEL_RE.search(text)
    for span in reversed(_BACKTICK_RE.findall(text)):
        cleaned = clean_token(span)
        if looks_like_path(cleaned, loose=label is not None):
            return cleaned
    if label is not None:
        cleaned = clean_token(label["tok"])
        if looks_like_path(cleaned, loose=True):
            return cleaned
    tokens = text.split()
    for index in range(len(tokens) - 1, -1, -1):
        cleaned = clean_token(tokens[index].strip("#>"))
        if looks_like_path(cleaned, loose=False):
            return None if _is_fragment(tokens, index) else cleaned
    return None


def _is_fragment(tokens: list[str], index: int) -> bool:
    """Whether the path-like word at `index` is the tail or head of a path with spaces: a
    neighbour holds a separator without being a path itself (`my dir/a b.py` names no
    `b.py`, `dir/a.py b/c` no `dir/a.py`)."""
    for near in (index - 1, index + 1):
        if 0 <= near < len(tokens):
            word = clean_token(tokens[near].strip("#>"))
            if ("/" in word or "\\" in word) and not looks_like_path(word, loose=False):
                return True
    return False
