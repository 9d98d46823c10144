"""Repository path safety: every path a user or a model names goes through `repo_relative`.

A model's reply is untrusted input that names files to write. A path that escapes the work
tree (`../`, absolute, a symlink pointing out) writes where the user never agreed to, and a path
into `.git/` is code execution (hooks, config filters). So the rule is: turn the candidate into
a normalized POSIX path relative to the work tree root, or refuse it with one sentence.

This module is pure apart from `lstat`/`realpath` calls on the prefixes of the candidate that
already exist (the symlink check). It never creates, opens or follows anything for writing.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata

from tinymem.errors import UnsafePathError

__all__ = [
    "MAX_COMPONENTS",
    "MAX_NAME_BYTES",
    "MAX_PATH_BYTES",
    "is_dotgit_component",
    "is_placeholder_path",
    "names_directory",
    "repo_relative",
]

# The longest path tm writes or records, checked before anything is written. Generous for
# real repositories (the deepest seldom pass 30 components): 255 bytes a name and 4,095 a
# path are Linux's NAME_MAX and PATH_MAX less its NUL (what git itself can check out), and
# 256 components is far below git's core.maxTreeDepth (2,048 or more). A deeper path that
# git committed is still recorded by the step up to HEAD: the State Map's trees are built and
# compared without recursion (`gitobjects._edit`, `diff_blobs`).
MAX_COMPONENTS = 256
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 4095

# Only these are stripped from the ends: `str.strip()` would also eat \x1c-\x1f, which are
# control characters we want to refuse, not silently drop.
_EDGE_WHITESPACE = " \t\r\n\f\v"

# `C:`, `C:\x`, `C:/x`, `C:x` (drive-relative): all name a drive, never a repository path.
_DRIVE_RE = re.compile(r"^[A-Za-z]:")


def _is_forbidden_char(ch: str) -> bool:
    # Cc: C0/C1 controls incl. NUL (truncates paths in C APIs) and newlines (break our
    # line-based records). Cf: invisible formatting characters (bidi overrides, zero-width
    # joiners, BOM): they make a path display as something else, and HFS+ ignores several of
    # them, so `.g\u200cit` would *be* `.git` there (git's own is_hfs_dotgit check).
    return unicodedata.category(ch) in ("Cc", "Cf")


def _windows_fold(component: str) -> str:
    """The name Windows/NTFS would actually use: trailing dots and spaces vanish, case folds."""
    return component.rstrip(". ").lower()


def is_dotgit_component(component: str) -> bool:
    """True for `.git` and every alias git itself refuses (verify_path / is_ntfs_dotgit)."""
    folded = _windows_fold(component)
    if folded in (".git", "git~1"):
        return True
    # NTFS alternate data streams: `.git::$INDEX_ALLOCATION` is the directory `.git`.
    # (A colon is refused anyway; kept so this predicate stands on its own.)
    return folded.startswith(".git:")


def _refuse(candidate: str, why: str) -> UnsafePathError:
    shown = candidate if len(candidate) <= 120 else candidate[:117] + "..."
    return UnsafePathError(f"refused path {shown!r}: {why}")


def _components(candidate: str) -> list[str]:
    """Split on `/` and `\\`, dropping empty (duplicate slashes) and `.` components."""
    unified = candidate.replace("\\", "/")
    return [part for part in unified.split("/") if part not in ("", ".")]


def _check_size(candidate: str, parts: list[str]) -> None:
    limits = (
        f"tm takes paths of at most {MAX_COMPONENTS} components, {MAX_PATH_BYTES:,} bytes"
        f" and {MAX_NAME_BYTES} bytes a name"
    )
    if len(parts) > MAX_COMPONENTS:
        raise _refuse(candidate, f"it is {len(parts):,} components deep; {limits}")
    size = sum(len(part.encode()) for part in parts) + len(parts) - 1
    if size > MAX_PATH_BYTES:
        raise _refuse(candidate, f"it is {size:,} bytes long; {limits}")
    longest = max(parts, key=lambda part: len(part.encode()))
    if len(longest.encode()) > MAX_NAME_BYTES:
        raise _refuse(candidate, f"a name in it is {len(longest.encode())} bytes long; {limits}")


def names_directory(candidate: str) -> bool:
    """Whether `candidate` ends in a separator, `.` or `..` (`src/`, `a.py/.`): a directory,
    which `repo_relative`'s normalisation would turn into a file's path."""
    last = candidate.strip(_EDGE_WHITESPACE).replace("\\", "/").rsplit("/", 1)[-1]
    return last in ("", ".", "..")


def _check_symlinks(workdir: str, parts: list[str], candidate: str) -> None:
    """Refuse when an existing prefix of the path is a symlink that leads out of the work tree.

    A symlink that stays inside the tree is allowed (repositories use them), but not one that
    resolves into `.git/` (`hooks -> .git/hooks` would make `hooks/pre-commit` a hook) or one
    that cannot be resolved (a loop). The path is returned as given, never as its target.
    """
    root = os.path.realpath(workdir)
    current = workdir
    for index, part in enumerate(parts):
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except (FileNotFoundError, NotADirectoryError):
            return  # nothing deeper exists, so nothing deeper can be a symlink
        except (OSError, ValueError) as err:
            # Fail safe: a prefix we cannot inspect might be a symlink.
            shown = "/".join(parts[: index + 1])
            raise _refuse(candidate, f"cannot inspect {shown!r} ({err})") from err
        if not stat.S_ISLNK(st.st_mode):
            if stat.S_ISDIR(st.st_mode) and os.path.lexists(os.path.join(current, ".git")):
                shown = "/".join(parts[: index + 1])
                raise _refuse(
                    candidate, f"{shown!r} is a submodule or a nested repository (its own git)"
                )
            continue
        shown = "/".join(parts[: index + 1])
        target = os.path.realpath(current)
        if os.path.islink(target):
            raise _refuse(candidate, f"the symlink {shown!r} cannot be resolved (a loop?)")
        if not _is_within(root, target):
            raise _refuse(candidate, f"the symlink {shown!r} points outside the repository")
        inner = os.path.relpath(target, root)
        if inner == "." and index == len(parts) - 1:
            # `up -> ..` inside `src/` is fine on the way to a file, but not as the file.
            raise _refuse(candidate, f"the symlink {shown!r} points at the work tree root")
        if any(is_dotgit_component(c) for c in inner.replace(os.sep, "/").split("/")):
            raise _refuse(candidate, f"the symlink {shown!r} points into .git/")


def _is_within(root: str, target: str) -> bool:
    try:
        return os.path.commonpath([root, target]) == root
    except ValueError:  # different drives on Windows
        return False


def is_utf8(name: str) -> bool:
    """False for a name with bytes that are not UTF-8, which Python (os.fsdecode, pygit2)
    carries as lone surrogates."""
    try:
        name.encode("utf-8")  # strict: fails on exactly those surrogates, in C
    except UnicodeEncodeError:
        return False
    return True


# Characters HFS+ ignores in names, so ".git\u200cmodules" is ".gitmodules" there (git's utf8.c).
_HFS_IGNORED = dict.fromkeys(
    [*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)
_NTFS_SHORT = re.compile(r"(gitmod|gi7eba|gitatt|gi7d29)~[1-4]")


def fsck_wants_blob(name: str) -> bool:
    """Whether `git fsck` requires a tree entry called `name` to be a blob: .gitmodules and
    .gitattributes in any spelling HFS+ or NTFS takes for them (case, ignored characters,
    trailing dots and spaces, 8.3 short names). Errs towards yes."""
    if name.isascii() and "gi" not in name.lower():
        return False  # every spelling has "gi"; the characters HFS+ ignores are not ASCII
    folded = name.translate(_HFS_IGNORED).lower().rstrip(". ")
    return folded.startswith((".gitmodules", ".gitattributes")) or bool(
        _NTFS_SHORT.fullmatch(folded)
    )


def printable(name: str) -> str:
    """A name for messages and records: bytes that are not UTF-8 shown as `\\xNN`."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def repo_relative(workdir: str, candidate: str) -> str:
    """Normalize `candidate` to a POSIX path relative to the work tree root `workdir`.

    Accepts and normalizes: a leading `./`, duplicate slashes, backslashes as separators,
    whitespace at either end. Raises `UnsafePathError` (one sentence) for: an empty path, control
    or invisible formatting characters, a name that is not UTF-8, absolute paths (`/x`, `C:\\x`,
    `\\\\server`), a leading `~` (home directory), a colon anywhere (drive letters, NTFS streams,
    URLs, and it would collide with the `path::symbol` key separator), any `..` component or a
    component made only of dots and spaces (Windows reads `...` and `.. ` as `..`), any `.git`
    component or alias (`.GIT`, `.git.`, `.git `, `git~1`, `.git::$INDEX_ALLOCATION`), the work
    tree root itself, a path longer than `MAX_COMPONENTS` components, `MAX_PATH_BYTES` bytes
    or with a name over `MAX_NAME_BYTES` bytes, an existing symlink prefix that resolves
    outside the work tree, into `.git/`, or nowhere (loop), and a path inside a submodule or
    nested repository.
    """
    if not isinstance(candidate, str):
        raise _refuse(repr(candidate), "it is not text")
    text = candidate.strip(_EDGE_WHITESPACE)
    if not text:
        raise _refuse(candidate, "it is empty")
    bad = next((ch for ch in text if _is_forbidden_char(ch)), None)
    if bad is not None:
        raise _refuse(candidate, f"it contains the control or invisible character U+{ord(bad):04X}")
    if not is_utf8(text):
        raise _refuse(candidate, "its name is not UTF-8; tm records UTF-8 names only")
    if text[0] in "/\\":
        raise _refuse(candidate, "it is absolute; name a path inside the repository")
    if _DRIVE_RE.match(text):
        raise _refuse(candidate, "it names a Windows drive; name a path inside the repository")
    if ":" in text:
        raise _refuse(candidate, "it contains ':' (a drive, an NTFS stream or a URL)")
    parts = _components(text)
    if not parts:
        raise _refuse(candidate, "it names the work tree root, not a file")
    if parts[0].startswith("~"):
        raise _refuse(candidate, "it starts with '~' (a home directory)")
    _check_size(candidate, parts)
    for part in parts:
        if part == "..":
            raise _refuse(candidate, "it contains '..'; paths must stay inside the repository")
        if _windows_fold(part) == "":
            raise _refuse(candidate, f"the component {part!r} is only dots and spaces")
        if is_dotgit_component(part):
            raise _refuse(candidate, "it points into .git/ (hooks there would run as code)")
    _check_symlinks(workdir, parts, candidate)
    return "/".join(parts)


