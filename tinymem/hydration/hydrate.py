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
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise

from tinymem.edits.alignment import inside
from tinymem.etv import EtvReport
from tinymem.hydration.corpus import FLAG_NONCODE, Corpus, doc_flags, last_name
from tinymem.hydration.excerpts import file_part
from tinymem.hydration.index import rank_with
from tinymem.hydration.memory import RECENT, Recall, about, recall
from tinymem.hydration.prompt import recent_window, state_notice, system_prompt
from tinymem.hydration.relevance import Doc, Request, score
from tinymem.ledger import Episode
from tinymem.records import FILE_SYMBOL, State, entity_key, split_key
from tinymem.statemap import META, EntityRecord, FileMeta, StateView

__all__ = ["Hydration", "estimate_tokens", "hydrate"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LARGE_SHARE = 0.25  # of the budget: a container costing more is shown by its members
ASIDE_SHARE = 0.1  # of the budget: the most unnamed prose and data shown in full
FULL_CUT = 0.25  # of the best score: less is shown by its signature only
MAP_CUT = 0.1  # of the best score: less is not listed at all
MAX_CANDIDATES = 300  # more could not be listed in any budget a small model has
NEIGHBOUR_DEFS = 8  # a name defined more often is no pointer to what a match calls


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
    aside: bool = False  # prose or data the request does not name: a small share at most

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
    # Entities relevance wanted in full that alone cost more than all the room for code:
    # (key, estimated tokens). The model sees their signature only; the user should know.
    too_large: list[tuple[str, int]] = field(default_factory=list)

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


# Words a first line declares with: a signature of these and the name alone says nothing more.
_DECLARING = frozenset(
    """def class async function fn func fun sub pub public private protected internal static
    export default const let var struct interface type trait impl enum module object record
    abstract final open override val""".split()  # noqa: SIM905
)


def _said(symbol: str, signature: str) -> str:
    """` — signature` for the signature map, or "" when it only repeats the name
    (`def resolve_redirects(`, `class Session:`: a signature's parameters on lines below)."""
    name = last_name(symbol)
    words = _WORD.findall(signature.replace(name, " ", 1))
    return "" if all(w in _DECLARING for w in words) else f" — {signature}"


def _score(
    view: StateView,
    corpus: Corpus,
    stale: set[str],
    prompt: str,
    files: list[str],
    recent: list[tuple[str, Episode]],
) -> tuple[list[Candidate], frozenset[str], dict[str, bytes]]:
    """The candidates something points at, most relevant first, the keys of those that
    hold another entity of their file, and the snapshots read (by blob id). Only the files
    of candidates are read."""
    found = score(
        corpus, prompt, files=files, file_symbol=FILE_SYMBOL, keep=MAX_CANDIDATES, cut=MAP_CUT
    )
    # What scores far below the best is never shown, not even by its signature: it is not
    # built at all (the files of thousands of weak matches would be read for nothing).
    floor = max(found.values(), default=0.0) * MAP_CUT
    info = corpus.info(found)
    given = set(files)
    scores: dict[str, float] = {}
    for i in sorted(found, key=lambda i: (-found[i], i)):
        d = info[i]
        strong = found[i] > 0 and found[i] >= floor and len(scores) < MAX_CANDIDATES
        if strong or d.path in given:
            scores[entity_key(d.path, d.symbol)] = found[i]
    for _, ep in recent:
        if ep.kind != "init":
            for t in ep.transitions:
                if t.to_state is State.AUTHORITATIVE:
                    scores[t.entity] = scores.get(t.entity, 0.0) + RECENT
    pool = _Pool(view, stale, Request.parse(prompt).paths | frozenset(files))
    cands = pool.add(scores)
    wanted = set(files)
    for c in cands:
        if c.meta.path in wanted:
            c.score += 500  # the user named the file explicitly: it comes first
    # Neighbours: what the strongest matches call or mention comes next.
    words: set[str] = set()
    for c in cands:
        if c.score >= 100:
            words.update(_WORD.findall(c.text))
    if words:
        named = corpus.named(words)
        # A name defined in many places (`accept`, `get`) does not say which one is meant.
        ids = [
            i for found_ids in named.values() if len(found_ids) <= NEIGHBOUR_DEFS for i in found_ids
        ]
        near = {
            entity_key(d.path, d.symbol): 15.0
            for d in corpus.info(ids).values()
            if d.symbol != FILE_SYMBOL
        }
        for c in cands:
            if c.key in near:
                c.score += near.pop(c.key)
        cands += pool.add(near)
    cands.sort(key=lambda c: (-c.score, c.meta.path, c.rec.start, c.rec.symbol))
    return cands, frozenset(pool.holders), pool.snapshots


# File records read, by their blob id (content-addressed, so never stale): the record, its
# snapshot and the keys of its containers. A long-lived process (`tm serve`) hydrates each
# request from mostly the same files; parsing their records again cost most of a request.
_READ: dict[str, tuple[FileMeta, bytes, frozenset[str], _Nesting]] = {}
_READ_BOUND = 4000
# Where each file's record is, by the `meta/` tree's id and path (content-addressed: an ask
# episode leaves `meta/` as it was): `tree[path]` reads every directory on the way again,
# since libgit2 keeps no tree over 4 KiB (typeshed's stdlib/: 600 entries), ~0.3 ms a file.
_WHERE: dict[tuple[str, str], tuple[int, str] | None] = {}


class _Pool:
    """Candidates built from their file records, each file read once."""

    def __init__(self, view: StateView, stale: set[str], named: frozenset[str]) -> None:
        self.view = view
        self.stale = stale
        self.named = named  # paths and file names the request gives
        self.holders: set[str] = set()
        self._files: dict[str, tuple[FileMeta, bytes, _Nesting] | None] = {}
        self.snapshots: dict[str, bytes] = {}  # blob id -> text, of the files read
        self._built: set[tuple[str, str]] = set()

    def _file(self, path: str) -> tuple[FileMeta, bytes, _Nesting] | None:
        if path not in self._files:
            found = self._where(path)
            read = _READ.get(found[1]) if found is not None else None
            if found is not None and read is None:
                meta = FileMeta.from_bytes(self.view.blob(found[1]))
                live = [
                    Candidate(meta, rec, Doc(meta.key(rec.symbol), path, rec.symbol, ""))
                    for rec in meta.live_entities()
                ]
                snapshot = b"" if meta.deleted else self.view.blob(meta.snapshot)
                read = (meta, snapshot, frozenset(_containers(live)), _Nesting(meta))
                if len(_READ) >= _READ_BOUND:
                    _READ.clear()
                _READ[found[1]] = read
            if read is None or read[0].deleted:
                self._files[path] = None
            else:
                self._files[path] = (read[0], read[1], read[3])
                self.snapshots[read[0].snapshot] = read[1]
                self.holders.update(read[2])
        return self._files[path]

    def _where(self, path: str) -> tuple[int, str] | None:
        tree = self.view.subtree(META)
        if tree is None:
            return None
        key = (tree, path)
        if key not in _WHERE:
            if len(_WHERE) >= _READ_BOUND:
                _WHERE.clear()
            _WHERE[key] = self.view.file_entry(META, path)
        return _WHERE[key]

    def add(self, scores: dict[str, float]) -> list[Candidate]:
        by_path: dict[str, list[tuple[str, float]]] = {}
        for key, value in scores.items():
            if key not in self.stale:
                path, symbol = split_key(key)
                by_path.setdefault(path, []).append((symbol, value))
        out: list[Candidate] = []
        for path in sorted(by_path):
            found = self._file(path)
            if found is None:
                continue
            meta, data, nesting = found
            named = path in self.named or path.rsplit("/", 1)[-1] in self.named
            wanted = dict(by_path[path])
            # The containers of what is wanted come too, with no score of their own: one
            # that fits is shown whole instead of its members (`_select`).
            for outer in _holding(meta, wanted, nesting):
                wanted[outer] = 0.0
            for symbol, value in wanted.items():
                rec = meta.entities.get(symbol)
                if rec is None or rec.state is not State.AUTHORITATIVE:
                    continue
                if (path, symbol) in self._built:
                    continue
                self._built.add((path, symbol))
                text = data[rec.start : rec.end].decode("utf-8", "replace")
                doc = Doc(meta.key(symbol), path, symbol, text, rec.artifact)
                flags = doc_flags(path, data[rec.start : rec.start + 200])
                aside = bool(flags & FLAG_NONCODE) and not named
                out.append(Candidate(meta, rec, doc, value, aside))
        return out


class _Nesting:
    """Which live entities of a file hold which (`inside`), found once per file record and
    kept with it: a request then costs the entities it wants, not the file's (57 files of
    up to 1,000 entities per serve request on mypy)."""

    def __init__(self, meta: FileMeta) -> None:
        live = list(meta.live_entities())
        self.order = {r.symbol: n for n, r in enumerate(live)}  # `live_entities` order
        self.holders: dict[str, list[str]] = {}  # live symbol -> the live ones holding it
        for outer, inner in _nested(live, [(r.start, r.end, r.symbol) for r in live]):
            self.holders.setdefault(inner, []).append(outer.symbol)


def _nested(
    outers: list[EntityRecord], spans: list[tuple[int, int, str]]
) -> Iterator[tuple[EntityRecord, str]]:
    """(outer, name of a span inside it) for every pair where `inside(outer, span)`: only
    the spans starting within each outer are looked at (bisect), not every pair."""
    spans = sorted(spans)
    starts = [s for s, _, _ in spans]
    for outer in outers:
        lo, hi = bisect_left(starts, outer.start), bisect_right(starts, outer.end)
        own = (outer.start, outer.end)
        for start, end, name in spans[lo:hi]:
            if end <= outer.end and (start, end) != own:
                yield outer, name


def _holding(meta: FileMeta, wanted: dict[str, float], nesting: _Nesting) -> list[str]:
    """The live entities of `meta` not in `wanted` that hold one of them (`inside`), in
    `live_entities` order: from `nesting` for the live ones wanted (every entity against
    every wanted one was a fifth of a prompt on mypy); a wanted record no longer live (an
    episode's, recently) against every live entity."""
    found: set[str] = set()
    gone: list[tuple[int, int, str]] = []
    for w in wanted:
        if w in nesting.order:
            found.update(nesting.holders.get(w, ()))
        elif w in meta.entities:
            rec = meta.entities[w]
            gone.append((rec.start, rec.end, w))
    if gone:
        found.update(outer.symbol for outer, _ in _nested(list(meta.live_entities()), gone))
    return sorted((s for s in found if s not in wanted), key=nesting.order.__getitem__)


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
) -> tuple[list[Candidate], list[Candidate], list[Candidate]]:
    """(shown in full, listed by signature, too large), the first two in relevance order.
    Only what scores near the best is shown in full: the rest of the budget stays unused
    rather than filled with noise; prose and data nobody named take at most `ASIDE_SHARE` of
    it. Too large: what would have been shown in full but alone costs more than `room`."""
    chosen: list[Candidate] = []
    mapped: list[Candidate] = []
    too_large: list[Candidate] = []
    left = room
    floor = (cands[0].score if cands else 0.0) * FULL_CUT
    aside_left = int(budget * ASIDE_SHARE)
    by_path: dict[str, list[Candidate]] = {}  # chosen, per file: only those can hold `c`
    for c in cands:
        if any(o.holds(c) for o in by_path.get(c.meta.path, ())):
            continue  # inside a container shown in full: it is already there
        cost = estimate_tokens(c.text) + 4
        members = [o for o in by_path.get(c.meta.path, ()) if c.holds(o)]
        # Below the cut-off only as the container of what is shown: context, not noise.
        if ((c.score <= 0 or c.score < floor) and not members) or (c.aside and cost > aside_left):
            mapped.append(c)
            continue
        if c.key in holders and cost > budget * LARGE_SHARE:
            mapped.append(c)  # a large container: its members come on their own
            continue
        refund = sum(estimate_tokens(m.text) + 4 for m in members)
        if cost - refund > left:
            mapped.append(c)
            if cost > room and not c.aside and not members:
                too_large.append(c)
            continue
        for m in members:
            chosen.remove(m)
            by_path[c.meta.path].remove(m)
        chosen.append(c)
        by_path.setdefault(c.meta.path, []).append(c)
        left -= cost - refund
        if c.aside:
            aside_left -= cost
    shown = {c.meta.path for c in chosen if c.key in holders}
    mapped = [m for m in mapped if m.meta.path not in shown or not any(o.holds(m) for o in chosen)]
    return chosen, mapped, too_large


