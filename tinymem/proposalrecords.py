"""The stored form of a proposal (`proposals/<id>/` in the State Map) and the pending ones.

Kept apart from `proposals.py` (which builds proposals from a model's reply) so that readers
such as `tm status` and the pre-commit hook do not load the reply parser.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from tinymem.gitobjects import MODE_BLOB, ObjectWriter
from tinymem.records import entity_key
from tinymem.statemap import PROPOSAL_RECORD, StateView


@dataclass
class ProposedEntity:
    symbol: str
    op: str  # "modify" | "add" | "delete"
    artifact: str | None  # blob of the proposed text (None for delete)
    base: str | None  # the authoritative artifact it was written against (None for add)
    after: str | None = None  # for "add": the symbol the block gave it after (placement)
    # Keys a newer tm wrote that this one does not know: kept, written back (`Proposal.newer`).
    newer: dict[str, Any] = field(default_factory=dict)


@dataclass
class Proposal:
    id: str
    episode: str
    path: str | None
    kind: str  # "symbols" | "whole-file" | "new-file" | "delete" | "unresolved"
    confidence: str
    reason: str | None
    entities: list[ProposedEntity]
    block: str | None  # blob of the whole block as the model wrote it
    file_base: str | None  # the file snapshot at ask time
    elisions: list[str] = field(default_factory=list)
    gates: dict[str, str] = field(default_factory=dict)
    hydrated: bool = False  # every modified target was shown to the model in this prompt
    # "pending" | "rejected" | "superseded" (a repair round answered it with `superseded_by`);
    # accepted ones leave proposals/
    status: str = "pending"
    notes: list[str] = field(default_factory=list)  # how the block was read and aligned
    format: str = "code"  # the block's format: "code" | "udiff" | "search-replace"
    round: int = 0  # the reply it came from: 0 the answer, N the Nth repair round
    repairs: str | None = None  # the blocked proposal of the round before that it answers
    superseded_by: list[str] = field(default_factory=list)
    # "named": the reply (or the request, see `edits.proposals`) named the file; "inferred":
    # correlation chose it, and `tm accept ID --path FILE` is the user confirming it;
    # "elsewhere": a definition it adds is defined alike in another file (`edits.elsewhere`),
    # and `tm accept ID --path FILE` is the user confirming a second definition.
    placement: str = "named"
    # kind "note": what a NOTE line asks to remember, {"kind", "text", "anchors": [targets],
    # "source"} (`edits/noteproposals.py`); accepting it writes the note (`notes/`)
    note: dict[str, Any] | None = None
    # format "udiff" / "search-replace": blob of the edit as the reply wrote it, applied again
    # when tm itself changed the file since (`tinymem/reapply.py`)
    edit: str | None = None
    # Keys a newer tm wrote that this one does not know. Written back as they were, so that
    # a rejection here loses nothing; a proposal that has them is never accepted by this tm
    # (`accept`), whose rules for them it does not know (an `edit` key once changed how a
    # proposal is applied again).
    newer: dict[str, Any] = field(default_factory=dict)

    def entity_keys(self) -> list[str]:
        return [entity_key(self.path or "?", e.symbol) for e in self.entities]

    def to_bytes(self) -> bytes:
        raw = asdict(self)
        if raw["note"] is None:
            del raw["note"]  # the records of code proposals stay as they were
        if raw["edit"] is None:
            del raw["edit"]
        raw.update(raw.pop("newer"))
        for entity in raw["entities"]:
            entity.update(entity.pop("newer"))
        return json.dumps(raw, indent=1, ensure_ascii=False).encode() + b"\n"

    @classmethod
    def from_bytes(cls, data: bytes) -> Proposal:
        raw: dict[str, Any] = json.loads(data)
        known, newer = _split(cls, raw)
        entities = []
        for e in known["entities"]:
            entity, extra = _split(ProposedEntity, e)
            entities.append(ProposedEntity(**entity, newer=extra))
        known["entities"] = entities
        return cls(**known, newer=newer)

    @property
    def newer_keys(self) -> list[str]:
        """The keys of its record this tm does not know, the entities' ones as `entities.K`."""
        inner = {f"entities.{k}" for e in self.entities for k in e.newer}
        return sorted(self.newer.keys() | inner)

    @property
    def blocked(self) -> str | None:
        for gate in ("A", "ETV"):
            result = self.gates.get(gate, "pass")
            if result != "pass":
                return f"{gate}: {result}"
        return None


def _split(kind: type, raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """`raw` as the fields of `kind` this tm knows, and the rest."""
    names = {f.name for f in fields(kind)} - {"newer"}
    known = {k: v for k, v in raw.items() if k in names}
    return known, {k: v for k, v in raw.items() if k not in names}


def store(writer: ObjectWriter, p: Proposal) -> str:
    """Write `p` as the tree stored at `proposals/<id>`: its record and, each under its own
    id, every blob the record names (block, file base, artifacts, bases). Reachable through
    tree entries, they survive `git gc` and travel with `git clone --mirror`."""
    record = writer.blob(p.to_bytes())
    named = {p.block, p.file_base, p.edit}
    for e in p.entities:
        named.update((e.artifact, e.base))
    pins = sorted(oid for oid in named if oid is not None)
    return writer.tree([(PROPOSAL_RECORD, MODE_BLOB, record), *((o, MODE_BLOB, o) for o in pins)])


def pending(view: StateView) -> dict[str, Proposal]:
    """Proposals waiting for `tm accept` or `tm reject`, by id."""
    out: dict[str, Proposal] = {}
    for pid in view.proposal_ids():
        data = view.proposal_blob(pid)
        if data is None:
            continue
        p = Proposal.from_bytes(data)
        if p.status == "pending":
            out[pid] = p
    return out
