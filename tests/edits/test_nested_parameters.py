"""A nested function given alone is told by its parameter NAMES, not the text of its
parameter list: small models drop or add annotations and defaults, reflow the list, add a
trailing comma or a comment (`parameters.py`, `nested.py`, `align.py`). Real files of public
projects, real tree-sitter."""

from __future__ import annotations

import keyword

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.edits.realcorpus import CODE
from tinymem.edits.align import align
from tinymem.edits.alignment import Evidence
from tinymem.edits.parameters import parameter_names

SCAFFOLD = (CODE / "flask/src/flask/sansio/scaffold.py").read_bytes()
UTILS = (CODE / "click/src/click/utils.py").read_bytes()
RESPONSE = (CODE / "express/lib/response.js").read_bytes()

DECORATOR = b"""def decorator(f):
    endpoint = options.pop("endpoint", None) or f.__qualname__
    self.add_url_rule(rule, endpoint, f, **options)
    return f
"""


def _indent(text: bytes, by: int) -> bytes:
    return b"".join(b" " * by + line if line.strip() else line for line in text.splitlines(True))


def test_flask_route_decorator_without_annotations_is_refused_at_any_indentation() -> None:
    # It was appended at the top level of scaffold.py: `(f)` is not `(f: T_route)` as text.
    for block in (DECORATOR, _indent(DECORATOR, 8)):
        a = align("src/flask/sansio/scaffold.py", block, SCAFFOLD, Evidence())
        assert a.targets == [] and a.blocked is not None
        # Three methods nest a `decorator(f)`: each is named, to be asked for whole.
        assert "nested in `Scaffold.route` and `Scaffold.endpoint`" in a.blocked
        assert "the whole of `Scaffold.route`" in a.blocked


def test_the_head_the_file_writes_names_only_its_own_enclosing_function() -> None:
    block = DECORATOR.replace(b"def decorator(f):", b"def decorator(f: T_route) -> T_route:")
    a = align("src/flask/sansio/scaffold.py", _indent(block, 8), SCAFFOLD, Evidence())
    assert a.blocked is not None and "nested in `Scaffold.route` in" in a.blocked
    # Other annotations (the model's own): the same names, so every `decorator(f)`.
    block = DECORATOR.replace(b"(f):", b"(f: t.Callable[..., t.Any]) -> t.Callable[..., t.Any]:")
    a = align("src/flask/sansio/scaffold.py", block, SCAFFOLD, Evidence())
    assert a.blocked is not None and "`Scaffold.errorhandler`" in a.blocked


def test_click_safecall_wrapper_rewritten_parameters_is_refused() -> None:
    body = b"    try:\n        return func(*args, **kwargs)\n    except Exception as e:\n"
    body += b"        print(e)\n    return None\n"
    heads = [
        b"def wrapper(*args, **kwargs):\n",  # annotations dropped
        b"def wrapper(*args: t.Any, **kwargs: t.Any) -> t.Any:\n",  # other annotations
        b"def wrapper(\n    *args,  # positional\n    **kwargs,\n):\n",  # reflowed, a comment
    ]
    for head in heads:
        for block in (head + body, _indent(head + body, 4)):
            a = align("src/click/utils.py", block, UTILS, Evidence())
            assert a.targets == [], block
            assert a.blocked is not None and "nested in `_safecall`" in a.blocked


def test_a_new_function_taking_other_parameter_names_is_still_added() -> None:
    # Review item 10's rule holds with names: `wrapper(response)` is not `_safecall`'s.
    block = b"def wrapper(response: dict[str, t.Any]) -> str:\n    return str(response)\n"
    a = align("src/click/utils.py", block, UTILS, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("wrapper", "add")]
    # `args` is not `*args`: how a parameter collects arguments is part of its name.
    block = b"def wrapper(args, kwargs):\n    return args\n"
    a = align("src/click/utils.py", block, UTILS, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("wrapper", "add")]


def test_express_onerror_with_a_default_and_a_comment_is_refused() -> None:
    block = b"function onerror(err = null /* the stream's */) {\n  if (done) return;\n"
    block += b"  done = true;\n  callback(err);\n}\n"
    for text in (block, _indent(block, 2)):
        a = align("lib/response.js", text, RESPONSE, Evidence())
        assert a.blocked is not None and "nested in `sendfile`" in a.blocked