def _state_section(
    chosen: list[Candidate],
    view: StateView,
    read: dict[str, bytes],
    cache_dir: str | None,
    parts_done: dict[tuple[str, tuple[str, ...]], str],
) -> dict[str, str]:
    """One block per file (by path), files in the order of their most relevant entity. The
    section (`_framed`) is
    rendered again while it does not fit: `read` keeps the snapshots already read (by the
    candidates' pool, a second read of checker.py was a tenth of a request on mypy), and
    `parts_done` the parts already rendered, by path and keys (dropping one entity changes one
    file's part; rendering them all again cost a tenth of a request on mypy)."""
    by_path: dict[str, list[Candidate]] = {}
    for c in chosen:
        by_path.setdefault(c.meta.path, []).append(c)
    parts: dict[str, str] = {}
    for path, group in by_path.items():
        meta = group[0].meta
        group.sort(key=lambda c: c.rec.start)
        keys = [c.key for c in group]
        done = parts_done.get((path, tuple(keys)))
        if done is None:
            data = read.get(meta.snapshot)
            if data is None:
                data = read[meta.snapshot] = view.blob(meta.snapshot)
            spans = [(c.rec.start, c.rec.end) for c in group]
            done = file_part(path, meta.language, data, spans, keys, cache_dir)
            parts_done[(path, tuple(keys))] = done
        parts[path] = done
    return parts


