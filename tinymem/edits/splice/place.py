"""Where a new symbol goes: after a named or last sibling, into a container's body, at the end."""

from __future__ import annotations

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
        label = f"{parent.kind} {parent.name}"
        owners = self.with_ancestors(parent.name)
        if self.place_after_member(plan, rep, form.text, members, label, owners, expect):
            return
        node = self.node_with_body(parent)
        body = node.child_by_field_name("body") if node is not None else None
        if body is None:
            raise SpliceError(
                f"cannot add {rep.name} to {self.path}: {label} has no body to put it in"
            )
        self.place_in_body(plan, rep.name, form.text, body, parent.start, label, owners, expect)

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
        anchor: Symbol | None = None
        if rep.after is not None:
            wanted = {rep.after, f"{container_of(rep.name)}.{rep.after}"}
            anchor = next((m for m in members if m.name in wanted), None)
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