TS = b"""export function outer(a: number): number {
  const helper = (x: number): number => x + a
  return helper(a)
}
"""

RS = b"""pub fn outer(a: u32) -> u32 {
    fn helper(x: u32) -> u32 {
        x + 1
    }
    helper(a)
}
"""


def test_typescript_and_rust_nested_functions_with_other_types_are_refused() -> None:
    for block in (b"const helper = (x) => x + a + 1\n", b"const helper = x => x + a + 1\n"):
        a = align("src/a.ts", block, TS, Evidence())
        assert a.blocked is not None and "nested in `outer`" in a.blocked
    for head in (b"fn helper(mut x: u32) -> u32 {\n", b"fn helper(x: u64) -> u64 {\n"):
        a = align("src/lib.rs", head + b"    x + 2\n}\n", RS, Evidence())
        assert a.blocked is not None and "nested in `outer`" in a.blocked


KEYS = b"""def key(item: Item) -> str:
    return item.name


def sort_users(users):
    def key(user):
        return user.age

    return sorted(users, key=key)
"""


def test_a_top_level_namesake_is_told_from_the_nested_one_by_parameter_names() -> None:
    # Neither head is written as the file has it: the names say which.
    a = align("users.py", b"def key(item):\n    return item.name.lower()\n", KEYS, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("key", "modify")]
    block = b"def key(user: User) -> int:\n    return -user.age\n"
    a = align("users.py", block, KEYS, Evidence())
    assert a.blocked is not None and "nested in `sort_users`" in a.blocked


def test_a_head_written_as_the_file_has_it_outweighs_names_a_nested_one_shares() -> None:
    same_names = b"""def key(item):
    return item.name


def sort_users(users):
    def key(item: User) -> int:
        return item.age

    return sorted(users, key=key)
"""
    a = align("users.py", b"def key(item):\n    return item.id\n", same_names, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("key", "modify")]
    # Written as neither has it, with the names of both: the prompt decides, as before.
    block = b"def key(item: Thing):\n    return item.id\n"
    assert align("users.py", block, same_names, Evidence()).blocked is not None
    shown = align("users.py", block, same_names, Evidence(hydrated=frozenset({"key"})))
    assert shown.blocked is None and [t.name for t in shown.targets] == ["key"]


def test_parameter_names_of_each_language() -> None:
    py = b"def f(a, b: int = 1, *args: P.args, c=2, /, d=3, *, e, **kw: t.Any,  # x\n):\n  pass\n"
    assert parameter_names("python", py) == ("a", "b", "*args", "c", "d", "e", "**kw")
    ts = b"function f(a, b: number = 1, c?: string, ...rest: T[], { x, y }: P) {}\n"
    assert parameter_names("typescript", ts) == ("a", "b", "c", "...rest", "{x,y}")
    js = b"const z = 1, f = async (a, b = 1, ...r) => a\n"
    assert parameter_names("javascript", js) == ("a", "b", "...r")
    rs = b"fn f(&mut self, mut a: u32, (b, c): (u32, u32)) -> u32 { 1 }\n"
    assert parameter_names("rust", rs) == ("self", "a", "(b,c)")
    assert parameter_names("python", b"x = 1\n") is None
    assert parameter_names("go", b"func f(a int) {}\n") is None
    assert parameter_names(None, b"def f(a): pass\n") is None


_IDENTS = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s)
)
_ANNOTATIONS = st.sampled_from(["", ": int", ": t.Any", ": dict[str, int]", ": 'F'", ": A | None"])
_DEFAULTS = st.sampled_from(["", "1", "None", "'x, y'", "(1, 2)", "f(a=1)", "[]"])
_GAPS = st.sampled_from(["", " ", "\n    ", "  # note\n    "])


