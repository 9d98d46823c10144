"""Build the spliced file from a plan, and prove it safe before anyone writes it."""

from __future__ import annotations

from tinymem.edits.splice.facts import FileFacts
from tinymem.edits.splice.lines import contains
from tinymem.edits.splice.model import SpliceError
from tinymem.edits.splice.plan import Edit
from tinymem.edits.splice.syntax import compile_problem, file_symbols, syntax_problem
from tinymem.symbols import Symbol


class Verifier(FileFacts):
    def build(self, edits: list[Edit]) -> tuple[bytes, list[tuple[Edit, int, int]]]:
        out: list[bytes] = []
        regions: list[tuple[Edit, int, int]] = []
        pos = size = 0
        for edit in sorted(edits, key=lambda e: (e.start, -e.depth, e.key)):
            if edit.start < pos:
                raise SpliceError(
                    f"cannot splice {', '.join(edit.expect)} into {self.path}: it overlaps "
                    "another proposed symbol"
                )
            out.append(self.data[pos : edit.start])
            size += edit.start - pos
            out.append(edit.data)
            regions.append((edit, size, size + len(edit.data)))
            size += len(edit.data)
            pos = edit.end
        out.append(self.data[pos:])
        return b"".join(out), regions

    def check(
        self,
        result: bytes,
        regions: list[tuple[Edit, int, int]],
        replaced: set[str],
    ) -> tuple[Symbol, ...]:
        """Verify the result (see the module docstring); its symbols when it passes."""
        path = self.path
        if self.clean:
            problem = self.merged_problem(result)
            if problem is not None:
                edit, reason = self.culprit(regions, problem)
                raise SpliceError(
                    f"splicing {', '.join(edit.expect)} into {path} breaks its syntax: {reason}"
                )
        after = file_symbols(path, result).symbols
        new_by_name = {s.name: s for s in after}
        for edit, begin, end in regions:
            for name in edit.expect:
                sym = new_by_name.get(name)
                if sym is None or not (begin <= sym.start and sym.end <= end):
                    raise SpliceError(
                        f"after splicing, {path} does not define {name} where its new text went"
                    )
        for sym in after:
            inside = [e for e, b, n in regions if b <= sym.start and sym.end <= n]
            allowed = {x for e in inside for x in (*e.expect, *e.maybe)}
            if inside and not any(sym.name == a or sym.name.startswith(a + ".") for a in allowed):
                culprit = inside[0].expect[0] if inside[0].expect else "a symbol"
                raise SpliceError(
                    f"the new text for {culprit} in {path} also defines {sym.name}; each "
                    "definition must be proposed on its own"
                )
            if not inside and sym.name not in self.by_name:
                raise SpliceError(f"splicing into {path} would rename an existing {sym.name}")
        owners = {o for e, _b, _n in regions for o in e.owners}
        gone = {
            s.name for s in self.symbols if s.name in replaced or self.inside_replaced(s, replaced)
        }
        for sym in self.symbols:
            if sym.name in gone:
                continue
            now = new_by_name.get(sym.name)
            if now is None:
                raise SpliceError(f"splicing into {path} would lose {sym.name}")
            if sym.name in owners:
                continue
            if result[now.start : now.end] != self.data[sym.start : sym.end]:
                raise SpliceError(
                    f"splicing into {path} would change {sym.name}, which was not proposed"
                )
        return after

    def merged_problem(self, result: bytes) -> str | None:
        """Why a text made of the file does not parse, or (Python) no longer compiles."""
        return syntax_problem(self.language, result) or compile_problem(
            self.language, self.data, result
        )

    def inside_replaced(self, sym: Symbol, replaced: set[str]) -> bool:
        return any(contains(self.by_name[name], sym) for name in replaced)

    def culprit(self, regions: list[tuple[Edit, int, int]], reason: str | None) -> tuple[Edit, str]:
        """The first edit that breaks the syntax on its own (else the first edit)."""
        for edit, _begin, _end in regions:
            alone = self.data[: edit.start] + edit.data + self.data[edit.end :]
            problem = self.merged_problem(alone)
            if problem is not None:
                return edit, problem
        return regions[0][0], reason or "syntax error"
