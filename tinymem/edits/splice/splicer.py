"""The splice itself: classify every proposed text, plan where it goes, build and verify."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tinymem.edits.splice.forms import Classifier, Form
from tinymem.edits.splice.lines import WS, container_of, contains, plain_name, start_of_line
from tinymem.edits.splice.model import Replacement, SpliceError, SpliceResult
from tinymem.edits.splice.plan import Edit, Plan
from tinymem.edits.splice.prefix import keep_line_modifiers, keep_prefix, parameters_of
from tinymem.edits.splice.rust import RustPlacer
from tinymem.edits.splice.syntax import file_symbols, grammar, syntax_problem
from tinymem.edits.splice.texts import Text, prepare
from tinymem.edits.splice.verify import Verifier
from tinymem.records import FILE_SYMBOL
from tinymem.symbols import Symbol


class Splicer(RustPlacer, Classifier, Verifier):
    def can_chain(self, plan: Plan, name: str, after: str, form: Form) -> bool:
        """Whether `name` can simply follow `after`, a symbol placed earlier in this call: both
        top-level items, or members of one container (not in Rust, where the impl block
        chooses)."""
        point = plan.points.get(after)
        if point is None:
            return False
        if container_of(name) is None or form.kind == "standalone":
            return point.top
        return self.language != "rust" and point.parent == container_of(name)

    def holder_in_call(self, name: str, calls: dict[str, Replacement]) -> str | None:
        """The outermost proper ancestor (by qualified name) of `name` also in this call."""
        holder = None
        parent = container_of(name)
        while parent is not None:
            if parent in calls:
                holder = parent
            parent = container_of(parent)
        return holder

    def unit_for(self, name: str) -> bytes:
        """The indentation unit a text for `name` is written in: that of the definition it
        replaces, else of the container it goes into, else the file's. Asking the nearest
        text first keeps a file's local style (a class whose access labels sit at two
        spaces in a four-space body) from reading as another unit."""
        for candidate in (name, container_of(name)):
            sym = self.by_name.get(candidate or "")
            if sym is None:
                continue
            begin = start_of_line(self.data, sym.start, self.floor)
            own = prepare(self.language, self.data[begin : sym.end], b"", sym.name).unit()
            if own is not None:
                return own
        return self.unit()

    def form_of(self, name: str, text: Text) -> Form:
        """What a prepared text is (`classify`), with its indentation in the unit of where it
        goes: a method the model indented with two spaces or tabs is written as the file
        writes it."""
        form = self.classify(name, text)
        converted = form.text.in_unit(self.unit_for(name))
        if converted is form.text:
            return form
        if self.language == "python":
            # A member of a Python class parses alone; the new levels must read the same.
            before = syntax_problem(self.language, form.text.joined())
            if syntax_problem(self.language, converted.joined()) and not before:
                return form
        return Form(form.kind, converted, form.header)

    def run(self, reps: Sequence[Replacement]) -> SpliceResult:
        plan = Plan()
        by_name = self.by_name
        calls = {r.name: r for r in reps}
        existing = [r for r in reps if r.name in by_name]
        new = [r for r in reps if r.name not in by_name]

        # A container and its own member both proposed: the container's text wins.
        contained: dict[str, str] = {}
        for r in existing:
            sym = by_name[r.name]
            holders = [by_name[o.name] for o in existing if contains(by_name[o.name], sym)]
            if holders:
                contained[r.name] = min(holders, key=lambda h: (h.start, -h.end)).name
        tops = [r for r in existing if r.name not in contained]
        # Names of one definition (`res.set = res.header = function …`, Go's `const a, b`)
        # given with one text are one replacement, made under the first name.
        spans: dict[tuple[int, int], str] = {}
        twins: dict[str, list[str]] = {}
        for r in tops:
            sym = by_name[r.name]
            twin = spans.setdefault((sym.start, sym.end), r.name)
            if twin == r.name:
                continue
            if calls[twin].text != r.text:
                raise SpliceError(
                    f"{twin} and {r.name} are one definition in {self.path}; propose it once"
                )
            twins.setdefault(twin, []).append(r.name)
        riders = {n for names in twins.values() for n in names}
        tops = [r for r in tops if r.name not in riders]

        forms: dict[str, Form] = {}
        for r in tops:
            hint = self.indent_of(by_name[r.name].start)[0]
            forms[r.name] = self.form_of(r.name, prepare(self.language, r.text, hint, r.name))
        holder_of = {
            r.name: h for r in new if (h := self.holder_in_call(r.name, calls)) is not None
        }
        for r in new:
            if r.name not in holder_of:
                text = prepare(self.language, r.text, self.member_hint(r.name), r.name)
                forms[r.name] = self.form_of(r.name, text)

        # New members of a container proposed in this call go into the container's new text.
        nested: dict[str, list[Replacement]] = {}
        for r in new:
            holder = holder_of.get(r.name)
            if holder is None:
                continue
            if holder in forms and self.nestable(forms[holder]):
                nested.setdefault(holder, []).append(r)
            else:
                del holder_of[r.name]
                text = prepare(self.language, r.text, self.member_hint(r.name), r.name)
                forms[r.name] = self.form_of(r.name, text)
        for holder, members in nested.items():
            self.nest(plan, holder, members, forms)

        for r in tops:
            sym = by_name[r.name]
            before = self.data[sym.start : sym.end]
            # No new member was spliced into it and it is the very text: keep the bytes.
            if r.text.strip(WS) == before and r.name not in nested:
                after = before  # byte-identical, whatever mix of line endings the file has
            else:
                after = forms[r.name].text.placed(self.indent_of(sym.start)[0], self.eol)
                after, kept = keep_prefix(self.language, before, after)
                if kept:
                    plan.kept[r.name] = tuple(kept)
                after = self.keep_member_modifiers(plan, sym, after)
            expect = (r.name, *twins.get(r.name, ()), *(m.name for m in nested.get(r.name, [])))
            maybe = tuple(n for n, c in contained.items() if c == r.name)
            owners = self.ancestors(sym)
            plan.edits.append(
                Edit(sym.start, sym.end, after, self.next_key(), expect, maybe, owners)
            )
            for name in (r.name, *twins.get(r.name, ())):
                plan.placements[name] = "replaced in place"
        for name, holder in contained.items():
            plan.placements[name] = f"contained in the replacement of {holder}"

        for r in new:
            if r.name in holder_of:
                continue
            form = forms[r.name]
            expect = (r.name, *(m.name for m in nested.get(r.name, [])))
            parent_name = container_of(r.name)
            if r.after is not None and self.can_chain(plan, r.name, r.after, form):
                self.chain(plan, r.name, r.after, form.text, expect)
            elif parent_name is None:
                anchor = by_name.get(r.after) if r.after is not None else None
                self.place_top(plan, r.name, form.text, anchor, expect)
            elif form.kind == "standalone":
                # Go methods, C++ out-of-line members: after the type's last top-level item.
                anchor = by_name.get(r.after) if r.after is not None else None
                related = [
                    s for s in self.symbols if s.name == parent_name or s.parent == parent_name
                ]
                if anchor is None and related:
                    anchor = max(related, key=self.top_item_end)
                if anchor is None and parent_name in plan.points:
                    self.chain(plan, r.name, parent_name, form.text, expect)
                elif anchor is not None and self.in_namespace(anchor):
                    # C++ `Square::perimeter` inside `namespace geo { … }`: beside the class's
                    # definitions in that block, never after its closing brace.
                    if not self.place_after_member(
                        plan,
                        r,
                        form.text,
                        related,
                        f"the definitions of {parent_name}",
                        self.ancestors(anchor),
                        expect,
                    ):
                        raise SpliceError(
                            f"cannot add {r.name} to {self.path}: the definitions of"
                            f" {parent_name} share their lines with other code; give it"
                            " inside its namespace block"
                        )
                else:
                    self.place_top(plan, r.name, form.text, anchor, expect)
            else:
                self.place_member(plan, r, form, expect)
        self.flush_impls(plan)

        result, regions = self.build(plan.edits)
        final = self.check(result, regions, {r.name for r in tops} | riders)
        found = {s.name for s in final}
        replaced = {r.name for r in tops} | riders | {n for n in contained if n in found}
        removed = [
            s.name
            for s in self.symbols
            if s.name not in found and any(contains(by_name[r.name], s) for r in tops)
        ]
        added = [r.name for r in new]
        return SpliceResult(
            data=result,
            replaced=tuple(n for n in calls if n in replaced),
            added=tuple(added),
            placements=plan.placements,
            removed=tuple(removed),
            kept=plan.kept,
        )

    def keep_member_modifiers(self, plan: Plan, sym: Symbol, after: bytes) -> bytes:
        """`after` (the new text of `sym`) with the modifiers its members leave out: a class
        given whole whose `static` method came back without `static` is still the model
        leaving a word out (prefix.py keeps only the container's own line's)."""
        members = [s for s in self.symbols if contains(sym, s)]
        if not members:
            return after
        head, tail = self.data[: sym.start], self.data[sym.end :]
        data = head + after + tail
        try:
            found = file_symbols(self.path, data).symbols
        except SpliceError:
            return after
        now = [s for s in found if len(head) <= s.start and s.end <= len(data) - len(tail)]
        edits: list[tuple[int, int, bytes]] = []
        for old, new in self.pair_members(members, now, data):
            text = data[new.start : new.end]
            out, kept = keep_line_modifiers(self.language, self.data[old.start : old.end], text)
            if kept:
                # Words go in on the definition's line only: what follows is as it was, so
                # the edit is the head of the text, clear of the members nested in it.
                same = _common_tail(text, out)
                edits.append((new.start, new.end - same, out[: len(out) - same]))
                plan.kept[old.name] = tuple(kept)
        for start, end, text in sorted(edits, reverse=True):
            data = data[:start] + text + data[end:]
        return data[len(head) : len(data) - len(tail)]

    def pair_members(
        self, members: list[Symbol], now: list[Symbol], data: bytes
    ) -> list[tuple[Symbol, Symbol]]:
        """Each old member with its new text: by name where the plain name is one member's
        in both texts; overloads (`f`, `f#2`, numbered by position, so an overload added
        first or the two swapped shift the numbers) by their identical parameter list, or
        not at all: `static` put on another overload is worse than left out."""

        def groups(symbols: list[Symbol]) -> dict[str, list[Symbol]]:
            out: dict[str, list[Symbol]] = {}
            for s in symbols:
                out.setdefault(plain_name(s.name), []).append(s)
            return out

        def by_parameters(symbols: list[Symbol], source: bytes) -> dict[bytes | None, Symbol]:
            keyed: dict[bytes | None, list[Symbol]] = {}
            for s in symbols:
                key = parameters_of(self.language, source[s.start : s.end])
                keyed.setdefault(key, []).append(s)
            return {k: v[0] for k, v in keyed.items() if k is not None and len(v) == 1}

        was, will = groups(members), groups(now)
        pairs: list[tuple[Symbol, Symbol]] = []
        for name, olds in was.items():
            news = will.get(name, [])
            if len(olds) == 1 and len(news) == 1:
                pairs.append((olds[0], news[0]))
                continue
            new_keys = by_parameters(news, data)
            for key, old in by_parameters(olds, self.data).items():
                if key in new_keys:
                    pairs.append((old, new_keys[key]))
        return pairs

    def nest(
        self, plan: Plan, holder: str, members: list[Replacement], forms: dict[str, Form]
    ) -> None:
        """Splice new members into the new text of their container (same call)."""
        form = forms[holder]
        prefix = holder.rsplit(".", 1)[0] + "." if "." in holder else ""
        mini = form.text.joined()
        defined = {plain_name(s.name) for s in file_symbols(self.path, mini).symbols}
        todo: list[Replacement] = []
        for r in members:
            relative = r.name[len(prefix) :]
            if plain_name(relative) in defined:
                plan.placements[r.name] = f"contained in the new text of {holder}"
                continue
            after = r.after
            if after is not None and after.startswith(prefix):
                after = after[len(prefix) :]
            todo.append(Replacement(relative, r.text, after))
        if not todo:
            return
        inner = splice(self.path, mini, todo)
        for r in members:
            relative = r.name[len(prefix) :]
            if relative in inner.placements:
                plan.placements[r.name] = (
                    f"inside the new text of {holder}, {inner.placements[relative]}"
                )
        forms[holder] = Form(
            form.kind, prepare(self.language, inner.data, b"", holder), form.header
        )


def _common_tail(a: bytes, b: bytes) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


def check_names(names: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        if not name or name == FILE_SYMBOL or any(not part for part in name.split(".")):
            raise ValueError(f"not a symbol name: {name!r}")
        if name in seen:
            raise ValueError(f"{name} is named twice")
        seen.add(name)
        out.append(name)
    return out


def splice(path: str, original: bytes, replacements: Sequence[Replacement]) -> SpliceResult:
    """Replace and insert the proposed symbols in `original` (the content of `path`).

    ValueError for a duplicate or malformed name or an empty text; SpliceError (exit code 5)
    when the result would not be safe (see the module docstring). Never writes anything.
    """
    check_names(r.name for r in replacements)
    language = grammar(path)
    if not replacements:
        return SpliceResult(original, (), (), {})
    return Splicer(path, language, original).run(replacements)