# --- example paths -------------------------------------------------------------------------

# Paths small models invent when they do not know (or forgot) the real file name. The list is
# deliberately short: a false positive only means "ignored, correlate by symbol instead" and
# `block_path` in reply.py still accepts a listed name when that file really exists.
#
#   prefixes (first components):  path/to/...   some/path/...   foo/bar/...   your/...
#   any component:                 <...>  (angle brackets never occur in real names)
#                                  your_*, your-*, yourfile*, yourmodule*, yourscript*,
#                                  yourproject*, yourpackage*, yourapp*
#   basename stem (before the first dot), case-insensitive:
#                                  file, filename, file_name, file-name, myfile, my_file,
#                                  somefile, some_file, example, example_file, sample_file
#   extension:                     `.ext` / `.extension` (the literal placeholder)
_PLACEHOLDER_PREFIXES: tuple[tuple[str, ...], ...] = (
    ("path", "to"),
    ("some", "path"),
    ("foo", "bar"),
    ("your",),
)
_PLACEHOLDER_COMPONENT_RE = re.compile(
    r"^(?:your[_-]|yourfile|yourmodule|yourscript|yourproject|yourpackage|yourapp)", re.I
)
_PLACEHOLDER_STEMS = frozenset(
    {
        "file",
        "filename",
        "file_name",
        "file-name",
        "myfile",
        "my_file",
        "somefile",
        "some_file",
        "example",
        "example_file",
        "sample_file",
    }
)


def is_placeholder_path(path: str) -> bool:
    """True for example paths a model invents (`path/to/file.py`, `your_module.py`, `<file>`).

    See the list above this function. Pure: it never looks at the disk.
    """
    parts = [p.lower() for p in _components(path.strip(_EDGE_WHITESPACE))]
    if not parts:
        return False
    for prefix in _PLACEHOLDER_PREFIXES:
        if len(parts) > len(prefix) and tuple(parts[: len(prefix)]) == prefix:
            return True
    for part in parts:
        if "<" in part or ">" in part or _PLACEHOLDER_COMPONENT_RE.match(part):
            return True
    base = parts[-1]
    stem, dot, _ext = base.partition(".")
    if dot and stem in _PLACEHOLDER_STEMS:
        return True
    return base.rsplit(".", 1)[-1] in ("ext", "extension") and "." in base