@settings(max_examples=120, deadline=None)
@given(
    st.lists(_IDENTS, min_size=0, max_size=5, unique=True),
    st.data(),
)
def test_annotations_defaults_and_layout_never_change_python_names(
    names: list[str], data: st.DataObject
) -> None:
    parts: list[str] = []
    defaulted = False
    for name in names:
        annotation = data.draw(_ANNOTATIONS)
        default = data.draw(_DEFAULTS) if not defaulted else data.draw(_DEFAULTS.filter(bool))
        defaulted = defaulted or bool(default)
        spaced = " = " if annotation else "="
        parts.append(name + annotation + (spaced + default if default else ""))
    sep = "," + data.draw(_GAPS)
    trailing = "," if parts and data.draw(st.booleans()) else ""
    head = f"def f({data.draw(_GAPS)}{sep.join(parts)}{trailing}\n)"
    text = f"{head}{data.draw(st.sampled_from(['', ' -> int', ' -> t.Any']))}:\n    pass\n"
    assert parameter_names("python", text.encode()) == tuple(names), text


def test_a_nested_function_given_with_a_parameter_added_keeps_its_body_and_is_refused() -> None:
    # Other parameter NAMES, the nested function's body kept with a line changed: a model
    # changing that function, not defining a new one of its name.
    block = b"""def wrapper(*args, logger=None, **kwargs):
    try:
        return func(*args, **kwargs)
    except Exception as e:
        if logger is not None:
            logger.exception(e)
    return None
"""
    for text in (block, _indent(block, 4)):
        a = align("src/click/utils.py", text, UTILS, Evidence())
        assert a.targets == [] and a.blocked is not None
        assert "nested in `_safecall`" in a.blocked
    block = b"function onerror(err, res) {\n  if (done) return;\n  done = true;\n"
    block += b"  if (res.headersSent) return;\n  callback(err);\n}\n"
    a = align("lib/response.js", block, RESPONSE, Evidence())
    assert a.blocked is not None and "nested in `sendfile`" in a.blocked


RETRY = b"""def retry(fn):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper
"""


def test_a_closure_hoisted_with_its_free_variable_as_a_parameter_is_a_new_function() -> None:
    # One line in common is no body kept: the closure moved to the top level is added.
    block = b"def wrapper(fn, *args, **kwargs):\n    return fn(*args, **kwargs)\n"
    a = align("net.py", block, RETRY, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("wrapper", "add")]


_TS_TYPES = st.sampled_from(["", ": number", ": string[]", ": Map<string, number>", ": A | B"])


@settings(max_examples=60, deadline=None)
@given(
    # A prefix keeps clear of JavaScript's reserved words (`do`, `new`, `this`, ...).
    st.lists(_IDENTS.map(lambda s: "v_" + s), max_size=4, unique=True),
    st.data(),
)
def test_types_defaults_and_layout_never_change_typescript_names(
    names: list[str], data: st.DataObject
) -> None:
    parts = [
        name
        + data.draw(st.sampled_from(["", "?"]))
        + data.draw(_TS_TYPES)
        + data.draw(st.sampled_from(["", " = 1", " = 'a, b'", " = f(x, y)"]))
        for name in names
    ]
    parts = [p.replace("?", "") if "=" in p else p for p in parts]  # `x?: T = 1` is invalid
    sep = "," + data.draw(st.sampled_from([" ", "\n  ", " /* c */ ", " // c\n  "]))
    arrow = data.draw(st.booleans())
    params = f"({sep.join(parts)})"
    text = f"const f = {params} => 1\n" if arrow else f"function f{params}: void {{}}\n"
    assert parameter_names("typescript", text.encode()) == tuple(names), text


def test_a_new_function_sharing_only_boilerplate_lines_with_a_nested_one_is_added() -> None:
    # Review (fb1): `wrapper(stream)` shares `try:`, `except Exception:`, `pass` and `return
    # None` with `_safecall`'s nested wrapper, 4 of its 5 lines, and was refused as that one.
    # Lines naming only keywords and literals are no evidence of a body kept.
    block = b"""def wrapper(stream: t.IO[t.Any]) -> int | None:
    try:
        return stream.fileno()
    except Exception:
        pass
    return None
"""
    a = align("src/click/utils.py", block, UTILS, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("wrapper", "add")]
    # The same with a literal for a keyword: a string says nothing of whose body it is.
    block = block.replace(b"return None", b'return "closed"')
    a = align("src/click/utils.py", block, UTILS, Evidence())
    assert a.blocked is None and [(t.name, t.op) for t in a.targets] == [("wrapper", "add")]
