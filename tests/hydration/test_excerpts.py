"""Entities rendered as they sit in their files: headers, original indentation, `⋮`."""

from __future__ import annotations

from tinymem.edits.align import align
from tinymem.edits.alignment import Evidence
from tinymem.hydration.excerpts import render
from tinymem.symbols import extract

PY = b'''import os


class Flask:
    """The app."""

    def __init__(self):
        self.x = 1

    @setupmethod
    def post(self, rule):
        return rule

    def run(self):
        pass


def helper():
    return 1
'''

RUST = b"""pub struct Chain;

impl<'a> Iterator for Chain<'a> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, None)
    }
}
"""


def _span(path: str, data: bytes, name: str) -> tuple[int, int]:
    sym = {s.name: s for s in extract(path, data).symbols}[name]
    return sym.start, sym.end


def test_a_decorated_method_under_its_class_header() -> None:
    text = render("python", PY, [_span("a.py", PY, "Flask.post")])
    assert text == (
        "class Flask:\n"
        "    ⋮\n"
        "    @setupmethod\n"
        "    def post(self, rule):\n"
        "        return rule\n"
        "    ⋮"
    )


def test_two_members_of_one_class_share_the_header() -> None:
    spans = [_span("a.py", PY, "Flask.__init__"), _span("a.py", PY, "Flask.run")]
    text = render("python", PY, spans)
    assert text.count("class Flask:") == 1
    assert text.split("\n")[:2] == ["class Flask:", "    ⋮"]
    assert "    def run(self):\n        pass" in text and "post" not in text


def test_a_top_level_function_is_just_its_lines() -> None:
    assert render("python", PY, [_span("a.py", PY, "helper")]) == "def helper():\n    return 1"


def test_a_rust_impl_member_comes_with_its_impl_header_and_closer() -> None:
    text = render("rust", RUST, [_span("c.rs", RUST, "Chain.size_hint")])
    assert text == (
        "impl<'a> Iterator for Chain<'a> {\n"
        "    ⋮\n"
        "    fn size_hint(&self) -> (usize, Option<usize>) {\n"
        "        (0, None)\n"
        "    }\n"
        "}"
    )


def test_an_excerpt_copied_back_with_one_change_is_read_as_that_member() -> None:
    text = render("rust", RUST, [_span("c.rs", RUST, "Chain.size_hint")])
    changed = text.replace("(0, None)", "(1, Some(1))")
    aligned = align("c.rs", changed.encode(), RUST, Evidence())
    assert [(t.op, t.name) for t in aligned.targets] == [("modify", "Chain.size_hint")]
    assert aligned.problem is None
