"""Hydration: the current truth, chosen for this prompt inside a token budget.

Deterministic: the same State Map, work tree and prompt give byte-identical messages. Nothing
comes from model memory; STALE entities are never shown, only named in the STATE NOTICE.

What is shown, in order of relevance (`relevance.py`) while the budget lasts: entities in
full, as they sit in their files (`excerpts.py`: under their containers' headers, `⋮` for
what is left out), one block per file. A container shown in full carries its members, so no
entity's text appears twice; a container larger than a quarter of the budget is not shown
whole when its members are asked about: they come on their own under its header, and its
other members are listed by signature. Everything else relevant comes as one-line signatures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from tinymem.edits.alignment import inside
from tinymem.etv import EtvReport
from tinymem.hydration.excerpts import file_part
from tinymem.hydration.memory import Recall, about, recall
from tinymem.hydration.prompt import recent_window, state_notice, system_prompt
from tinymem.hydration.relevance import Doc, rank
from tinymem.ledger import Episode
from tinymem.records import FILE_SYMBOL, State, entity_key
from tinymem.statemap import META, EntityRecord, FileMeta, StateView

__all__ = ["Hydration", "estimate_tokens", "hydrate"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LARGE_SHARE = 0.25  # of the budget: a container costing more is shown by its members


def estimate_tokens(text: str) -> int:
    """A deterministic estimate (about four characters per token) used for budgeting.

    Real tokenizers differ by model; the budget keeps a margin for that.
    """
    return (len(text) + 3) // 4


@dataclass
class Candidate:
    meta: FileMeta
    rec: EntityRecord
    doc: Doc  # what ranking reads: key, path, symbol, text
    score: float = 0.0

    @property
    def key(self) -> str:
        return self.doc.key

    @property
    def text(self) -> str:
        return self.doc.text

    def holds(self, other: Candidate) -> bool:
        return self.meta.path == other.meta.path and inside(self.rec, other.rec)


@dataclass
class Hydration:
    messages: list[dict[str, str]]
    hydrated: list[dict[str, str]] = field(default_factory=list)  # key, artifact
    mapped: list[str] = field(default_factory=list)  # keys shown only as signatures
    stale: list[str] = field(default_factory=list)
    tokens: int = 0
    budget: int = 0
    context: str = ""  # the user message without its [REQUEST]: what `tm serve` injects
    memory: list[str] = field(default_factory=list)  # ids of the notes shown (PROJECT MEMORY)

    def injected(self, conversation: list[dict[str, str]]) -> list[dict[str, str]]:
        """A client's conversation with tm's system prompt and context in front (`tm serve`):
        the client's messages are kept as they are."""
        system = f"{self.messages[0]['content']}\n\n{self.context}".rstrip() + "\n"
        return [{"role": "system", "content": system}, *conversation]


def _signature(text: str) -> str:
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith(("@", "#[", "//", "#", "/*", "*")):
            return s[:120]
    return text.strip().splitlines()[0][:120] if text.strip() else ""


# Every live entity with its text, for the last set of file records asked about (the `meta/`
# tree, which an ask episode leaves as it is): a long-lived process (`tm serve`) hydrates
# each request from the same records, and reading every record and snapshot again cost a
# third of its hydration time.
_LAST: tuple[str, list[tuple[FileMeta, EntityRecord, Doc]]] | None = None


def _entities(view: StateView) -> list[tuple[FileMeta, EntityRecord, Doc]]:
    global _LAST
    records = view.subtree(META)
    if _LAST is not None and records is not None and _LAST[0] == records:
        return _LAST[1]
    out: list[tuple[FileMeta, EntityRecord, Doc]] = []
    for meta in view.all_meta():
        if meta.deleted:
            continue
        snapshot: bytes | None = None
        for rec in meta.live_entities():
            if snapshot is None:
                snapshot = view.blob(meta.snapshot)
            text = snapshot[rec.start : rec.end].decode("utf-8", "replace")
            key = entity_key(meta.path, rec.symbol)
            out.append((meta, rec, Doc(key, meta.path, rec.symbol, text, rec.artifact)))
    if records is not None:
        _LAST = (records, out)
    return out


