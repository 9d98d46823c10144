"""JavaScript/TypeScript definitions by assignment (`res.location = function location(url)
{…}`, `Foo.prototype.bar = …`, `exports.f = …`) are entities, named by their left side."""

from __future__ import annotations

import pytest

from tests.edits.realcorpus import CODE
from tinymem.symbols import extract

EXPRESS = (CODE / "express/lib/response.js").read_bytes()


def _names(path: str, data: bytes) -> list[tuple[str, str, str | None]]:
    return [(s.name, s.kind, s.parent) for s in extract(path, data).symbols]


def test_express_response_defines_every_res_method() -> None:
    found = extract("lib/response.js", EXPRESS)
    assert found.clean
    res = [s for s in found.symbols if s.name.startswith("res.")]
    # 20 statements `res.x = function …`, two of them chains of two names
    # (`res.contentType = res.type = …`, `res.set = res.header = …`).
    assert len(res) == 22
    assert {s.kind for s in res} == {"method"}
    assert {s.parent for s in res} == {"res"}
    names = {s.name for s in res}
    assert {"res.location", "res.send", "res.get", "res.vary", "res.set", "res.header"} <= names
    assert {s.name for s in found.symbols if s.parent is None} == {"sendfile", "stringify"}
    location = next(s for s in res if s.name == "res.location")
    assert EXPRESS[location.start : location.end] == (
        b"res.location = function location(url) {\n"
        b"  return this.set('Location', encodeUrl(url));\n};"
    )


def test_a_chain_names_one_definition_under_each_name() -> None:
    by_name = {s.name: s for s in extract("lib/response.js", EXPRESS).symbols}
    one, two = by_name["res.set"], by_name["res.header"]
    assert (one.start, one.end) == (two.start, two.end)
    assert EXPRESS[one.start : one.end].startswith(b"res.set =\nres.header = function header(")


@pytest.mark.parametrize("path", ["a.js", "a.ts"])
def test_assignment_shapes(path: str) -> None:
    data = b"""\
Foo.prototype.bar = function () {
  return 1;
};
exports.f = (a) => a;
module.exports.g = function* g() {};
module.exports = function main() {};
a.b.c = async function c() {};
"""
    assert _names(path, data) == [
        ("Foo.prototype.bar", "method", "Foo.prototype"),
        ("exports.f", "method", "exports"),
        ("module.exports.g", "method", "module.exports"),
        ("module.exports", "method", "module"),
        ("a.b.c", "method", "a.b"),
    ]


def test_what_is_not_a_definition_by_assignment() -> None:
    data = b"""\
res.limit = 10;
res.alias = res.send;
res[kind] = function () {};
make().x = function () {};
this.y = function () {};
a.b = c = function () {};
function outer() {
  inner.z = function () {};
}
"""
    assert _names("a.js", data) == [("outer", "function", None)]


def test_a_class_member_and_an_assignment_of_one_name_are_told_apart() -> None:
    data = b"""\
class Foo {
  bar() {}
}
Foo.bar = function () {};
"""
    assert _names("a.js", data) == [
        ("Foo", "class", None),
        ("Foo.bar", "method", "Foo"),
        ("Foo.bar#2", "method", "Foo"),
    ]
