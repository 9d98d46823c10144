"""Generated edits of real code: a member of a corpus file changed (a comment line put in its
body) and sent the way small models send it, in six shapes; and the judge of the result.

Used by the property test (tests/edits/test_real_properties.py) and the edit-success bench
(bench/bench_edits.py), so both judge the same way.
"""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path

from tests.edits.realcorpus import CODE
from tinymem.accept import plan
from tinymem.edits.proposals import build
from tinymem.edits.reply import parse_reply
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.hydration.excerpts import render
from tinymem.ledger import current
from tinymem.records import entity_key
from tinymem.repository import open_repo
from tinymem.symbols import Symbol, analyze, extract, language_for_path

__all__ = ["FILES", "SHAPES", "changed", "make_reply", "members", "normal", "outcome"]

FILES = sorted(
    str(p.relative_to(CODE))
    for p in CODE.rglob("*")
    if p.is_file() and "licenses" not in p.parts and p.suffix != ".md"
)
SHAPES = ["indented", "dedented", "reindented", "excerpt", "udiff", "search-replace"]


def members(file: str) -> list[Symbol]:
    data = (CODE / file).read_bytes()
    return [
        s
        for s in extract(file, data).symbols
        if s.parent is not None and data.count(b"\n", s.start, s.end) >= 2
    ]


def _lines_of(data: bytes, sym: Symbol) -> tuple[int, int]:
    """Byte range of the whole lines holding `sym`."""
    start = data.rfind(b"\n", 0, sym.start) + 1
    end = data.find(b"\n", sym.end)
    return start, len(data) if end < 0 else end + 1


def changed(file: str, data: bytes, sym: Symbol) -> bytes | None:
    """The file with a comment line put before the member's last line."""
    language = language_for_path(file)
    lead = b"#" if language in ("python", "ruby") else b"//"
    last = data.rfind(b"\n", sym.start, sym.end) + 1
    # At the indentation of the line it precedes, as a model writes a comment: a comment
    # at column 0 inside a method is valid Python that no one writes.
    closing = data[last : sym.end]
    indent = closing[: len(closing) - len(closing.lstrip(b" \t"))]
    new = data[:last] + indent + lead + b" tm-property changed\n" + data[last:]
    names = [s.name for s in extract(file, data).symbols]
    if [s.name for s in extract(file, new).symbols] != names:
        return None
    return new if analyze(language or "", new).clean else None


