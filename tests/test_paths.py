"""Repository path safety, with real symlinks in a temporary work tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tinymem.errors import UnsafePathError
from tinymem.paths import fsck_wants_blob, is_dotgit_component, is_placeholder_path, repo_relative


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A work tree with every kind of symlink, plus a directory outside it."""
    root = tmp_path_factory.mktemp("paths")
    work = root / "work"
    (work / "src" / "pkg").mkdir(parents=True)
    (work / "src" / "a.py").write_text("A = 1\n")
    (work / ".git" / "hooks").mkdir(parents=True)
    (root / "outside").mkdir()
    (root / "outside" / "secret.txt").write_text("x")
    links = {
        "inside": "src",  # relative, stays inside: allowed
        "inside_abs": str(work / "src"),  # absolute target, stays inside: allowed
        "src/pkg/up": "..",  # to src/: allowed
        "src/to_root": "..",  # to the work tree root: allowed on the way, not as the file
        "out": "../outside",  # escapes
        "out_abs": str(root / "outside"),
        "src/deep_out": "../../outside",
        "file_out": "../outside/secret.txt",  # the last component escapes
        "dangling_out": "/nonexistent-tinymem/x",
        "dangling_in": "src/new.py",
        "hooks": ".git/hooks",  # into .git: code execution
        "dotgit": ".git",
        "loop": "loop",
        "chain": "inside",  # a symlink to a symlink that stays inside
        "chain_out": "out",
    }
    for name, target in links.items():
        os.symlink(target, work / name)
    return work


@pytest.mark.parametrize(
    ("candidate", "expected"),
    [
        ("a.py", "a.py"),
        ("./a.py", "a.py"),
        ("././src/./a.py", "src/a.py"),
        ("src//pkg///a.py", "src/pkg/a.py"),
        ("src\\pkg\\a.py", "src/pkg/a.py"),
        (".\\src\\a.py", "src/a.py"),
        ("src/a.py/", "src/a.py"),
        ("  src/a.py \t\r\n", "src/a.py"),
        (".gitignore", ".gitignore"),
        (".gitattributes", ".gitattributes"),
        (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
        ("docs/git/x.md", "docs/git/x.md"),
        ("x.git/y", "x.git/y"),
        ("a..b.py", "a..b.py"),
        ("..a", "..a"),
        ("a b/c d.py", "a b/c d.py"),
        ("été/ü.py", "été/ü.py"),
        ("a~1/b", "a~1/b"),
        ("inside/a.py", "inside/a.py"),  # kept as given, not resolved to src/a.py
        ("inside_abs/a.py", "inside_abs/a.py"),
        ("src/pkg/up/a.py", "src/pkg/up/a.py"),
        ("src/to_root/src/a.py", "src/to_root/src/a.py"),
        ("dangling_in", "dangling_in"),
        ("chain/a.py", "chain/a.py"),
        ("new_dir/new_file.py", "new_dir/new_file.py"),
        ("src/a.py/under_a_file", "src/a.py/under_a_file"),  # not our business: open() fails
    ],
)
def test_accepts_and_normalizes(tree: Path, candidate: str, expected: str) -> None:
    assert repo_relative(str(tree), candidate) == expected


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        ("", "empty"),
        (" \t\n", "empty"),
        ("a\x00b", "U+0000"),
        ("a\nb.py", "U+000A"),
        ("a\x1fb", "U+001F"),
        ("a\x7f", "U+007F"),
        ("a\u202eyp.exe", "U+202E"),  # right-to-left override
        (".g\u200cit/config", "U+200C"),  # HFS+ ignores it: this would be .git
        ("\ufeffa.py", "U+FEFF"),
        ("caf\udce9.py", "not UTF-8"),  # os.fsdecode(b"caf\xe9.py")
        ("/etc/passwd", "absolute"),
        ("//server/share", "absolute"),
        ("\\\\server\\share\\x", "absolute"),
        ("\\x", "absolute"),
        ("C:\\Windows\\x", "drive"),
        ("c:/x", "drive"),
        ("C:x", "drive"),
        ("src/a:b", "':'"),
        ("http://example.com/a.py", "':'"),
        (".git/config", ".git"),
        (".GIT/config", ".git"),
        (".Git/hooks/pre-commit", ".git"),
        ("sub/.git/config", ".git"),
        ("a/.git", ".git"),
        (".git", ".git"),
        (".git./hooks/x", ".git"),
        (".git /hooks/x", ".git"),
        (".git. . /x", ".git"),
        ("git~1/config", ".git"),
        ("GIT~1/hooks/x", ".git"),
        (".git::$INDEX_ALLOCATION/hooks/x", "':'"),
        ("..", "'..'"),
        ("../x", "'..'"),
        ("a/../b", "'..'"),
        ("a/../a/b.py", "'..'"),  # even though it normalizes back inside
        ("a\\..\\..\\b", "'..'"),
        ("...", "only dots"),
        ("a/. ./b", "only dots"),
        (".", "root"),
        ("./", "root"),
        ("./././/", "root"),
        ("~/x", "'~'"),
        ("~root/.ssh/x", "'~'"),
        ("out/x", "outside"),
        ("out", "outside"),
        ("out_abs/secret.txt", "outside"),
        ("src/deep_out/secret.txt", "outside"),
        ("file_out", "outside"),
        ("dangling_out", "outside"),
        ("chain_out/x", "outside"),
        ("inside/../out/x", "'..'"),
        ("hooks/pre-commit", ".git"),
        ("dotgit/config", ".git"),
        ("loop", "loop"),
        ("loop/x", "loop"),
        ("src/to_root", "root"),
    ],
)
def test_refuses(tree: Path, candidate: str, why: str) -> None:
    with pytest.raises(UnsafePathError) as info:
        repo_relative(str(tree), candidate)
    message = str(info.value)
    assert why in message
    assert "\n" not in message.strip()  # one sentence on one line
    assert info.value.exit_code == 11


