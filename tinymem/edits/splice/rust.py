"""Rust members go into `impl` blocks: the one the model wrote, the last inherent one, or new."""

from __future__ import annotations

from tree_sitter import Node

from tinymem.edits.splice.forms import Form
from tinymem.edits.splice.lines import (
    WS,
    container_of,
    content_end,
    end_of_line,
    leaf_of,
    plain_name,
)
from tinymem.edits.splice.model import Replacement, SpliceError
from tinymem.edits.splice.place import Placer
from tinymem.edits.splice.plan import Edit, NewImpl, Plan, describe_header, norm_header
from tinymem.symbols import Symbol


class RustPlacer(Placer):
    """Members of a Rust type live in `impl` blocks outside it (traits and modules hold
    theirs inside, like any other container)."""

    def place_member(
        self, plan: Plan, rep: Replacement, form: Form, expect: tuple[str, ...]
    ) -> None:
        parent_name = container_of(rep.name)
        assert parent_name is not None
        parent = self.by_name.get(parent_name)
        if self.language == "rust" and (parent is None or parent.kind not in ("trait", "module")):
            self.place_rust_member(plan, rep, form, parent_name, parent, expect)
            return
        super().place_member(plan, rep, form, expect)

    def rust_impls(self, parent_name: str) -> list[Node]:
        """`impl` blocks for type `parent_name`: by the type's last path segment, generics
        stripped, in the same enclosing module."""
        prefix = container_of(parent_name)
        leaf = plain_name(leaf_of(parent_name))
        found: list[Node] = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.type != "impl_item":
                stack.extend(node.children)
                continue
            type_node = node.child_by_field_name("type")
            if type_node is None or node.child_by_field_name("body") is None:
                continue
            raw = self.data[type_node.start_byte : type_node.end_byte].decode("utf-8", "replace")
            type_name = raw.split("<", 1)[0].split("::")[-1].strip(" &")
            enclosing = [s for s in self.symbols if s.start <= node.start_byte < s.end]
            inside = enclosing[-1].name if enclosing else None
            if type_name == leaf and inside == prefix:
                found.append(node)
        return sorted(found, key=lambda n: n.start_byte)

    def place_rust_member(
        self,
        plan: Plan,
        rep: Replacement,
        form: Form,
        parent_name: str,
        parent: Symbol | None,
        expect: tuple[str, ...],
    ) -> None:
        """Into the impl block whose header the model wrote, else the last inherent impl of
        the type, else a new `impl Type { … }` after the type."""
        impls = self.rust_impls(parent_name)

        def header_of(node: Node) -> bytes:
            body = node.child_by_field_name("body")
            assert body is not None
            return self.data[node.start_byte : body.start_byte]

        chosen: Node | None
        if form.header is not None:
            wanted = norm_header(form.header)
            chosen = next((n for n in impls if norm_header(header_of(n)) == wanted), None)
        else:
            inherent = [n for n in impls if n.child_by_field_name("trait") is None]
            chosen = inherent[-1] if inherent else None
        if chosen is not None:
            body = chosen.child_by_field_name("body")
            assert body is not None
            members = [
                s
                for s in self.symbols
                if s.parent == parent_name and body.start_byte <= s.start < body.end_byte
            ]
            label = describe_header(header_of(chosen))
            owners = self.around(body.start_byte, body.end_byte)
            if not self.place_after_member(plan, rep, form.text, members, label, owners, expect):
                self.place_in_body(
                    plan, rep.name, form.text, body, chosen.start_byte, label, owners, expect
                )
            return
        header = form.header
        if header is None:
            if parent is None and parent_name not in plan.points:
                raise SpliceError(f"cannot add {rep.name} to {self.path}: it has no {parent_name}")
            if parent is not None:
                signature = self.data[parent.start : parent.end].split(b"{", 1)[0]
                if b"<" in signature.split(b"(", 1)[0]:
                    raise SpliceError(
                        f"cannot add {rep.name} to {self.path}: {parent_name} is generic and "
                        "has no inherent impl block; propose the impl block with it"
                    )
            header = b"impl " + plain_name(leaf_of(parent_name)).encode()
        slot = (parent_name, norm_header(header))
        impl = plan.impls.get(slot)
        if impl is None:
            where = f"in a new {describe_header(header)} block"
            if parent is None and parent_name in plan.points:
                point = plan.points[parent_name]
                impl = NewImpl(point.pos, (*point.key, *self.next_key()), header, [])
                where += f" after {parent_name}"
            else:
                related = [
                    s for s in self.symbols if s.name == parent_name or s.parent == parent_name
                ]
                anchor = max(related, key=self.top_item_end) if related else None
                if anchor is None and self.symbols:
                    anchor = max(self.symbols, key=self.top_item_end)
                if anchor is None:
                    end = content_end(self.data, len(self.data), self.floor)
                else:
                    end = self.top_item_end(anchor)
                    where += f" after {self.top_name_at(end) or anchor.name}"
                impl = NewImpl(end_of_line(self.data, end), self.next_key(), header, [])
            plan.impls[slot] = impl
        else:
            where = f"in a new {describe_header(header)} block"
        impl.members.append((rep.name, form.text))
        plan.placements[rep.name] = where

    def flush_impls(self, plan: Plan) -> None:
        unit = self.unit()
        for impl in plan.impls.values():
            body = (self.eol * 2).join(
                unit + text.placed(unit, self.eol) for _name, text in impl.members
            )
            data = (
                self.eol * (self.top_gap() + 1)
                + impl.header
                + b" {"
                + self.eol
                + body
                + self.eol
                + b"}"
            )
            if not self.data[self.floor : impl.pos].strip(WS):
                data = data.lstrip(b"\r\n") + self.eol  # an empty file
            names = tuple(name for name, _text in impl.members)
            plan.edits.append(Edit(impl.pos, impl.pos, data, impl.key, names))
