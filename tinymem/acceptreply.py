"""`--accept` (`tm ask`, `tm serve`): what of one reply is promoted without the user naming it.

A reply is read as a whole: a proposal `--accept` does not write (blocked, INFERRED,
UNRESOLVED, or its targets not shown to the model) may be the reply's own correction of a
sibling for the same file ("Wait, that is wrong. Corrected version: …"), so no proposal of
that file is written; two proposals that change one entity differently leave the choice to
the user. This is `tm accept --all`'s rule (a file's proposals together or not at all) taken
to the proposals `--accept` never hands to the accept. The user can still `tm accept ID`.

A proposal that only adds definitions is never eligible on its own (there is no target the
model was shown), yet it is the usual other half of a change: one block adds a helper
`_clamp`, another changes `f` to call it. Written alone, `f` would call an undefined name;
held, the change is lost. One that passes every gate (CONFIRMED, its file named, nothing
blocked) goes with an eligible proposal of its file: it overwrites nothing, and the gates
already checked where it goes. Alone in its file it stays for the user, as before; its adds
count in the rival rule (two different adds of one name are two ways).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tinymem.accept import AcceptResult, accept
from tinymem.proposalrecords import Proposal
from tinymem.records import entity_key
from tinymem.repository import Repo


@dataclass
class ReplyAccept:
    result: AcceptResult | None  # None: nothing was handed to the accept
    held: dict[str, str] = field(default_factory=dict)  # proposal id -> why it was held back

    @property
    def promoted(self) -> list[str]:
        return [c.proposal.id for c in self.result.plan.checks if c.ok] if self.result else []


def eligible(p: Proposal) -> bool:
    """Whether `--accept` would take this proposal on its own."""
    return p.hydrated and not p.blocked


def adds_only(p: Proposal) -> bool:
    """Whether `p` only adds definitions to a file it names and passes every gate: `--accept`
    writes it with an eligible proposal of its file, never alone (module docstring)."""
    return (
        p.note is None
        and p.kind == "symbols"
        and p.path is not None
        and bool(p.entities)
        and all(e.op == "add" for e in p.entities)
        and p.confidence == "CONFIRMED"
        and p.placement == "named"
        and not p.blocked
    )


def writing(proposals: list[Proposal]) -> list[Proposal]:
    """The proposals of one reply `--accept` means to write, before any is held back: the
    eligible ones, and the add-only ones of a file that has an eligible one."""
    chosen = [p for p in proposals if p.note is None and eligible(p)]
    paths = {p.path for p in chosen}
    return chosen + [p for p in proposals if not eligible(p) and adds_only(p) and p.path in paths]


def held_back(proposals: list[Proposal]) -> dict[str, str]:
    """The proposals of one reply `--accept` means to write (`writing`) that it must leave to
    the user, and why."""
    meant = writing(proposals)
    ids = {p.id for p in meant}
    held = _rival_changes(meant)
    # Holding one proposal of a file back holds back the others of that file in turn; an
    # add-only one goes only with an eligible one of its file that is written.
    changed = True
    while changed:
        changed = False
        for p in meant:
            q = None if p.id in held else _left_sibling(p, proposals, held, ids)
            if q is None and p.id not in held and not eligible(p):
                q = _all_held(p, meant, held)
            if q is not None:
                held[p.id] = _held_line(p, q, held)
                changed = True
    return held


def _all_held(p: Proposal, meant: list[Proposal], held: dict[str, str]) -> Proposal | None:
    """For an add-only `p`: an eligible proposal of its file, when every one of them is held
    (None when one of them is written)."""
    siblings = [q for q in meant if q.path == p.path and eligible(q)]
    if any(q.id not in held for q in siblings):
        return None
    return siblings[0] if siblings else None


def _left_sibling(
    p: Proposal, proposals: list[Proposal], held: dict[str, str], meant: set[str]
) -> Proposal | None:
    """A proposal of the reply `--accept` does not write that may be about `p`'s file: one
    for the same file, or one with no provable file that defines a symbol `p` changes."""
    names = {e.symbol for e in p.entities}
    for q in proposals:
        if q.id == p.id or q.note is not None or (q.id in meant and q.id not in held):
            continue
        if q.path is not None and q.path == p.path:
            return q
        if q.path is None and names & {e.symbol for e in q.entities}:
            return q
    return None


def _held_line(p: Proposal, q: Proposal, held: dict[str, str]) -> str:
    if q.id in held:
        why = "held back too"
    elif q.blocked:
        why = f"blocked: {q.blocked}"
    else:
        why = "its targets were not shown to the model"
    where = f"for {p.path}" if q.path is not None else "with no provable file"
    return (
        f"held back: proposal {q.id} of this reply {where} is not written by --accept ({why});"
        f" it may be the reply's correction of this one, and tm writes a file's proposals"
        f" together or not at all: `tm diff` to review, `tm accept {p.id}` to apply this one"
    )


def _rival_changes(writing: list[Proposal]) -> dict[str, str]:
    """Proposals that change one entity in different ways: the reply gave it twice, and only
    the user can say which one it means (the same text twice is one change, written once)."""
    texts: dict[str, dict[str, str | None]] = {}  # entity key -> proposal id -> its text
    for p in writing:
        for e in p.entities:
            if p.path is not None:
                texts.setdefault(entity_key(p.path, e.symbol), {})[p.id] = e.artifact
    held: dict[str, str] = {}
    for key, by_id in sorted(texts.items()):
        if len(set(by_id.values())) < 2:
            continue
        ids = " ".join(by_id)
        for pid in by_id:
            held.setdefault(
                pid,
                f"held back: this reply changes {key} {len(by_id)} ways (proposals {ids});"
                " which one it means is for you to say: `tm diff` to review, `tm accept ID`"
                " to apply one",
            )
    return held


def accept_reply(repo: Repo, proposals: list[Proposal]) -> ReplyAccept:
    """Promote what `--accept` may of one reply's live proposals; the rest stay pending."""
    held = held_back(proposals)
    meant = {p.id for p in writing(proposals)}
    chosen = [p.id for p in proposals if p.id in meant and p.id not in held]
    return ReplyAccept(accept(repo, chosen) if chosen else None, held)