def fit_state(
    chosen: list[Candidate],
    mapped: list[Candidate],
    room: int,
    render: Callable[[list[Candidate]], dict[str, str]],
) -> str:
    """The state section of `chosen` (`render`: its parts by path), dropping the least
    relevant entity to the front of `mapped` until it fits `room`: headers and `⋮` lines
    cost a little more than the texts `_select` counted.

    A drop frees at most its file's part (the others do not change), so while the parts of
    the files dropped from add up to less than the excess the state cannot fit yet: the
    next drop is certain, and made without rendering again (one render per drop was a sixth
    of a request on a 50,000-file tree). The same drops as rendering after each."""
    parts = render(chosen)
    state = _framed(parts)
    while chosen and estimate_tokens(state) > room:
        excess = len(state) - 4 * room  # it fits at 4 * room characters or fewer
        freed = 0
        touched: set[str] = set()
        while chosen and freed < excess:
            c = chosen.pop()
            mapped.insert(0, c)
            if c.meta.path not in touched:
                touched.add(c.meta.path)
                freed += len(parts[c.meta.path])
        parts = render(chosen)
        state = _framed(parts)
    return state


def _framed(parts: dict[str, str]) -> str:
    return "[CURRENT STATE: AUTHORITATIVE]\n" + "".join(parts.values()) + "[END STATE]\n"


