"""A bare indented `...` standing for code a block leaves out (audit round 3, item 1), on
real files: refused as `# ... existing code ...` at that place is."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import Initialise, tm, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer
from tinymem.edits.stubs import elided_members, placeholder_members, stubbed_in_file
from tinymem.symbols import extract

STRUCTURES = "src/requests/structures.py"
SESSIONS = "src/requests/sessions.py"


def _text(path: str, name: str) -> bytes:
    data = (CODE / "requests" / path).read_bytes()
    (sym,) = [s for s in extract(path, data).symbols if s.name == name]
    return data[sym.start : sym.end]


EQ = _text(STRUCTURES, "CaseInsensitiveDict.__eq__")
OTHER_DICT = (
    b"other_dict: CaseInsensitiveDict[Any] = CaseInsensitiveDict(other)"
    b"  # type: ignore[reportUnknownArgumentType]"
)


def test_dots_in_place_of_a_line_of_the_file_are_an_elision() -> None:
    assert OTHER_DICT in EQ
    assert elided_members(STRUCTURES, EQ, EQ.replace(OTHER_DICT, b"...")) == [""]
    # In the class, the method is named.
    cls = _text(STRUCTURES, "CaseInsensitiveDict")
    assert elided_members(STRUCTURES, cls, cls.replace(OTHER_DICT, b"...")) == ["__eq__"]


def test_dots_for_members_in_a_class_body_are_an_elision() -> None:
    cls = _text(STRUCTURES, "CaseInsensitiveDict")
    start = cls.index(b"    def __setitem__(")
    end = cls.index(b"    def __eq__(")
    assert elided_members(STRUCTURES, cls, cls[:start] + b"    ...\n\n" + cls[end:]) == [""]


def test_dots_as_values_are_not_elisions() -> None:
    for line in (
        b"x = ...",
        b"print(...)",
        b"shape: tuple[int, ...] = ()",
        b"item = arr[..., 0]",
        b"return NotImplemented if other is ... else False",
    ):
        given_ = EQ.replace(b"return NotImplemented", line)
        assert elided_members(STRUCTURES, EQ, given_) == [], line


def test_dots_the_file_has_at_that_place_are_not_elisions() -> None:
    old = (
        b"def load(name):\n    try:\n        import yaml\n    except ImportError:\n        ...\n"
        b"    if TYPE_CHECKING:\n        ...\n    return yaml.safe_load(name)\n"
    )
    new = old.replace(b"safe_load(name)", b"safe_load(name.strip())")
    assert elided_members("a.py", old, new) == []
    # The same count of `...` moved to another place still stands for code there.
    moved = old.replace(
        b"    except ImportError:\n        ...\n", b"    except ImportError:\n        raise\n"
    )
    moved = moved.replace(b"    return yaml", b"    for _ in ():\n        ...\n    return yaml")
    assert elided_members("a.py", old, moved) == [""]


def test_a_body_of_only_dots_is_left_to_the_placeholder_rule() -> None:
    stub = b"def __eq__(self, other: object) -> bool:\n    ...\n"
    assert elided_members(STRUCTURES, EQ, stub) == []
    assert placeholder_members(STRUCTURES, EQ, stub) == [""]
    # The file's own protocol-like declaration, given back as it is.
    send = _text(SESSIONS, "SessionRedirectMixin.send")
    assert elided_members(SESSIONS, send, send) == []


def test_a_definition_the_file_does_not_have_is_not_judged() -> None:
    # Its `...` stands for nothing the file holds: a stub the model means to write.
    cls = _text(STRUCTURES, "CaseInsensitiveDict")
    added = cls + b"\n    def later(self) -> None:\n        self.ready = False\n        ...\n"
    assert elided_members(STRUCTURES, cls, added) == []


def test_every_real_python_definition_given_as_the_file_has_it_passes() -> None:
    texts = []
    for path in sorted(CODE.rglob("*.py")):
        data = path.read_bytes()
        found = extract(path.name, data).symbols
        texts += [data[s.start : s.end] for s in found if s.kind in ("function", "method")]
    assert len(texts) > 200
    for text in texts:
        assert elided_members("x.py", text, text) == [], text[:80]


REQUEST = _text(SESSIONS, "Session.request")


def _simple_lines(text: bytes) -> list[int]:
    """Lines (0-based) of `text` dedented that hold one whole simple statement of the body."""
    lines = text.decode().split("\n")
    tree = ast.parse("\n".join(lines))
    (fn,) = tree.body
    assert isinstance(fn, ast.FunctionDef)
    out = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.stmt) or node is fn or hasattr(node, "body"):
            continue
        if node.lineno != node.end_lineno or node is fn.body[0]:  # the docstring stays
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        out.append(node.lineno - 1)
    return out


LINES = _simple_lines(REQUEST)


@settings(max_examples=60, deadline=None)
@given(st.sets(st.sampled_from(LINES), min_size=1, max_size=4))
def test_dots_for_any_statements_of_a_real_method_are_refused(chosen: set[int]) -> None:
    lines = REQUEST.decode().split("\n")
    for n in chosen:
        line = lines[n]
        lines[n] = line[: len(line) - len(line.lstrip())] + "..."
    given_ = "\n".join(lines).encode()
    assert elided_members(SESSIONS, REQUEST, given_) == [""]


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(LINES))
def test_the_method_as_the_file_has_it_with_one_change_is_not_refused(n: int) -> None:
    lines = REQUEST.decode().split("\n")
    lines[n] = lines[n] + "  # checked"
    assert elided_members(SESSIONS, REQUEST, "\n".join(lines).encode()) == []


def test_ask_accept_writes_no_bare_dots(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    structures = (CODE / "requests" / STRUCTURES).read_text()
    initialised({STRUCTURES: structures})
    server.add(
        f"In {STRUCTURES}, return False for non-mappings:\n\n```python\n"
        "    def __eq__(self, other: object) -> bool:\n"
        "        if isinstance(other, Mapping):\n            ...\n        else:\n"
        "            return False\n        # Compare insensitively\n"
        "        return dict(self.lower_items()) == dict(other_dict.lower_items())\n```\n"
    )
    proc = tm_ask(
        repo, server, "make CaseInsensitiveDict.__eq__ return False", "--accept", "--repair", "0"
    )
    assert proc.returncode == 0, proc.stderr
    assert "elided ('...') inside CaseInsensitiveDict.__eq__" in proc.stdout + proc.stderr
    assert (repo / STRUCTURES).read_text() == structures


def test_a_whole_file_with_bare_dots_keeps_the_method_it_elides(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    structures = (CODE / "requests" / STRUCTURES).read_text()
    initialised({STRUCTURES: structures})
    given_ = structures.replace(OTHER_DICT.decode(), "...").replace(
        "return NotImplemented", "return False"
    )
    server.add(f"Here is the whole file:\n\n```python path={STRUCTURES}\n{given_}```\n")
    proc = tm_ask(
        repo, server, "make CaseInsensitiveDict.__eq__ return False", "--json", "--repair", "0"
    )
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert (
        prop["gates"]["A"]
        == "elided ('...') inside CaseInsensitiveDict.__eq__: give the complete definition"
    )
    proc = tm(repo, "accept", str(prop["id"]))
    # Its complete definitions are spliced (none changes); the elided one is skipped.
    assert "skipped CaseInsensitiveDict, CaseInsensitiveDict.__eq__" in proc.stdout + proc.stderr
    assert (repo / STRUCTURES).read_text() == structures


def test_a_class_nested_in_a_method_is_part_of_its_text() -> None:
    old = (
        b"def build():\n    class Local:\n        def run(self):\n            return 1\n"
        b"    return Local\n"
    )
    new = old.replace(b"            return 1\n", b"            ...\n            return 2\n")
    assert elided_members("a.py", old, new) == [""]


# A deliberate `...` that replaces no code (review of the fix above, item 2).
UTILS = "src/click/utils.py"


def _click(name: str) -> bytes:
    data = (CODE / "click" / UTILS).read_bytes()
    (sym,) = [s for s in extract(UTILS, data).symbols if s.name == name]
    return data[sym.start : sym.end]


def test_a_new_nested_stub_class_is_not_an_elision() -> None:
    make_str = _click("make_str")
    given_ = make_str.replace(
        b"    if isinstance(value, bytes):",
        b"    class _Missing: ...\n\n"
        b"    if value is None or isinstance(value, _Missing):\n"
        b'        return ""\n'
        b"    if isinstance(value, bytes):",
    )
    assert elided_members(UTILS, make_str, given_) == []
    # A nested definition the file's function has with code is still judged.
    old = b"def build():\n    def run():\n        return 1\n    return run\n"
    assert elided_members("a.py", old, old.replace(b"return 1", b"...")) == [""]
    assert elided_members("a.py", old, old.replace(b"return 1", b"x = 2\n        ...")) == [""]


def test_the_files_dots_wrapped_in_a_new_block_are_the_files() -> None:
    old = (
        b"def load(path):\n    try:\n        import yaml\n    except ImportError:\n        ...\n"
        b"    with open(path) as f:\n        return f.read()\n"
    )
    new = (
        b"def load(path, use_yaml=True):\n    if use_yaml:\n        try:\n"
        b"            import yaml\n        except ImportError:\n            ...\n"
        b'    with open(path, encoding="utf-8") as f:\n        return f.read()\n'
    )
    assert elided_members("m.py", old, new) == []
    # One `...` of the file accounts for one: a second in the same kind of slot is code gone.
    twice = new.replace(
        b"        return f.read()",
        b"        try:\n            x = 1\n        except OSError:\n"
        b"            ...\n        return f.read()",
    )
    assert elided_members("m.py", old, twice) == [""]


def test_dots_for_a_pass_are_not_an_elision() -> None:
    safecall = _click("_safecall")
    given_ = safecall.replace(
        b"        except Exception:\n            pass",
        b"        except (Exception, KeyboardInterrupt):\n            ...",
    )
    assert given_ != safecall
    assert elided_members(UTILS, safecall, given_) == []
    # A `pass` the reply keeps is its own: a `...` for the `return None` beside it is not.
    kept = safecall.replace(b"        return None\n", b"        ...\n")
    assert elided_members(UTILS, safecall, kept) == [""]


# A placeholder a diff or SEARCH/REPLACE block puts in place of code (review item 1): an
# explicit removal, accepted with --allow-delete, never refused for good.
CHAIN = "src/chain.rs"
LEN_DIFF = (
    "```diff\n--- a/src/chain.rs\n+++ b/src/chain.rs\n@@ -76,16 +76,6 @@\n"
    " impl ExactSizeIterator for Chain<'_> {\n     fn len(&self) -> usize {\n"
    "-        match &self.state {\n-            Linked { mut next } => {\n"
    "-                let mut len = 0;\n-                while let Some(cause) = next {\n"
    "-                    next = cause.source();\n-                    len += 1;\n"
    "-                }\n"
    '-                len\n-            }\n-            #[cfg(feature = "std")]\n'
    "-            Buffered { rest } => rest.len(),\n-        }\n"
    '+        todo!("reimplement len")\n     }\n }\n```\n'
)
COPY_STUB = (
    f"{STRUCTURES}\n```python\n<<<<<<< SEARCH\n"
    "    def copy(self) -> CaseInsensitiveDict[_VT]:\n"
    "        return CaseInsensitiveDict(self._store.values())\n=======\n"
    "    def copy(self) -> CaseInsensitiveDict[_VT]:\n        ...\n>>>>>>> REPLACE\n```\n"
)


def _ask_then_accept(
    repo: Path, server: ModelServer, path: str, project: str, reply: str
) -> tuple[dict[str, object], str]:
    server.add(reply)
    proc = tm_ask(repo, server, "stub it out for now", "--json", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    return prop, (CODE / project / path).read_text()


def test_a_diff_replacing_a_body_by_todo_is_accepted_with_allow_delete(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    source = (CODE / "anyhow" / CHAIN).read_text()
    initialised({CHAIN: source})
    prop, _ = _ask_then_accept(repo, server, CHAIN, "anyhow", f"{CHAIN}\n{LEN_DIFF}")
    gates = prop["gates"]
    assert isinstance(gates, dict)
    assert gates["A"] == "pass"
    assert gates["B"] == "user accept with --allow-delete"
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 5
    assert "--allow-delete" in proc.stderr + proc.stdout
    assert (repo / CHAIN).read_text() == source
    proc = tm(repo, "accept", str(prop["id"]), "--allow-delete")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = source.split("\n")
    assert lines[77].strip() == "match &self.state {" and lines[88] == "        }"
    lines[77:89] = ['        todo!("reimplement len")']
    assert (repo / CHAIN).read_text() == "\n".join(lines)


def test_a_search_replace_stubbing_a_short_body_needs_allow_delete(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    structures = (CODE / "requests" / STRUCTURES).read_text()
    initialised({STRUCTURES: structures})
    prop, _ = _ask_then_accept(repo, server, STRUCTURES, "requests", COPY_STUB)
    notes = prop["notes"]
    assert isinstance(notes, list)
    assert (
        "it replaces the code of CaseInsensitiveDict.copy by a placeholder (`...`, `todo!()`):"
        " accepting needs --allow-delete" in notes
    )
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 5
    assert "it replaces the code of CaseInsensitiveDict.copy by a placeholder" in (
        proc.stdout + proc.stderr
    )
    assert (repo / STRUCTURES).read_text() == structures
    proc = tm(repo, "accept", str(prop["id"]), "--allow-delete")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / STRUCTURES).read_text() == structures.replace(
        "        return CaseInsensitiveDict(self._store.values())\n", "        ...\n"
    )


def test_dots_an_edit_only_inserts_replace_nothing() -> None:
    before = (CODE / "requests" / STRUCTURES).read_bytes()
    line = b"        return dict(self.lower_items()) == dict(other_dict.lower_items())\n"
    after = before.replace(line, b"        ...\n" + line)
    assert stubbed_in_file(STRUCTURES, before, after) == []
    # In place of a line it names, the same `...` removes that line.
    other = OTHER_DICT + b"\n"
    assert stubbed_in_file(STRUCTURES, before, before.replace(b"    " + other, b"    ...\n")) == [
        "CaseInsensitiveDict.__eq__"
    ]


def test_dots_in_place_of_a_whole_member_name_the_class() -> None:
    before = (CODE / "requests" / STRUCTURES).read_bytes()
    copy = (
        b"    def copy(self) -> CaseInsensitiveDict[_VT]:\n"
        b"        return CaseInsensitiveDict(self._store.values())\n"
    )
    assert copy in before
    after = before.replace(copy, b"    ...\n")
    assert stubbed_in_file(STRUCTURES, before, after) == ["CaseInsensitiveDict"]