def _reindent(text: str) -> str:
    """Another indentation unit, as an editor converts it: tabs become four spaces; in a text
    indented by fours each four becomes two, else each two becomes four (alignment spaces
    past the last whole unit are kept)."""
    widths = [len(x) - len(x.lstrip(" ")) for x in text.split("\n") if x.strip()]
    fours = all(w % 4 == 0 for w in widths)
    out = []
    for line in text.split("\n"):
        stripped = line.lstrip(" \t")
        ws = line[: len(line) - len(stripped)]
        if "\t" in ws:
            ws = ws.replace("\t", "    ")
        elif fours:
            ws = "  " * (len(ws) // 4)
        else:
            ws = "    " * (len(ws) // 2) + " " * (len(ws) % 2)
        out.append(ws + stripped)
    return "\n".join(out)


def _unique_diff(path: str, old: bytes, new: bytes) -> str:
    """A unified diff with three lines of context, or more where a hunk's context and
    removed lines occur twice in the file (express's `return this;\n};` closes several
    definitions): tm refuses a hunk that matches several places, as it should, so the diff
    a careful model writes is the one that says where it goes."""
    before = [x + "\n" for x in old.decode().split("\n")[:-1]]
    after = [x + "\n" for x in new.decode().split("\n")[:-1]]
    text = ""
    for context in range(3, 12):
        text = "".join(difflib.unified_diff(before, after, f"a/{path}", f"b/{path}", n=context))
        hunks = text.split("\n@@")[1:]
        olds = [
            "".join(line[1:] + "\n" for line in h.split("\n")[1:] if line.startswith((" ", "-")))
            for h in hunks
        ]
        if all(old.decode().count(o) == 1 for o in olds):
            break
    return text


def make_reply(shape: str, file: str, old: bytes, new: bytes, sym: Symbol, new_sym: Symbol) -> str:
    path = file
    start, end = _lines_of(new, new_sym)
    member = new[start:end].decode()
    if shape == "indented":
        return f"```code path={path}\n{member}```\n"
    if shape == "dedented":
        return f"```code path={path}\n{textwrap.dedent(member)}```\n"
    if shape == "reindented":
        return f"```code path={path}\n{_reindent(textwrap.dedent(member))}```\n"
    if shape == "excerpt":
        text = render(language_for_path(path), new, [(new_sym.start, new_sym.end)])
        return f"```code path={path}\n{text}\n```\n"
    if shape == "udiff":
        return "```diff\n" + _unique_diff(path, old, new) + "```\n"
    o_start, o_end = _lines_of(old, sym)
    search = old[o_start:o_end].decode()
    return f"{path}\n```\n<<<<<<< SEARCH\n{search}=======\n{member}>>>>>>> REPLACE\n```\n"


def normal(text: bytes) -> list[bytes]:
    return [line.strip() for line in text.split(b"\n") if line.strip()]


def outcome(repo: Path, file: str, sym: Symbol, shape: str) -> tuple[str, str]:
    """("applied" | "blocked" | "wrong", what went wrong) for `sym` of `file`, changed and
    sent in `shape` (one of SHAPES), through the real pipeline on `repo` (the corpus files
    at `<project>/<path>`, tm init'ed): proposals built on its State Map, then the accept
    plan (which writes nothing). "applied": the file after accept equals the expected file
    (indented, excerpt, diff, SEARCH/REPLACE), or every other definition keeps its bytes and
    the member holds the new text (dedented, re-indented: written in the file's indentation).
    """
    old = (CODE / file).read_bytes()
    new = changed(file, old, sym)
    if new is None:
        return "skip", "the change would not parse"
    new_sym = {s.name: s for s in extract(file, new).symbols}[sym.name]
    reply = make_reply(shape, file, old, new, sym, new_sym)
    handle = open_repo(str(repo))
    view = current(handle)
    meta = view.meta(file)
    assert meta is not None
    shown = {entity_key(file, sym.name): meta.entities[sym.name].artifact}
    writer = ObjectWriter(handle.git)
    built = build(
        view, writer, handle.workdir, parse_reply(reply), verify(handle, view), shown, "p"
    )
    writer.flush()
    proposals = [p for p in built.proposals if p.path == file]
    if not proposals:
        return "blocked", f"no proposal for {file}: {built.refused} {reply[:300]}"
    result = plan(handle, view, proposals)
    after = result.files[file].after if file in result.files else old
    blocked = [f"{c.blocked.gate}: {c.blocked.detail}" for c in result.checks if c.blocked]
    if blocked:
        if after == old or not any(c.ok for c in result.checks):
            return "blocked", "; ".join(blocked)
        return "wrong", "some proposals blocked, yet the file changes: " + "; ".join(blocked)
    if after is None:
        return "wrong", "the file would be removed"
    if shape in ("indented", "excerpt", "udiff", "search-replace"):
        return ("applied", "") if after == new else ("wrong", "not the expected file")
    before_syms = {s.name: old[s.start : s.end] for s in extract(file, old).symbols}
    after_syms = {s.name: after[s.start : s.end] for s in extract(file, after).symbols}
    if set(after_syms) != set(before_syms):
        return "wrong", f"definitions differ: {sorted(set(after_syms) ^ set(before_syms))}"
    # Other names of the same definition (`res.set = res.header = function …`) are it.
    twins = {s.name for s in extract(file, old).symbols if (s.start, s.end) == (sym.start, sym.end)}
    for name, text in before_syms.items():
        inside = name in twins or name.startswith(sym.name + ".")
        if not inside and not sym.name.startswith(name + ".") and after_syms[name] != text:
            return "wrong", f"{name} changed"
    if normal(after_syms[sym.name]) != normal(new[new_sym.start : new_sym.end]):
        return "wrong", f"{sym.name} does not hold the new text"
    if not analyze(language_for_path(file) or "", after).clean:
        return "wrong", "the file does not parse"
    return "applied", ""
