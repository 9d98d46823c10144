"""Per-language definition queries (our own "tags" queries: the grammar pack ships none).

Capture conventions, read by `treesitter.py`:
- `@def.<kind>`  the definition node; its span is widened by the language's wrapper rules
                 (decorators, `export`, `template<...>`, a single-declarator `const x = ...`).
- `@name`        the name node. Absent when a hook computes the name (C declarators, Go
                 receivers, anonymous `export default`); several for a multi-name Go spec.
- `@scope` + `@scope.type`  a Rust `impl`: qualifies its members, is not an entity.
- `@block`       an anonymous body (lambda, closure, anonymous class): hides what it holds.
- other captures (`@receiver`, `@declarator`, `@value`, `@type`, `@object`) feed hooks.

A JavaScript/TypeScript function assigned to a member (`res.location = function location(url)
{…}`, `Foo.prototype.bar = …`, `exports.f = …`, `module.exports.f = …`) is a definition named
by its left side as written (`res.location`, `Foo.prototype.bar`): CommonJS and prototype code
defines most of its API that way. Each name of a chain (`res.set = res.header = function …`)
is one, all with the statement's span.

Patterns match anywhere in the tree; which matches count (top level and type members only) is
decided once, by span nesting, in `assemble.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinymem.symbols.assemble import SCOPE


@dataclass(frozen=True, slots=True)
class LangSpec:
    query: str
    comment_types: frozenset[str]  # leading doc comments of these node types join the span
    attribute_types: frozenset[str]  # leading siblings that always join the span
    method_containers: frozenset[str]  # a "function" directly inside one of these is a method
    identifier_types: tuple[str, ...]  # leaf node types `identifiers()` collects
    # Body nodes that start at their first statement (so a comment above it is theirs).
    body_types: frozenset[str] = frozenset()


_TYPE_CONTAINERS = frozenset({"class", "struct", "interface", "trait", "enum", "union", SCOPE})

PYTHON = LangSpec(
    query="""
(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
(module (assignment left: (identifier) @name right: (_) @value) @def.constant)
""",
    comment_types=frozenset({"comment"}),
    attribute_types=frozenset(),
    method_containers=_TYPE_CONTAINERS,
    identifier_types=("identifier",),
    body_types=frozenset({"block"}),
)

_JS_COMMON = """
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(class_body (method_definition name: [(property_identifier) (private_property_identifier)
                                      (string) (number)] @name) @def.method)
(variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)] @def.function)
(variable_declarator name: (identifier) @name value: (class) @def.class)
(export_statement value: [(function_expression) (arrow_function) (generator_function)]
  @def.function)
(export_statement value: (class) @def.class)
(export_statement declaration: (function_declaration !name) @def.function)
(export_statement declaration: (generator_function_declaration !name) @def.function)
(export_statement declaration: (class_declaration !name) @def.class)
(expression_statement (assignment_expression left: (member_expression) @name
  right: [(function_expression) (arrow_function) (generator_function) (assignment_expression)]
  @value)) @def.method
(arrow_function) @block
(function_expression) @block
(generator_function) @block
(class) @block
"""

_JS_IDENTIFIERS = (
    "identifier",
    "property_identifier",
    "private_property_identifier",
    "shorthand_property_identifier",
    "shorthand_property_identifier_pattern",
)

JAVASCRIPT = LangSpec(
    query=_JS_COMMON
    + """
(class_body (field_definition property: [(property_identifier) (private_property_identifier)]
  @name value: [(arrow_function) (function_expression)] @value) @def.method)
""",
    comment_types=frozenset({"comment"}),
    attribute_types=frozenset({"decorator"}),
    method_containers=_TYPE_CONTAINERS,
    identifier_types=_JS_IDENTIFIERS,
)

TYPESCRIPT = LangSpec(
    query=_JS_COMMON
    + """
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name) @def.enum
(internal_module name: (_) @name) @def.namespace
(module name: (_) @name) @def.module
(function_signature name: (_) @name) @def.function
(class_body (method_signature name: [(property_identifier) (private_property_identifier)
                                      (string) (number)] @name) @def.method)
(class_body (abstract_method_signature name: [(property_identifier)
                                              (private_property_identifier)] @name) @def.method)
(class_body (public_field_definition name: [(property_identifier) (private_property_identifier)]
  @name value: [(arrow_function) (function_expression)] @value) @def.method)
""",
    comment_types=frozenset({"comment"}),
    attribute_types=frozenset({"decorator"}),
    method_containers=_TYPE_CONTAINERS,
    identifier_types=(*_JS_IDENTIFIERS, "type_identifier"),
)

GO = LangSpec(
    query="""