def _candidates(view: StateView, stale: set[str]) -> list[Candidate]:
    return [
        Candidate(meta, rec, doc)
        for meta, rec, doc in _entities(view)
        if not stale or doc.key not in stale
    ]


def _score(
    cands: list[Candidate],
    prompt: str,
    files: list[str],
    recent: list[tuple[str, Episode]],
    names: frozenset[str],
) -> None:
    recent_keys: set[str] = set()
    for _, ep in recent:
        if ep.kind != "init":
            recent_keys.update(
                t.entity for t in ep.transitions if t.to_state is State.AUTHORITATIVE
            )
    scores = rank(
        [c.doc for c in cands],
        prompt,
        files=files,
        file_symbol=FILE_SYMBOL,
    )
    wanted = set(files)
    for c in cands:
        c.score = scores[c.key]
        if c.meta.path in wanted:
            c.score += 500  # the user named the file explicitly: it comes first
        if c.key in recent_keys:
            c.score += 20
    # Neighbours: what the strongest matches call or mention comes next.
    referenced: set[str] = set()
    for c in cands:
        if c.score >= 100:
            referenced.update(set(_WORD.findall(c.text)) & names)
    for c in cands:
        if c.rec.symbol.rsplit(".", 1)[-1] in referenced:
            c.score += 15
    cands.sort(key=lambda c: (-c.score, c.meta.path, c.rec.start, c.rec.symbol))


# (holders, names) of the last candidates: what depends only on the entities, not on the
# prompt, for the same file records and STALE set (`tm serve`: every request).
_DERIVED: tuple[tuple[str, tuple[str, ...]], tuple[frozenset[str], frozenset[str]]] | None = None


def _derived(
    view: StateView, stale: list[str], cands: list[Candidate]
) -> tuple[frozenset[str], frozenset[str]]:
    """The keys of containers among the candidates, and every entity's last name part."""
    global _DERIVED
    records = view.subtree(META)
    key = (records or "", tuple(stale))
    if records is not None and _DERIVED is not None and _DERIVED[0] == key:
        return _DERIVED[1]
    holders = frozenset(_containers(cands))
    names = frozenset(c.rec.symbol.rsplit(".", 1)[-1] for c in cands if c.rec.symbol != FILE_SYMBOL)
    if records is not None:
        _DERIVED = (key, (holders, names))
    return holders, names


def _containers(cands: list[Candidate]) -> set[str]:
    """Keys of the candidates that physically hold another one (a class and its methods)."""
    by_path: dict[str, list[Candidate]] = {}
    for c in cands:
        by_path.setdefault(c.meta.path, []).append(c)
    out: set[str] = set()
    for group in by_path.values():
        group = sorted(group, key=lambda c: (c.rec.start, -c.rec.end))
        for a, b in pairwise(group):
            if a.holds(b):
                out.add(a.key)
    return out


def _select(
    cands: list[Candidate], room: int, budget: int, holders: frozenset[str]
) -> tuple[list[Candidate], list[Candidate]]:
    """(shown in full, listed by signature), both in relevance order."""
    chosen: list[Candidate] = []
    mapped: list[Candidate] = []
    left = room
    by_path: dict[str, list[Candidate]] = {}  # chosen, per file: only those can hold `c`
    for c in cands:
        if any(o.holds(c) for o in by_path.get(c.meta.path, ())):
            continue  # inside a container shown in full: it is already there
        cost = estimate_tokens(c.text) + 4
        if c.score <= 0 or (c.key in holders and cost > budget * LARGE_SHARE):
            mapped.append(c)  # a large container: its members come on their own
            continue
        members = [o for o in by_path.get(c.meta.path, ()) if c.holds(o)]
        refund = sum(estimate_tokens(m.text) + 4 for m in members)
        if cost - refund > left:
            mapped.append(c)
            continue
        for m in members:
            chosen.remove(m)
            by_path[c.meta.path].remove(m)
        chosen.append(c)
        by_path.setdefault(c.meta.path, []).append(c)
        left -= cost - refund
    shown = {c.meta.path for c in chosen if c.key in holders}
    mapped = [m for m in mapped if m.meta.path not in shown or not any(o.holds(m) for o in chosen)]
    return chosen, mapped