def hydrate(
    view: StateView,
    etv: EtvReport,
    prompt: str,
    *,
    files: list[str],
    budget: int,
    recent: list[tuple[str, Episode]],
    reserve: int = 0,
    cache_dir: str | None = None,
    memory: Recall | None = None,
) -> Hydration:
    """`reserve`: tokens of the budget left unused, so that a repair round (the reply and
    one follow-up in the same conversation) still fits it. `cache_dir`: where the relevance
    index and the containers of rendered files live (`.git/tinymem/`); without one the
    index is built in memory for this call and every rendered file is parsed.
    `memory`: the notes to recall (`memory.py`), in a block ahead of the code under their
    share of the budget."""
    stale = sorted(etv.stale_keys())
    cands, holders, read = rank_with(
        view, cache_dir, lambda corpus: _score(view, corpus, set(stale), prompt, files, recent)
    )
    system = system_prompt()
    tail = f"\n[REQUEST]\n{prompt}\n"
    notice = state_notice(stale)
    recent_text = recent_window(recent)
    fixed = estimate_tokens(system) + estimate_tokens(notice + recent_text + tail) + 16
    # The notes' share is set aside before the code is chosen (which notes are recalled
    # depends on the code shown); what they leave unused goes to the signature map.
    cap = memory.cap(budget) if memory is not None else 0
    room = budget - fixed - reserve - cap
    chosen, mapped, too_large = _select(cands, room, budget, holders)
    parts_done: dict[tuple[str, tuple[str, ...]], str] = {}
    state = fit_state(
        chosen, mapped, room, lambda c: _state_section(c, view, read, cache_dir, parts_done)
    )
    if not chosen:
        state = ""  # an empty CURRENT STATE said nothing the system prompt does not
    room -= estimate_tokens(state)
    mem = None
    if memory is not None:
        ranked = [(c.key, c.score) for c in cands]
        keys = about(ranked, holders, recent, {c.key: c.text for c in cands})
        paths = frozenset(c.meta.path for c in chosen)
        mem = recall(memory.notes, memory.marks, keys, prompt, cap, memory.similar, paths)
    if mem is not None:
        room += cap - mem.tokens
    map_lines: list[str] = []
    map_keys: list[str] = []
    # The signature map follows relevance too, so what is nearly relevant is listed first;
    # what scores far below the best is left out.
    floor = (cands[0].score if cands else 0.0) * MAP_CUT
    for c in mapped:
        if c.score <= 0 or c.score < floor:
            continue
        if c.rec.symbol == FILE_SYMBOL:
            line = f"{c.meta.path}: (file, {len(c.text)} characters)"
        else:
            line = f"{c.meta.path}: {c.rec.symbol}{_said(c.rec.symbol, _signature(c.text))}"
        cost = estimate_tokens(line + "\n")
        if cost > room:
            break
        room -= cost
        map_lines.append(line)
        map_keys.append(c.key)
    sections = [notice, recent_text, mem.text if mem else "", state]
    if map_lines:
        lead = "\n" if state else ""
        sections.append(f"{lead}[OTHER ENTITIES: signatures only]\n" + "\n".join(map_lines) + "\n")
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
        too_large=[
            (c.key, estimate_tokens(c.text))
            for c in too_large
            if not any(c.holds(o) for o in chosen)  # a member of it is shown: not blind
        ],
    )
