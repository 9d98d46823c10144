"""Project memory in the prompt: which notes a request is shown, inside their share of the budget.

Pure: notes, what each note's anchors are now (`Mark`), the entities hydration chose and the
request in; the block's text and the notes it holds out. No model is asked.

Which notes, in this order, while the share lasts:
1. every constraint (a constraint nobody repeats is a constraint the model breaks);
2. decisions, gotchas and `tried` notes anchored to an entity the request is about (named,
   a neighbour of one named, or among the few its words rank first: `about`), to
   its container or member, or to its file, in the order of the entities' relevance, those
   whose anchored code changed since (DRIFTED, ANCHOR DELETED) after every current one;
3. the other notes (facts, plans, plain notes, and decisions, gotchas and `tried` notes
   anchored to nothing) whose text or anchors share words with the request (identifiers
   split into their parts, a few word endings set aside), most shared words first. An
   anchored decision comes by its anchor only: the words of a note about other code say
   little (`Session` is in half the notes of requests). With `tinymem.embedModel` set, a
   note's embedding close to the request's (cosine at least `CLOSE`) also counts: it adds
   `CLOSE_WEIGHT` × cosine to its shared words (a close note ranks like one or two shared
   words; one with no shared word is recalled by closeness alone); below `CLOSE`, nothing.
A note that does not fit is left out and the next one tried: the block never exceeds its share.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from tinymem.ledger import Episode
from tinymem.notes.model import Note
from tinymem.records import State

__all__ = [
    "ANCHORED_KINDS",
    "Mark",
    "Memory",
    "Recall",
    "about",
    "by_words",
    "note_words",
    "recall",
]

ANCHORED_KINDS = frozenset({"decision", "gotcha", "tried"})


class Mark(Enum):
    """What a note's anchors are now, as the prompt says it."""

    CURRENT = ""
    DRIFTED = " [DRIFTED: written for an older version of this code]"
    ANCHOR_DELETED = " [ANCHOR DELETED: the code it is about is gone]"


@dataclass(frozen=True)
class Memory:
    text: str  # the block, "" when no note is shown
    shown: tuple[str, ...]  # note ids, in the block's order
    tokens: int


_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# Words that say nothing about which note a request needs.
_STOP = frozenset(
    """the and for with that this from into onto when what which where why how are was were
    been being have has had not but all any can could should would will shall may might must
    its it's our your their them they then than there here also only just very more most some
    such each every other use used uses using make makes made get gets set sets add adds new
    code file files function functions method methods class classes call calls called please
    change changes changed write writes need needs want wants does doing done let lets see
    about like one two way ways thing things keep keeps still now""".split()  # noqa: SIM905
)


def _stem(word: str) -> str:
    if len(word) > 5 and word.endswith("ies"):
        return word[:-3] + "y"
    for end in ("ing", "ed", "es", "s"):
        if len(word) > len(end) + 3 and word.endswith(end):
            return word[: -len(end)]
    return word


def note_words(text: str) -> frozenset[str]:
    """The content words of a text: identifiers split into parts (`mergeSetting`,
    `merge_setting` → merge, setting), lowercased and stemmed, stop words left out."""
    out: set[str] = set()
    for token in _TOKEN.findall(text):
        parts = [p for piece in token.split("_") for p in _PART.findall(piece)]
        for part in parts or [token]:
            word = part.lower()
            if len(word) >= 3 and word not in _STOP:
                out.add(_stem(word))
    return frozenset(out)


def _anchor_words(note: Note) -> frozenset[str]:
    """The anchored entities' names (a file's own name for a file): directories and
    extensions (`src`, `py`) would match every request."""
    names = []
    for a in note.anchors:
        path, sep, symbol = a.target.partition("::")
        names.append(symbol if sep else path.rsplit("/", 1)[-1].rsplit(".", 1)[0])
    return note_words(" ".join(names).replace(".", " "))


RECENT = 20  # the score hydration gives an entity one of the last episodes changed
NEAR = 15  # a neighbour's score (what a named entity uses): its notes are recalled
NAMED = 100  # a score only naming an entity (or its file) gives
NEIGHBOURS = 5  # of the functions the named entities use, those whose notes come
TOP = 3  # the most relevant entities, whatever their score: a request in other words