def _state_section(chosen: list[Candidate], view: StateView, read: dict[str, bytes]) -> str:
    """One block per file, files in the order of their most relevant entity. `read` keeps
    the snapshots already read: the section is rendered again while it does not fit."""
    by_path: dict[str, list[Candidate]] = {}
    for c in chosen:
        by_path.setdefault(c.meta.path, []).append(c)
    parts: list[str] = []
    for path, group in by_path.items():
        meta = group[0].meta
        group.sort(key=lambda c: c.rec.start)
        data = read.get(meta.snapshot)
        if data is None:
            data = read[meta.snapshot] = view.blob(meta.snapshot)
        spans = [(c.rec.start, c.rec.end) for c in group]
        parts.append(file_part(path, meta.language, data, spans, [c.key for c in group]))
    return "[CURRENT STATE: AUTHORITATIVE]\n" + "".join(parts) + "[END STATE]\n"


def hydrate(
    view: StateView,
    etv: EtvReport,
    prompt: str,
    *,
    files: list[str],
    budget: int,
    recent: list[tuple[str, Episode]],
    reserve: int = 0,
    memory: Recall | None = None,
) -> Hydration:
    """`reserve`: tokens of the budget left unused, so that a repair round (the reply and
    one follow-up in the same conversation) still fits it. `memory`: the notes to recall
    (`memory.py`), in a block ahead of the code under their share of the budget."""
    stale = sorted(etv.stale_keys())
    cands = _candidates(view, set(stale))
    holders, names = _derived(view, stale, cands)
    _score(cands, prompt, files, recent, names)
    system = system_prompt()
    tail = f"\n[REQUEST]\n{prompt}\n"
    notice = state_notice(stale)
    recent_text = recent_window(recent)
    fixed = estimate_tokens(system) + estimate_tokens(notice + recent_text + tail) + 16
    # The notes' share is set aside before the code is chosen (which notes are recalled
    # depends on the code shown); what they leave unused goes to the signature map.
    cap = memory.cap(budget) if memory is not None else 0
    room = budget - fixed - reserve - cap
    chosen, mapped = _select(cands, room, budget, holders)
    read: dict[str, bytes] = {}
    state = _state_section(chosen, view, read)
    # Headers and `⋮` lines cost a little more than the texts: drop the least relevant
    # entity until the rendered state fits.
    while chosen and estimate_tokens(state) > room:
        mapped.insert(0, chosen.pop())
        state = _state_section(chosen, view, read)
    room -= estimate_tokens(state)
    mem = None
    if memory is not None:
        ranked = [(c.key, c.score) for c in cands]
        mem = recall(memory.notes, memory.marks, about(ranked, holders, recent), prompt, cap)
    if mem is not None:
        room += cap - mem.tokens
    map_lines: list[str] = []
    map_keys: list[str] = []
    # The signature map follows relevance too, so what is nearly relevant is listed first.
    for c in mapped:
        if c.rec.symbol == FILE_SYMBOL:
            line = f"{c.meta.path}: (file, {len(c.text)} characters)"
        else:
            line = f"{c.meta.path}: {c.rec.symbol} — {_signature(c.text)}"
        cost = estimate_tokens(line + "\n")
        if cost > room:
            break
        room -= cost
        map_lines.append(line)
        map_keys.append(c.key)
    sections = [notice, recent_text, mem.text if mem else "", state]
    if map_lines:
        sections.append("\n[OTHER ENTITIES: signatures only]\n" + "\n".join(map_lines) + "\n")
    context = "".join(sections)
    user = context + tail
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return Hydration(
        messages=messages,
        hydrated=[{"entity": c.key, "artifact": c.rec.artifact} for c in chosen],
        mapped=map_keys,
        stale=stale,
        tokens=estimate_tokens(system) + estimate_tokens(user),
        budget=budget,
        context=context,
        memory=list(mem.shown) if mem else [],
    )
