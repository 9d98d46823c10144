"""Where a new symbol goes: after a named or last sibling, into a container's body, at the end.

Where a language writes access as a label line that governs every member below it (C++
`private:`, Ruby's bare `private`), a new member the block does not place next to a member
goes at the end of the container's last public section, never below a label it did not
write: appended at the end of a class, it would inherit whatever access the class ends in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tree_sitter import Node

from tinymem.edits.splice.facts import FileFacts
from tinymem.edits.splice.forms import Form
from tinymem.edits.splice.lines import (
    WS,
    container_of,
    contains,
    content_end,
    end_of_line,
    is_blank,
    leading_ws,
    leaf_of,
    start_of_line,
)
from tinymem.edits.splice.model import Replacement, SpliceError
from tinymem.edits.splice.plan import Edit, Plan, Point
from tinymem.edits.splice.texts import Text
from tinymem.symbols import Symbol

# Symbols that cannot hold members (a name `f.g` under a function is a local, not an entity).
_LEAF_KINDS = frozenset({"function", "method", "constant", "variable", "macro"})

_ACCESS_WORDS = frozenset({b"public", b"private", b"protected"})
# The syntax node of each language's access label, and the containers whose body starts
# private (a C++ `class`; a `struct` or `union` starts public, so does every Ruby body).
_LABEL_NODES = {"cpp": "access_specifier", "ruby": "identifier"}
_PRIVATE_BY_DEFAULT = frozenset({"class_specifier"})


@dataclass(frozen=True)
class Section:
    """A run of a container's body under one access: [start, end) in the file's bytes."""

    start: int
    end: int
    access: str
    label: Node | None  # the label that opens it; None for the part before any label


class Placer(FileFacts):
    def chunk(self, indent: bytes, text: Text, gap: int) -> bytes:
        """A new definition inserted right at the end of a line."""
        return self.eol * (gap + 1) + indent + text.placed(indent, self.eol)

    def chain(self, plan: Plan, name: str, after: str, text: Text, expect: tuple[str, ...]) -> None:
        """Right after a symbol placed earlier in this call, with its indentation and gap."""
        point = plan.points[after]
        key = (*point.key, *self.next_key())
        data = self.chunk(point.indent, text, point.gap)
        owners: tuple[str, ...] = ()
        for edit in plan.edits:
            if edit.key == point.key:
                owners = edit.owners
        plan.edits.append(
            Edit(point.pos, point.pos, data, key, expect, owners=owners, depth=len(point.indent))
        )
        plan.points[name] = Point(point.pos, key, point.indent, point.gap, point.top, point.parent)
        plan.placements[name] = f"after {after}"

    def place_top(
        self,
        plan: Plan,
        name: str,
        text: Text,
        anchor: Symbol | None,
        expect: tuple[str, ...],
    ) -> None:
        """A top-level item: after `anchor`'s top-level item, else after the last top-level
        definition of the file, else at the end of its content."""
        if anchor is None and self.symbols:
            anchor = max(self.symbols, key=lambda s: (self.top_item_end(s), -s.start))
        gap = self.top_gap()
        key = self.next_key()
        if anchor is None:
            content = content_end(self.data, len(self.data), self.floor)
            if content == self.floor:  # an empty file: the new text is all there will be
                if self._empty_last is not None:
                    self.chain(plan, name, self._empty_last, text, expect)
                    plan.placements[name] = "end of file"
                else:
                    data = text.placed(b"", self.eol)
                    plan.edits.append(Edit(self.floor, self.floor, data, key, expect))
                    # The final newline, after everything else inserted here.
                    plan.edits.append(Edit(self.floor, self.floor, self.eol, (1 << 62,), ()))
                    plan.points[name] = Point(self.floor, key, b"", gap, True)
                    plan.placements[name] = "end of file"
                self._empty_last = name
                return
            pos = end_of_line(self.data, content)
            where = "end of file"
        else:
            end = self.top_item_end(anchor)
            pos = end_of_line(self.data, end)
            where = f"after {self.top_name_at(end) or anchor.name}"
            if not self.data[pos:].strip(WS):
                where = "end of file"
        plan.edits.append(Edit(pos, pos, self.chunk(b"", text, gap), key, expect))
        plan.points[name] = Point(pos, key, b"", gap, True)
        plan.placements[name] = where

    def in_namespace(self, sym: Symbol) -> bool:
        """Whether `sym` sits inside namespace blocks only (no class or function around it)."""
        around = [self.by_name[a] for a in self.ancestors(sym) if a != sym.name]
        return bool(around) and all(a.kind == "namespace" for a in around)

    def orphans_in(self, parent: Symbol) -> list[Symbol]:
        """Definitions directly inside `parent` whose own container the file does not declare
        (C++ methods defined out of their class inside a namespace): members of `parent`
        for placing a new one beside them."""
        inside = [s for s in self.symbols if s != parent and contains(parent, s)]
        return [
            s
            for s in inside
            if s.parent is not None
            and s.parent not in self.by_name
            and not any(contains(o, s) and (o.start, o.end) != (s.start, s.end) for o in inside)
        ]

    def place_member(
        self, plan: Plan, rep: Replacement, form: Form, expect: tuple[str, ...]
    ) -> None:
        parent_name = container_of(rep.name)
        assert parent_name is not None
        parent = self.by_name.get(parent_name)
        if parent is None:
            raise SpliceError(f"cannot add {rep.name} to {self.path}: it has no {parent_name}")
        if parent.kind in _LEAF_KINDS:
            raise SpliceError(
                f"cannot add {rep.name} to {self.path}: {parent_name} is a {parent.kind}, "
                "which holds no member definitions"
            )
        members = [s for s in self.symbols if s.parent == parent.name and contains(parent, s)]
        members += self.orphans_in(parent)
        label = f"{parent.kind} {parent.name}"
        owners = self.with_ancestors(parent.name)
        sections = self.access_sections(parent)
        if sections and self.named_anchor(rep, members) is None:
            self.place_in_public(plan, rep, form.text, members, sections, label, owners, expect)
            return
        if self.place_after_member(plan, rep, form.text, members, label, owners, expect):
            return
        node = self.node_with_body(parent)
        body = node.child_by_field_name("body") if node is not None else None
        if body is None:
            raise SpliceError(
                f"cannot add {rep.name} to {self.path}: {label} has no body to put it in"
            )
        self.place_in_body(plan, rep.name, form.text, body, parent.start, label, owners, expect)

    def named_anchor(self, rep: Replacement, members: list[Symbol]) -> Symbol | None:
        """The member `rep.after` names, when it is one of `members`."""
        if rep.after is None:
            return None
        wanted = {rep.after, f"{container_of(rep.name)}.{rep.after}"}
        return next((m for m in members if m.name in wanted), None)

    def container_node(self, sym: Symbol) -> Node | None:
        """The outermost node with a body inside `sym`'s span, found from the top down: a
        C++ class's span ends with the `;` after its node, where `node_with_body`'s probe
        from the end lands."""
        found = self.node_with_body(sym)
        level = [self.root]
        while found is None and level:
            level = [
                child
                for node in level
                for child in node.children
                if child.start_byte < sym.end and sym.start < child.end_byte
            ]
            found = next(
                (
                    n
                    for n in level
                    if sym.start <= n.start_byte
                    and n.end_byte <= sym.end
                    and n.child_by_field_name("body") is not None
                ),
                None,
            )
        return found

    def access_sections(self, parent: Symbol) -> list[Section]:
        """The runs of `parent`'s body each access label governs, in order; empty when the
        language has no such labels or the body has none."""
        label_type = _LABEL_NODES.get(self.language)
        node = self.container_node(parent) if label_type is not None else None
        body = node.child_by_field_name("body") if node is not None else None
        if node is None or body is None:
            return []
        labels = [
            child
            for child in body.children
            if child.type == label_type
            and self.data[child.start_byte : child.end_byte] in _ACCESS_WORDS
        ]
        if not labels:
            return []
        default = "private" if node.type in _PRIVATE_BY_DEFAULT else "public"
        sections = [Section(body.start_byte, labels[0].start_byte, default, None)]
        for here, following in zip(labels, [*labels[1:], None], strict=True):
            # The C++ label's colon is a node of its own, right after it.
            colon = here.next_sibling
            start = colon.end_byte if colon is not None and colon.type == ":" else here.end_byte
            end = following.start_byte if following is not None else body.end_byte
            access = self.data[here.start_byte : here.end_byte].decode()
            sections.append(Section(start, end, access, here))
        return sections

    def place_in_public(
        self,
        plan: Plan,
        rep: Replacement,
        text: Text,
        members: list[Symbol],
        sections: list[Section],
        label: str,
        owners: tuple[str, ...],
        expect: tuple[str, ...],
    ) -> None:
        """After the last member of the container's last public section. What the block
        meant cannot be read here (its own label lines are not applied), so a container with
        no public section, or one without a member to follow, is refused rather than guessed."""
        public = [s for s in sections if s.access == "public"]
        if not public:
            raise SpliceError(
                f"cannot add {rep.name} to {self.path}: every part of {label} is private or "
                "protected, and tm adds a new member only where it is public; give it right "
                "after the member it should follow"
            )
        section = public[-1]
        inside = [m for m in members if section.start <= m.start < section.end]
        unanchored = replace(rep, after=None)
        if inside and self.place_after_member(
            plan, unanchored, text, inside, label, owners, expect
        ):
            plan.placements[rep.name] += " (in its public part)"
            return
        raise SpliceError(
            f"cannot add {rep.name} to {self.path}: the public part of {label} has no member "
            "on lines of its own to put it after; give it right after the member it should "
            "follow"
        )

    def place_after_member(
        self,
        plan: Plan,
        rep: Replacement,
        text: Text,
        members: list[Symbol],
        label: str,
        owners: tuple[str, ...],
        expect: tuple[str, ...],
    ) -> bool:
        """After `rep.after` when it is one of `members`, else after the last of them, with
        its indentation. False when there is none, or it shares its line with other code."""
        anchor = self.named_anchor(rep, members)
        if anchor is None and members:
            anchor = max(members, key=lambda m: m.end)
        if anchor is None:
            return False
        indent, alone = self.indent_of(anchor.start)
        pos = end_of_line(self.data, anchor.end)
        if not alone or self.data[anchor.end : pos].strip(WS):
            return False
        gap = self.gap(members, 1)
        key = self.next_key()
        data = self.chunk(indent, text, gap)
        plan.edits.append(Edit(pos, pos, data, key, expect, owners=owners, depth=len(indent)))
        plan.points[rep.name] = Point(pos, key, indent, gap, False, container_of(rep.name))
        plan.placements[rep.name] = f"inside {label}, after {leaf_of(anchor.name)}"
        return True

    def place_in_body(
        self,
        plan: Plan,
        name: str,
        text: Text,
        body: Node,
        container_start: int,
        label: str,
        owners: tuple[str, ...],
        expect: tuple[str, ...],
    ) -> None:
        """Into a body without members: after the last statement of a Python block, before
        the closing brace (or `end`) elsewhere."""
        data = self.data
        outer_indent = self.indent_of(container_start)[0]
        key = self.next_key()
        closer = body.children[-1] if body.children else None
        if closer is not None and closer.type in ("}", "end"):
            inside = data[body.start_byte + 1 : closer.start_byte]
            content = [line for line in inside.split(b"\n")[1:] if not is_blank(line)]
            indent = leading_ws(content[0]) if content else outer_indent + self.unit()
            blank = self.eol if inside.strip(WS) else b""
            placed = indent + text.placed(indent, self.eol) + self.eol
            closer_indent, alone = self.indent_of(closer.start_byte)
            if alone:
                pos = start_of_line(data, closer.start_byte, self.floor)
                chunk = blank + placed
            else:  # `class C {}`: open the braces onto their own lines
                pos = closer.start_byte
                chunk = self.eol + blank + placed + closer_indent
        else:  # an indented block (Python)
            statements = body.named_children
            indent = outer_indent + self.unit()
            if statements:
                first_indent, alone = self.indent_of(statements[0].start_byte)
                if alone:
                    indent = first_indent
            pos = end_of_line(data, content_end(data, body.end_byte, body.start_byte))
            chunk = self.chunk(indent, text, 1)
        plan.edits.append(Edit(pos, pos, chunk, key, expect, owners=owners, depth=len(indent)))
        plan.points[name] = Point(pos, key, indent, 1, False, container_of(name))
        plan.placements[name] = f"inside {label}, at the end of its body"