def about(
    ranked: Sequence[tuple[str, float]],
    holders: frozenset[str],
    recent: Sequence[tuple[str, Episode]],
    texts: Mapping[str, str] | None = None,
) -> list[str]:
    """The entities a request is about, most relevant first, from hydration's ranking (key,
    score; most relevant first): those it names, the first `NEIGHBOURS` functions they use
    (`NEAR`; not the classes they make: `holders`), and the `TOP` few its words alone point
    at about as strongly as at the first; what `recent` episodes changed counts only by what
    the request says of it. Every entity BM25 touches (or every name a large class uses)
    would recall notes on code the request merely brushes against.

    Neighbours all score alike (any name in the text of anything scoring `NAMED`, a named
    class's every member and a word of a docstring too), so when the request names
    functions (`texts`: candidates' texts by key) the neighbours are those they call, nearest
    first (`_neighbour_order`: their own class, their file, elsewhere). Ranking's order among
    equals (by path) gave the first five files' helpers and left out the method a named
    method calls on its own class."""
    changed = {
        t.entity
        for _, ep in recent
        if ep.kind != "init"
        for t in ep.transitions
        if t.to_state is State.AUTHORITATIVE
    }
    asked = sorted(
        ((score - (RECENT if key in changed else 0), i) for i, (key, score) in enumerate(ranked)),
        key=lambda t: (-t[0], t[1]),
    )
    best = asked[0][0] if asked else 0.0
    named = [ranked[i][0] for score, i in asked if score >= NAMED]
    pool = [
        (place, ranked[i][0])
        for place, (score, i) in enumerate(asked)
        if NEAR <= score < NAMED and ranked[i][0] not in holders
    ]
    order = _neighbour_order(named, holders, texts or {})
    if order is not None:
        # What the named functions call, not every name their text (or prose) holds.
        ranked_pool = sorted((order(key), place, key) for place, key in pool)
        pool = [(place, key) for rank, place, key in ranked_pool if rank[0] == 0]
        if not pool:  # they call none of them by name (a language without parentheses)
            pool = [(place, key) for _, place, key in ranked_pool]
    chosen = [key for _, key in pool[:NEIGHBOURS]]
    out = list(named)
    words: list[str] = []
    for place, (score, i) in enumerate(asked):
        key = ranked[i][0]
        if score >= NAMED or key in chosen or (score >= NEAR and key in holders):
            continue
        if place < TOP and score > 0 and score >= best / 2:
            words.append(key)
        elif place >= TOP and score < NEAR:
            break
    return out + chosen + words


_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def _last_name(symbol: str) -> str:
    return symbol.split("#", 1)[0].rsplit(".", 1)[-1]


def _neighbour_order(
    named: Sequence[str], holders: frozenset[str], texts: Mapping[str, str]
) -> Callable[[str], tuple[int, int, int, int]] | None:
    """A sort key for the neighbours of the functions a request names, smaller first: whether
    they call it (1: not), how far it sits from one (0: a member of the same class or
    module, 1: the same file, 2: elsewhere), minus how often they call it, and where they
    first call it (the order the named code uses them, not the order of their files). None
    when no named function's text is known, or it calls nothing (a class alone named: its
    text, every name its members use, says nothing of what is meant)."""
    reading = [k for k in named if k not in holders and k in texts]
    calls: dict[str, int] = {}
    first: dict[str, int] = {}
    offset = 0
    for key in reading:
        text = texts[key]
        for m in _CALL.finditer(text):
            calls[m.group(1)] = calls.get(m.group(1), 0) + 1
            first.setdefault(m.group(1), offset + m.start())
        offset += len(text) + 1
    places = []
    for key in reading:
        path, _, symbol = key.partition("::")
        places.append((path, symbol.rpartition(".")[0], symbol))
    if not calls:
        return None

    def order(key: str) -> tuple[int, int, int, int]:
        path, _, symbol = key.partition("::")
        name = _last_name(symbol)
        outer = symbol.rpartition(".")[0]
        near = 2
        for npath, nouter, nsymbol in places:
            if npath != path:
                continue
            if outer in (nouter, nsymbol):  # a sibling (same class or module), or inside it
                near = 0
                break
            near = 1
        called = calls.get(name, 0)
        return (0 if called else 1, near, -called, first.get(name, 0))

    return order


def _touches(target: str, keys: Sequence[str]) -> int | None:
    """The index of the first key the anchor is about (the entity itself, a member of it,
    or an entity of the file an anchor names), else None. A class asked about does not
    recall the notes of each of its methods: those come when the method is."""
    path, sep, symbol = target.partition("::")
    for i, key in enumerate(keys):
        kpath, _, ksym = key.partition("::")
        if kpath != path:
            continue
        if not sep or ksym == symbol or ksym.startswith(symbol + "."):
            return i
    return None


