"""The names of a function's parameters, read from its tree-sitter parameters node, and
its body.

Whether a block gives a nested function or a new one of the same name turns on the
parameters it takes (`nested.py`), and small models rewrite a parameter list without
changing what it takes: they drop or add annotations and defaults, reflow it, add a
trailing comma or a comment. Only the names are compared, in order, each with how it
collects arguments (`*args`, `**kwargs`, `...rest`), which a model does not change while
keeping a function: `def f(*args)` and `def f(args)` take different calls. A Python `*` or
`/` marker (keyword-only, positional-only) is left out: it changes how a caller may pass
the same parameters, and models drop it as they drop annotations. A Rust `mut` and `&self` /
`&mut self` are left out likewise (`self`). Python, JavaScript/TypeScript and Rust, the
languages `nested.py` finds nested functions in.
"""

from __future__ import annotations

from tree_sitter import Node

from tinymem.symbols.treesitter import parse_root

__all__ = ["body_of", "definition_body", "definition_parameters", "parameter_names"]

# The definitions whose parameters are read, per language; a JS `const f = () => …` is its
# declarator, whose value is the function.
_DEFINITIONS = {
    "python": frozenset({"function_definition"}),
    "javascript": frozenset(
        {
            "function_declaration",
            "generator_function_declaration",
            "variable_declarator",
        }
    ),
    "rust": frozenset({"function_item"}),
}
_DEFINITIONS["typescript"] = _DEFINITIONS["tsx"] = _DEFINITIONS["javascript"]
_JS_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
# How a parameter that collects the other arguments is written before its name.
_COLLECTORS = {"list_splat_pattern": "*", "dictionary_splat_pattern": "**", "rest_pattern": "..."}
# Children of a parameter list that are no parameter.
_NOT_PARAMETERS = frozenset({"positional_separator", "keyword_separator", "comment"})
# Where a parameter keeps its name apart from its type and default: TypeScript and Rust
# `pattern`, Python `name`, a JavaScript default's `left`.
_NAME_FIELDS = ("pattern", "name", "left")


def _name(node: Node, data: bytes) -> str:
    if node.type == "self_parameter":
        return "self"
    for field in _NAME_FIELDS:
        sub = node.child_by_field_name(field)
        if sub is not None:
            return _name(sub, data)
    first = node.named_children[0] if node.named_children else None
    if node.type in _COLLECTORS and first is not None:
        return _COLLECTORS[node.type] + _name(first, data)
    if node.type == "typed_parameter" and first is not None:  # Python `x: int`, `*a: P.args`
        return _name(first, data)
    # An identifier, or a destructuring pattern (`{a, b}`, `(x, y)`): its text, unspaced.
    return b"".join(data[node.start_byte : node.end_byte].split()).decode("utf-8", "replace")


def _function(definition: Node) -> Node | None:
    """The function a definition node defines: a JS declarator's value, else itself."""
    if definition.type != "variable_declarator":
        return definition
    value = definition.child_by_field_name("value")
    return value if value is not None and value.type in _JS_VALUES else None


def definition_parameters(definition: Node, data: bytes) -> tuple[str, ...] | None:
    """The parameter names of `definition` (a node of `_DEFINITIONS`), in order; None when
    it has no parameter list tree-sitter could read whole."""
    function = _function(definition)
    if function is None:
        return None
    single = function.child_by_field_name("parameter")  # a JS `x => …`
    if single is not None:
        return (_name(single, data),)
    params = function.child_by_field_name("parameters")
    if params is None or params.has_error:
        return None
    return tuple(
        _name(child, data) for child in params.named_children if child.type not in _NOT_PARAMETERS
    )


def definition_body(definition: Node, data: bytes) -> bytes:
    """The text of the body of `definition` (a node of `_DEFINITIONS`); empty when none."""
    function = _function(definition)
    body = function.child_by_field_name("body") if function is not None else None
    return b"" if body is None else data[body.start_byte : body.end_byte]


def _first_definition(language: str | None, text: bytes) -> Node | None:
    """The first function `text` defines, in document order: the outermost one it starts
    with. None when the language is not one read here or it defines none."""
    kinds = _DEFINITIONS.get(language or "")
    if kinds is None or language is None:
        return None
    stack = [parse_root(language, text)]
    while stack:
        node = stack.pop()
        if node.type in kinds and _function(node) is not None:
            return node
        stack.extend(reversed(node.named_children))
    return None


def parameter_names(language: str | None, text: bytes) -> tuple[str, ...] | None:
    """The parameter names of the first function `text` defines; None when the language is
    not one read here, or the text defines no function whose parameters parse."""
    found = _first_definition(language, text)
    return None if found is None else definition_parameters(found, text)


def body_of(language: str | None, text: bytes) -> bytes | None:
    """The body of the first function `text` defines (None: as `parameter_names`)."""
    found = _first_definition(language, text)
    return None if found is None else definition_body(found, text)
