"""NOTE lines of a reply as pending note proposals, anchored to what the reply changed.

A note the model asks for is a proposal like its code: nothing is remembered until the user
accepts it (`tm accept`, which writes it to the notes store in the accept's episode), and
`tm reject` drops it. Its anchors are the entities the reply's other proposals change or
add (a whole file's proposal: the file), not what they delete; none when it changed nothing.
Whether each anchor still names something is decided at accept time: a new function whose
proposal was rejected anchors nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tinymem.edits.notelines import NoteDirective
from tinymem.proposalrecords import Proposal
from tinymem.records import FILE_SYMBOL, Confidence, entity_key

__all__ = ["NOTE_KIND", "note_proposals", "reply_anchors"]

NOTE_KIND = "note"  # Proposal.kind of a note proposal


def reply_anchors(proposals: Sequence[Proposal]) -> list[str]:
    """The entities (or files) the reply's code proposals change or add, in order, once."""
    out: dict[str, None] = {}
    for p in proposals:
        if p.path is None or p.kind in ("unresolved", NOTE_KIND) or p.status == "superseded":
            continue
        for e in p.entities:
            if e.op == "delete":
                continue
            out[p.path if e.symbol == FILE_SYMBOL else entity_key(p.path, e.symbol)] = None
        if not p.entities and p.kind in ("whole-file", "new-file"):
            out[p.path] = None
    return list(out)


def note_proposals(
    notes: Sequence[NoteDirective],
    code: Sequence[Proposal],
    new_id: Callable[[], str],
    episode_id: str,
) -> list[Proposal]:
    anchors = reply_anchors(code)
    out: list[Proposal] = []
    seen: set[tuple[str, str]] = set()
    for n in notes:
        if (n.kind, n.text) in seen:
            continue  # the same line twice is one note
        seen.add((n.kind, n.text))
        out.append(
            Proposal(
                id=new_id(),
                episode=episode_id,
                path=None,
                kind=NOTE_KIND,
                confidence=Confidence.CONFIRMED.value,
                reason=None,
                entities=[],
                block=None,
                file_base=None,
                gates={"A": "pass", "ETV": "pass"},
                notes=[f"NOTE line {n.line} of the reply"],
                note={"kind": n.kind, "text": n.text, "anchors": anchors, "source": "model"},
            )
        )
    return out
