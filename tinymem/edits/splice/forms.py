"""What a proposed text is: a standalone item, or a member written without its container."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from tinymem.edits.normalise import STAND_IN, STAND_INS
from tinymem.edits.splice.facts import FileFacts
from tinymem.edits.splice.lines import WS, container_of, contains, content_end, leaf_of, plain_name
from tinymem.edits.splice.model import SpliceError
from tinymem.edits.splice.syntax import file_symbols, parse_root, syntax_problem
from tinymem.edits.splice.texts import Text, sub_text
from tinymem.symbols import Symbol

_LINE = re.compile(r"line (\d+)")
# inside a stand-in container; Go has no such container (methods carry receivers), C none.

_CLOSERS = (b"}", b"};", b"end")
_COMMENT_STARTS = (b"#", b"//", b"/*", b"*", b"--")


@dataclass
class Form:
    """What a proposed text is, for placing it.

    standalone: a top-level item that defines the name itself (a function, a class, a Go
    method with its receiver, a C++ `void S::m()`); member: a member written without its
    container (possibly unwrapped from the container the model wrote around it)."""

    kind: str  # "standalone" | "member"
    text: Text
    header: bytes | None = None  # the Rust `impl … ` header the model wrote around a member


def _outside_is_trivial(src: bytes, root: Node, start: int, end: int) -> bool:
    """True when nothing but comments lies outside [start, end) at the top of the tree."""
    for child in root.children:
        child_end = content_end(src, child.end_byte, child.start_byte)  # nodes keep blanks
        if child_end <= start or child.start_byte >= end:
            if "comment" not in child.type:
                return False
        elif child.start_byte < start or child_end > end:
            return False
    return True


def _wrapper_is_trivial(src: bytes, start: int, end: int) -> bool:
    """True when the text around a member is only container headers, closers and comments:
    `class C:` / `impl<T> S<T> {` … `}`. Anything else (a docstring, an attribute, another
    statement) would be silently dropped by unwrapping, so such a text is refused."""
    for piece in (src[:start], src[end:]):
        for line in piece.split(b"\n"):
            stripped = line.strip(WS)
            if not stripped or stripped in _CLOSERS or stripped.startswith(_COMMENT_STARTS):
                continue
            if stripped.endswith((b":", b"{")):
                continue
            return False
    return True


class Classifier(FileFacts):
    def _out_of_line(self, sym: Symbol, found: tuple[Symbol, ...]) -> bool:
        """A C++ member defined out of its class (`double Square::area() const {…}`) given
        for a name the file qualifies further (`geo.Square.area`, inside `namespace geo`):
        a definition that stands beside its class, never one to put inside it."""
        return (
            self.language == "cpp"
            and sym.parent is not None
            and not any(s.name == sym.parent for s in found)
        )

    def classify(self, name: str, text: Text) -> Form:
        """Decide whether `text` is a standalone item or a member, unwrapping a member the
        model wrote inside its container. SpliceError when it does not define `name`, or
        defines something besides it."""
        src = text.joined()
        found = file_symbols(self.path, src).symbols
        target = plain_name(name)
        exact = [s for s in found if plain_name(s.name) == target]
        suffix = [
            s
            for s in found
            if "." in s.name and target.endswith("." + plain_name(s.name)) and s not in exact
        ]
        for sym in exact + suffix:
            # Another name of the same definition (`a.x = a.y = function …`) is not another.
            others = [
                s
                for s in found
                if s != sym and not contains(sym, s) and (s.start, s.end) != (sym.start, sym.end)
            ]
            if (
                (sym in exact or self._out_of_line(sym, found))
                and not others
                and _outside_is_trivial(src, parse_root(self.language, src), sym.start, sym.end)
            ):
                return Form("standalone", text)
            strangers = [o.name for o in others if not contains(o, sym)]
            if strangers:
                raise SpliceError(
                    f"the new text for {name} in {self.path} also defines "
                    f"{', '.join(strangers)}; each definition must be proposed on its own"
                )
            if "." in target and _wrapper_is_trivial(src, sym.start, sym.end):
                header = self._impl_header(src, sym.start) if self.language == "rust" else None
                member = sub_text(self.language, src, sym.start, sym.end, name)
                return Form("member", member, header)
            if sym in exact and not syntax_problem(self.language, src):
                raise SpliceError(
                    f"the new text for {name} in {self.path} has code outside the definition "
                    f"of {name}; propose the definition alone"
                )
        problem = syntax_problem(self.language, src)
        if "." in target and self.language in STAND_INS:
            wrapped_problems: list[str] = []
            for head, tail in STAND_INS[self.language]:
                wrapped = head + b"    " + text.placed(b"    ", b"\n") + tail
                expected = f"{STAND_IN}.{plain_name(leaf_of(name))}"
                members = [
                    s for s in file_symbols(self.path, wrapped).symbols if s.name != STAND_IN
                ]
                hits = [s for s in members if plain_name(s.name) == expected]
                if hits:
                    strangers = [
                        s.name.removeprefix(STAND_IN + ".")
                        for s in members
                        if s != hits[0] and not contains(hits[0], s)
                    ]
                    if not strangers:
                        return Form("member", text)
                    raise SpliceError(
                        f"the new text for {name} in {self.path} also defines "
                        f"{', '.join(strangers)}; each definition must be proposed on its own"
                    )
                wrapped_problems.append(syntax_problem(self.language, wrapped) or "")
            # A member alone need not parse (a JS method outside a class): judge it wrapped,
            # and give line numbers of the text itself (the wrapper adds one line on top).
            if self.language != "python" or problem is None:  # a Python method parses alone
                first = wrapped_problems[0] or None
                problem = first and _LINE.sub(
                    lambda m: f"line {max(int(m.group(1)) - 1, 1)}", first
                )
        if problem is not None:
            raise SpliceError(f"the new text for {name} does not parse: {problem}")
        defined = ", ".join(s.name for s in found if not any(contains(o, s) for o in found))
        detail = f" (it defines {defined})" if defined else ""
        raise SpliceError(f"the new text for {name} does not define {name} in {self.path}{detail}")

    def _impl_header(self, src: bytes, pos: int) -> bytes | None:
        """The header (`impl<T> Display for S<T>`) of the innermost impl around `pos`."""
        node: Node | None = parse_root(self.language, src)
        header = None
        while node is not None:
            body = node.child_by_field_name("body") if node.type == "impl_item" else None
            if body is not None:
                header = src[node.start_byte : body.start_byte].strip(WS)
            node = next((c for c in node.children if c.start_byte <= pos < c.end_byte), None)
        return header

    def member_hint(self, name: str) -> bytes:
        """The indentation a new member will probably get (only to read its text right)."""
        parent = container_of(name)
        if parent is None:
            return b""
        members = [s for s in self.symbols if s.parent == parent]
        if not members:
            return b""
        indent, alone = self.indent_of(members[-1].start)
        return indent if alone else b""

    def nestable(self, form: Form) -> bool:
        """Whether members of this container text go inside its own span (a Python or Java
        class, a Rust trait) rather than elsewhere (Go methods, Rust impl blocks)."""
        if self.language == "go":
            return False
        if self.language != "rust":
            return True
        found = file_symbols(self.path, form.text.joined()).symbols
        return bool(found) and found[0].kind in ("trait", "module")
