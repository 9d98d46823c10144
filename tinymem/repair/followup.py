"""The follow-up message of a repair round: for each blocked block, the reason in one line,
the lines of the block it points at, and the current authoritative text of its target
rendered as hydration renders it (under its containers' headers, fenced with its path), so
the model corrects its answer against the truth, not against its memory of the prompt.

Deterministic: the same items and State Map give the same message.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from tinymem.edits.alignment import inside
from tinymem.edits.hints import ONE_NAME
from tinymem.edits.patches import apply_edit
from tinymem.hydration.excerpts import file_part
from tinymem.hydration.hydrate import estimate_tokens
from tinymem.proposalrecords import Proposal
from tinymem.records import entity_key
from tinymem.repair.triage import RepairItem, aimed_at
from tinymem.statemap import FileMeta, StateView

__all__ = ["FollowUp", "follow_up"]

_LINE = re.compile(r"\bat line (\d+)")
QUOTE_AROUND = 2  # lines of the block quoted on each side of the one a syntax error names
AIMED_AROUND = 8  # lines of the file shown on each side of where a failed hunk was aimed
WHOLE_FILE_TOKENS = 1500  # a file with no entity to show is shown whole up to this size


@dataclass
class FollowUp:
    text: str
    shown: dict[str, str] = field(default_factory=dict)  # entity key -> artifact shown whole

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def follow_up(
    items: list[RepairItem], view: StateView, number: int, limit: int, *, current: bool = True
) -> FollowUp:
    """The message opening repair round `number` of `limit`; `current=False` leaves out the
    current texts (the short form, when the full one would not fit the budget)."""
    shown: dict[str, str] = {}
    parts = []
    for index, item in enumerate(items, 1):
        parts.append(_section(index, item, view, shown if current else None))
    head = (
        f"[REPAIR ROUND {number} OF {limit}]\n"
        f"tinymem could not use {_blocks(len(items))} of your answer, for the reasons below."
        " Everything else you sent was kept: do not repeat it.\n"
        "Answer with corrected blocks for these only, under the same rules: the file path in"
        " every fence, each changed definition complete, no placeholders.\n\n"
    )
    return FollowUp(head + "\n".join(parts) + "[END REPAIR]\n", shown)


def _blocks(n: int) -> str:
    return "1 block" if n == 1 else f"{n} blocks"


def _section(index: int, item: RepairItem, view: StateView, shown: dict[str, str] | None) -> str:
    p = item.proposal
    if p is None:
        return (
            f"{index}. The block for {item.raw_path!r}: that is an example path, not a file of"
            " this repository. Give the block again with the real path of the file it"
            " changes.\n"
        )
    block = view.blob(p.block).decode("utf-8", "replace") if p.block else ""
    syntax = item.syntax
    # The model was never told of a State Map: to it, the authoritative text is the current one.
    reason = f"it does not parse: {syntax}" if syntax else _reason(p)
    reason = reason.replace("the State Map's ", "the current ")
    out = [f"{index}. {_subject(p, block)}: {reason}\n", _quote(syntax, block)]
    if shown is not None:
        out.append(_current(p, block, view, shown))
    return "".join(out)


def _subject(p: Proposal, block: str) -> str:
    first = next((line.strip() for line in block.splitlines() if line.strip()), "")
    starts = f" that starts `{first[:80]}`" if first else ""
    if p.kind == "delete":
        return f"The DELETE of {entity_key(p.path or '?', _deleted(p))}"
    if p.path is None:
        return f"The block{starts}"
    return f"The block for {p.path}{starts}"


def _deleted(p: Proposal) -> str:
    return p.entities[0].symbol if len(p.entities) == 1 else ""


def _reason(p: Proposal) -> str:
    """The gate's reason, worded for the model: what the user would do instead is not its
    business (an ambiguous member's `tm ask "…"` hint), what it must write instead is."""
    gate = p.gates.get("A", "")
    if p.kind == "delete":
        return "tm has no such entity to delete; name an existing one, as `path::symbol`"
    if p.confidence == "INFERRED":
        return (
            "it names no file, and tm will not write code into a file it only guessed; put"
            " the path in the fence, like ```python path=src/app.py"
        )
    if p.confidence == "UNRESOLVED":
        why = (p.reason or gate).split("; ask again", 1)[0]
        if "ambiguous" in why:
            if ONE_NAME in why:
                # Overloads, or a getter and its setter: the class line decides nothing, the
                # lines of the one meant do.
                return f"{why}; give the change as a unified diff against the text shown below"
            return f"{why}; give it inside its class (with the class line), as shown below"
        if p.path is None:
            return f"{why}; put the file path in the fence, like ```python path=src/app.py"
        return why
    if gate.startswith("elided") and p.kind in ("whole-file", "new-file"):
        return (
            f"{gate}; give each changed definition complete instead, or the whole file with"
            " nothing left out"
        )
    return gate


def _quote(syntax: str | None, block: str) -> str:
    """The lines of the block a syntax error names."""
    found = _LINE.search(syntax or "")
    if found is None:
        return ""
    lines = block.splitlines()
    at = int(found.group(1))
    first, last = max(1, at - QUOTE_AROUND), min(len(lines), at + QUOTE_AROUND)
    if first > last:
        return ""
    width = len(str(last))
    quoted = "".join(
        f"   {n:>{width}}{'>' if n == at else ' '} {lines[n - 1]}\n" for n in range(first, last + 1)
    )
    return f"   Lines {first}-{last} of that block:\n{quoted}"


def _current(p: Proposal, block: str, view: StateView, shown: dict[str, str]) -> str:
    if p.path is None:
        return ""
    meta = view.meta(p.path)
    if meta is None or meta.deleted:
        return ""
    data = view.blob(meta.snapshot)
    if p.format != "code" and p.kind != "delete":
        return _around(p, block, meta, data)
    records = aimed_at(p, block, meta, data)
    live = list(meta.live_entities())
    if not records:
        if estimate_tokens(data.decode("utf-8", "replace")) > WHOLE_FILE_TOKENS:
            names = ", ".join(r.symbol for r in live if "." not in r.symbol)[:600]
            return f"   {p.path} defines: {names}\n" if names else ""
        records = sorted(
            (r for r in live if not any(inside(o, r) for o in live)), key=lambda r: r.start
        )
        if not records:
            return ""
    for r in records:
        shown[meta.key(r.symbol)] = r.artifact
    text = file_part(
        p.path,
        meta.language,
        data,
        [(r.start, r.end) for r in records],
        [meta.key(r.symbol) for r in records],
    )
    return "   Its current text (authoritative):\n" + text


def _around(p: Proposal, block: str, meta: FileMeta, data: bytes) -> str:
    """For a diff or SEARCH/REPLACE that matches nowhere: the current lines around where it
    was aimed (the hunk's own line number, else the line most like its first context)."""
    lines = data.decode("utf-8", "replace").splitlines()
    if not lines:
        return ""
    aimed = apply_edit(p.format, block, data, p.path or "").aimed
    if not 1 <= aimed <= len(lines):
        aimed = _likeliest(block, lines)
    first, last = max(1, aimed - AIMED_AROUND), min(len(lines), aimed + AIMED_AROUND)
    excerpt = "\n".join(lines[first - 1 : last])
    return (
        f"   Lines {first}-{last} of the current {p.path} (authoritative):\n"
        f"```{meta.language or ''} path={p.path}\n{excerpt}\n```\n"
    )


def _likeliest(block: str, lines: list[str]) -> int:
    stripped = [line.strip() for line in lines]
    for raw in block.splitlines():
        text = raw[1:].strip() if raw[:1] in (" ", "-") else raw.strip()
        if len(text) < 8 or text.startswith(("@@", "---", "+++", "<<<", "===", ">>>")):
            continue
        close = difflib.get_close_matches(text, stripped, n=1, cutoff=0.6)
        if close:
            return stripped.index(close[0]) + 1
    return 1