def render(note: Note, mark: Mark, in_view: frozenset[str] = frozenset()) -> str:
    """One note's line. An anchor in a file the prompt shows (`in_view`: paths) is written by
    its symbol alone: the code block names it with its path (`### path::Symbol`, the fence)."""
    where = ", ".join(_anchor_text(a.target, in_view) for a in note.anchors)
    on = f" on {where}" if where else ""
    text = " ".join(note.text.split())
    return f"- {note.kind}{on}{mark.value}: {text}\n"


def _anchor_text(target: str, in_view: frozenset[str]) -> str:
    path, sep, symbol = target.partition("::")
    return symbol if sep and path in in_view else target


CLOSE = 0.5  # the least cosine that counts: unrelated texts still score 0.1 to 0.4
CLOSE_WEIGHT = 2.0


def by_words(note: Note) -> bool:
    """A live note recalled by its words (step 3), not as a constraint or by its anchors."""
    if note.deleted is not None or note.kind == "constraint":
        return False
    return not (note.kind in ANCHORED_KINDS and note.anchors)


HEADER = "[PROJECT MEMORY: kept by the user; follow every constraint]\n"
FOOTER = "[END MEMORY]\n\n"


def recall(
    notes: Sequence[Note],
    marks: Mapping[str, Mark],
    hydrated: Sequence[str],
    prompt: str,
    cap: int,
    similar: Mapping[str, float] | None = None,
    in_view: frozenset[str] = frozenset(),
) -> Memory:
    """The memory block for a request: `hydrated` are the entity keys the prompt shows, most
    relevant first; `marks` each note's anchors now, by note id (absent: CURRENT); `cap` the
    tokens the block may take (0: none); `similar` each note's cosine with the request, by
    note id (none: words only); `in_view` the paths of the files whose code the prompt
    shows."""
    # hydrate.py imports this module: its estimate is taken when first called.
    from tinymem.hydration.hydrate import estimate_tokens

    live = [n for n in notes if n.deleted is None]
    if cap <= 0 or not live:
        return Memory("", (), 0)
    order: list[Note] = [n for n in live if n.kind == "constraint"]
    anchored: list[tuple[int, int, Note]] = []
    for i, n in enumerate(live):
        if n.kind not in ANCHORED_KINDS:
            continue
        hits = [h for a in n.anchors if (h := _touches(a.target, hydrated)) is not None]
        if hits:
            anchored.append((min(hits), i, n))
    # A note written for code that has changed since (or is gone) comes after every current
    # one: when the share holds only some, what still describes the code is shown first.
    order += [
        n
        for _, _, n in sorted(
            anchored, key=lambda t: (marks.get(t[2].id, Mark.CURRENT) != Mark.CURRENT, t[0], t[1])
        )
    ]
    asked = note_words(prompt)
    taken = {n.id for n in order}
    close = similar or {}
    worded: list[tuple[float, int, Note]] = []
    for i, n in enumerate(live):
        if n.id in taken or not by_words(n):
            continue
        score = float(len(asked & (note_words(n.text) | _anchor_words(n))))
        cos = close.get(n.id, 0.0)
        if cos >= CLOSE:
            score += CLOSE_WEIGHT * cos
        if score > 0:
            worded.append((-score, i, n))
    order += [n for _, _, n in sorted(worded, key=lambda t: (t[0], t[1]))]
    left = cap - estimate_tokens(HEADER + FOOTER)
    lines: list[str] = []
    shown: list[str] = []
    for n in order:
        line = render(n, marks.get(n.id, Mark.CURRENT), in_view)
        cost = estimate_tokens(line)
        if cost > left:
            continue
        left -= cost
        lines.append(line)
        shown.append(n.id)
    if not lines:
        return Memory("", (), 0)
    text = HEADER + "".join(lines) + FOOTER
    return Memory(text, tuple(shown), estimate_tokens(text))


@dataclass(frozen=True)
class Recall:
    """What hydration needs to recall notes: every note, each one's mark, and the share of the
    budget the block may take (`tinymem.memoryShare`)."""

    notes: Sequence[Note] = ()
    marks: Mapping[str, Mark] = field(default_factory=dict)
    share: float = 0.0
    similar: Mapping[str, float] = field(default_factory=dict)  # cosine by note id

    def cap(self, budget: int) -> int:
        """Tokens set aside for the block: its share of the budget, or less when every live
        note fits in less (the rest stays the code's); 0 with no live note or a share of 0."""
        from tinymem.hydration.hydrate import estimate_tokens

        live = [n for n in self.notes if n.deleted is None]
        if self.share <= 0 or not live:
            return 0
        # Counted as `recall` counts: each line on its own.
        whole = estimate_tokens(HEADER + FOOTER) + sum(
            estimate_tokens(render(n, self.marks.get(n.id, Mark.CURRENT))) for n in live
        )
        return min(int(budget * self.share), whole)
