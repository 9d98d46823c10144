"""A function nested in another, given alone, is never added at the top level nor put in
place of a top-level namesake (`nested.py`, `align.py`). Real tree-sitter."""

from __future__ import annotations

from tinymem.edits.align import align
from tinymem.edits.alignment import Evidence
from tinymem.edits.nested import nested_functions
from tinymem.symbols import extract

USERS = b"""def key(item):
    return item.name


def sort_users(users):
    def key(user):
        return user.age

    return sorted(users, key=key)
"""

TS = b"""export function outer(a: number): number {
  const helper = (x: number): number => x + a
  function named(y: number): number {
    return y
  }
  return helper(named(a))
}

export function other(): number {
  return 1
}
"""

RS = b"""pub fn outer(a: u32) -> u32 {
    fn helper(x: u32) -> u32 {
        x + 1
    }
    helper(a)
}

pub fn other() -> u32 {
    1
}
"""


def test_nested_functions_are_found_with_the_entity_around_them() -> None:
    found = nested_functions("typescript", TS, extract("a.ts", TS).symbols)
    assert [(n.name, n.enclosing, n.line) for n in found] == [
        ("helper", "outer", 2),
        ("named", "outer", 3),
    ]
    found = nested_functions("rust", RS, extract("lib.rs", RS).symbols)
    assert [(n.name, n.enclosing) for n in found] == [("helper", "outer")]
    assert nested_functions(None, b"x = 1\n", ()) == []


def test_a_python_nested_function_alone_is_refused_naming_its_function() -> None:
    a = align(
        "users.py", b"    def key(user):\n        return (user.age, user.name)\n", USERS, Evidence()
    )
    assert a.blocked is not None and a.targets == []
    assert "nested in `sort_users`" in a.blocked and "the whole of `sort_users`" in a.blocked


def test_a_namesake_of_a_top_level_function_is_that_one_by_its_signature() -> None:
    # D3b: `def key(item)` is the top-level one's signature, and no nested one's.
    a = align("users.py", b"def key(item):\n    return item.name.lower()\n", USERS, Evidence())
    assert a.blocked is None
    assert [(t.name, t.op) for t in a.targets] == [("key", "modify")]


def test_a_namesake_neither_signature_decides_is_refused_unless_the_prompt_did() -> None:
    block = b"def key(thing, reverse=False):\n    return thing.name\n"
    a = align("users.py", block, USERS, Evidence())
    assert a.blocked is not None
    assert (
        "could be `key` (`def key(item):`) or the function of that name nested in `sort_users`"
        in a.blocked
    )
    # The prompt showed the top-level one and not the function around the nested one.
    shown = align("users.py", block, USERS, Evidence(hydrated=frozenset({"key"})))
    assert shown.blocked is None and [t.name for t in shown.targets] == ["key"]
    both = Evidence(hydrated=frozenset({"key", "sort_users"}))
    assert align("users.py", block, USERS, both).blocked is not None


def test_js_and_rust_nested_functions_alone_are_refused() -> None:
    a = align("src/a.ts", b"const helper = (x: number): number => x + a + 1\n", TS, Evidence())
    assert a.blocked is not None and "nested in `outer`" in a.blocked
    a = align(
        "src/a.ts", b"function named(y: number): number {\n  return y + 1\n}\n", TS, Evidence()
    )
    assert a.blocked is not None and "nested in `outer`" in a.blocked
    a = align("src/lib.rs", b"fn helper(x: u32) -> u32 {\n    x + 2\n}\n", RS, Evidence())
    assert a.blocked is not None and "nested in `outer`" in a.blocked


def test_a_new_function_of_another_name_is_still_added_at_the_top_level() -> None:
    a = align("src/lib.rs", b"fn brand_new(x: u32) -> u32 {\n    x + 2\n}\n", RS, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("brand_new", "add")]
    a = align("users.py", b"def by_age(user):\n    return user.age\n", USERS, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("by_age", "add")]


def test_the_whole_enclosing_function_is_placed_as_before() -> None:
    block = USERS.split(b"\n\n\n", 1)[1].replace(b"user.age", b"(user.age, user.name)")
    a = align("users.py", block, USERS, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("sort_users", "modify")]


NET = b"""def retry(fn):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def fetch(url):
    return url
"""


def test_a_new_top_level_function_named_only_like_a_nested_one_with_other_parameters() -> None:
    # Review item 10: a new module-level `def wrapper(response)` was refused because retry
    # has a nested `wrapper(*args, **kwargs)`, though the parameters differ.
    block = b'def wrapper(response):\n    return {"data": response}\n'
    a = align("net.py", block, NET, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("wrapper", "add")]
    a = align("src/lib.rs", b"fn helper(x: u32, y: u32) -> u32 {\n    x + y\n}\n", RS, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("helper", "add")]
    # The nested one's parameters: still that one, refused (its body changed or not).
    same = b"def wrapper(*args, **kwargs):\n    print(args)\n    return fn(*args, **kwargs)\n"
    a = align("net.py", same, NET, Evidence())
    assert a.blocked is not None and "nested in `retry`" in a.blocked