def test_workdir_reached_through_a_symlink(tree: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(tree, alias)
    assert repo_relative(str(alias), "inside/a.py") == "inside/a.py"
    with pytest.raises(UnsafePathError):
        repo_relative(str(alias), "out/x")


def test_missing_workdir_still_checks_names(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope")
    assert repo_relative(missing, "a/b.py") == "a/b.py"
    with pytest.raises(UnsafePathError):
        repo_relative(missing, ".git/config")


def test_refusal_shows_a_long_candidate_shortened() -> None:
    with pytest.raises(UnsafePathError) as info:
        repo_relative("/w", "../" + "x" * 1000)
    assert len(str(info.value)) < 300


@pytest.mark.parametrize(
    "component", [".git", ".GIT", ".git.", ".git ", ".git. .", "git~1", "GIT~1", ".git::$DATA"]
)
def test_dotgit_aliases(component: str) -> None:
    assert is_dotgit_component(component)


@pytest.mark.parametrize("component", [".gitignore", "git", ".github", "x.git", "git~2", ".gi"])
def test_not_dotgit(component: str) -> None:
    assert not is_dotgit_component(component)


@pytest.mark.parametrize(
    ("path", "placeholder"),
    [
        ("path/to/file.py", True),
        ("./path/to/module.py", True),
        ("Path\\To\\x.ts", True),
        ("some/path/a.py", True),
        ("foo/bar/baz.py", True),
        ("your/project/main.py", True),
        ("your_file.py", True),
        ("src/your_module.py", True),
        ("your-component.tsx", True),
        ("yourfile.js", True),
        ("<file>.py", True),
        ("src/<name>/x.py", True),
        ("filename.py", True),
        ("file.ext", True),
        ("script.extension", True),
        ("file.py", True),
        ("my_file.py", True),
        ("example.py", True),
        ("src/example.js", True),
        ("src/app.py", False),
        ("path.py", False),
        ("path/a.py", False),
        ("to/path/a.py", False),
        ("foo.py", False),
        ("foo/baz.py", False),
        ("yours.py", False),
        ("profile.py", False),
        ("files/x.py", False),
        ("examples/basic.py", False),
        ("[id].tsx", False),
        ("{{cookiecutter.slug}}/a.py", False),
        ("Makefile", False),
        ("file", False),
        ("", False),
    ],
)
def test_is_placeholder_path(path: str, placeholder: bool) -> None:
    assert is_placeholder_path(path) is placeholder


# --- properties ----------------------------------------------------------------------------

FRAGMENTS = st.sampled_from(
    ["a", "b.py", "src", "pkg", "..", ".", "", " ", ".git", ".GIT", ".git.", "git~1", "~",
     "C:", "x:y", "\\", "/", "\x00", "\n", "\u200c", "...", "é", "inside", "inside_abs",
     "out", "out_abs", "hooks", "dotgit", "loop", "chain", "chain_out", "to_root", "up",
     "deep_out", "file_out", "dangling_in", "dangling_out"]
)  # fmt: skip
CANDIDATES = st.one_of(
    st.text(),
    st.lists(FRAGMENTS, max_size=8).map("/".join),
    st.lists(FRAGMENTS, max_size=8).map("\\".join),
    st.lists(st.one_of(FRAGMENTS, st.text(max_size=3)), max_size=8).map("/".join),
)
PROPERTY_SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def assert_inside(workdir: Path, rel: str) -> None:
    """What every accepted path must satisfy, checked against the real file system."""
    assert rel and not rel.startswith("/") and "\\" not in rel and ":" not in rel
    parts = rel.split("/")
    assert "" not in parts and "." not in parts and ".." not in parts
    assert not any(is_dotgit_component(p) for p in parts)
    root = os.path.realpath(workdir)
    resolved = os.path.realpath(os.path.join(workdir, rel))
    assert os.path.commonpath([root, resolved]) == root, (rel, resolved)
    assert resolved != root
    inner = os.path.relpath(resolved, root).split(os.sep)
    assert not any(is_dotgit_component(p) for p in inner), (rel, resolved)


@PROPERTY_SETTINGS
@given(CANDIDATES)
def test_accepted_paths_stay_inside(tree: Path, candidate: str) -> None:
    try:
        rel = repo_relative(str(tree), candidate)
    except UnsafePathError as err:
        assert str(err)
        return
    assert_inside(tree, rel)
    assert repo_relative(str(tree), rel) == rel  # normalization is idempotent


@PROPERTY_SETTINGS
@given(st.text())
def test_is_placeholder_path_is_total(path: str) -> None:
    assert isinstance(is_placeholder_path(path), bool)


@pytest.mark.parametrize(
    ("name", "wanted"),
    [
        (".gitattributes", True),
        (".gitmodules", True),
        (".GitModules", True),
        (".gitattributes. . ", True),  # NTFS drops trailing dots and spaces
        (".git\u200cmodules", True),  # HFS+ ignores the zero-width non-joiner
        ("GITMOD~1", True),
        ("gi7d29~4", True),  # NTFS short name of .gitattributes
        (".gitignore", False),
        ("gitattributes", False),
        ("gitmod~5", False),
        ("app.py", False),
    ],
)
def test_names_git_fsck_wants_as_blobs(name: str, wanted: bool) -> None:
    assert fsck_wants_blob(name) is wanted