(function_declaration name: (identifier) @name) @def.function
(method_declaration receiver: (parameter_list) @receiver name: (field_identifier) @name)
  @def.method
(type_spec name: (type_identifier) @name type: (_) @type) @def.type
(type_alias name: (type_identifier) @name) @def.type
(const_spec name: (identifier) @name) @def.constant
(var_spec name: (identifier) @name) @def.variable
(func_literal) @block
""",
    comment_types=frozenset({"comment"}),
    attribute_types=frozenset(),
    method_containers=_TYPE_CONTAINERS,
    identifier_types=("identifier", "field_identifier", "type_identifier", "package_identifier"),
)

RUST = LangSpec(
    query="""
(function_item name: (identifier) @name) @def.function
(trait_item body: (declaration_list
  (function_signature_item name: (identifier) @name) @def.function))
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(union_item name: (type_identifier) @name) @def.union
(trait_item name: (type_identifier) @name) @def.trait
(impl_item type: (_) @scope.type) @scope
(mod_item name: (identifier) @name) @def.module
(const_item name: (identifier) @name) @def.constant
(static_item name: (identifier) @name) @def.variable
(type_item name: (type_identifier) @name) @def.type
(macro_definition name: (identifier) @name) @def.macro
(closure_expression) @block
""",
    comment_types=frozenset({"line_comment", "block_comment"}),
    attribute_types=frozenset({"attribute_item"}),
    method_containers=_TYPE_CONTAINERS,
    identifier_types=(
        "identifier",
        "type_identifier",
        "field_identifier",
        "shorthand_field_identifier",
    ),
)

JAVA = LangSpec(
    query="""
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.class
(annotation_type_declaration name: (identifier) @name) @def.interface
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(compact_constructor_declaration name: (identifier) @name) @def.method
(object_creation_expression (class_body) @block)
(enum_constant (class_body) @block)
(lambda_expression) @block
""",
    comment_types=frozenset({"line_comment", "block_comment"}),
    attribute_types=frozenset(),
    method_containers=_TYPE_CONTAINERS,
    identifier_types=("identifier", "type_identifier"),
)

CSHARP = LangSpec(
    query="""
(class_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.class
(namespace_declaration name: (_) @name) @def.namespace
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(destructor_declaration name: (identifier) @name) @def.method
(property_declaration name: (identifier) @name) @def.method
(indexer_declaration) @def.method
(operator_declaration) @def.method
(conversion_operator_declaration) @def.method
(delegate_declaration name: (identifier) @name) @def.type
(lambda_expression) @block
(anonymous_method_expression) @block
""",
    comment_types=frozenset({"comment"}),
    attribute_types=frozenset(),
    method_containers=_TYPE_CONTAINERS,
    identifier_types=("identifier",),
)

_C_COMMON = """
(function_definition declarator: (_) @declarator) @def.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.union
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.enum
(type_definition type: (_) @type declarator: (_) @declarator) @def.type
(preproc_def name: (identifier) @name) @def.macro
(preproc_function_def name: (identifier) @name) @def.macro
"""

C = LangSpec(
    query=_C_COMMON,
    comment_types=frozenset({"comment"}),
    attribute_types=frozenset(),
    method_containers=_TYPE_CONTAINERS,
    identifier_types=("identifier", "field_identifier", "type_identifier", "statement_identifier"),
)

CPP = LangSpec(
    query=_C_COMMON
    + """
(class_specifier name: (_) @name body: (field_declaration_list)) @def.class
(namespace_definition name: (_) @name) @def.namespace
(alias_declaration name: (type_identifier) @name) @def.type
(lambda_expression) @block
""",
    comment_types=frozenset({"comment"}),
    attribute_types=frozenset(),
    method_containers=_TYPE_CONTAINERS,
    identifier_types=(
        "identifier",
        "field_identifier",
        "type_identifier",
        "namespace_identifier",
        "statement_identifier",
    ),
)

RUBY = LangSpec(
    query="""
(module name: (_) @name) @def.module
(class name: (_) @name) @def.class
(method name: (_) @name) @def.function
(singleton_method object: (_) @object name: (_) @name) @def.method
(lambda) @block
""",
    comment_types=frozenset({"comment"}),
    attribute_types=frozenset(),
    # In Ruby every `def` inside a class or module is a method (modules hold methods too).
    method_containers=frozenset({"class", "module"}),
    identifier_types=("identifier", "constant"),
    body_types=frozenset({"body_statement"}),
)

SPECS: dict[str, LangSpec] = {
    "python": PYTHON,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "tsx": TYPESCRIPT,
    "go": GO,
    "rust": RUST,
    "java": JAVA,
    "csharp": CSHARP,
    "c": C,
    "cpp": CPP,
    "ruby": RUBY,
}
