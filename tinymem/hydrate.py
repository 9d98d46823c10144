"""Hydration: the current truth, chosen for this prompt inside a token budget.

Deterministic: the same State Map, work tree and prompt give byte-identical messages. Nothing
comes from model memory; STALE entities are never shown, only named in the STATE NOTICE.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tinymem.edits.directives import DELETE_DIRECTIVE_HELP
from tinymem.etv import EtvReport
from tinymem.ledger import Episode
from tinymem.records import FILE_SYMBOL, State, entity_key
from tinymem.relevance import Doc, rank
from tinymem.statemap import EntityRecord, FileMeta, StateView

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RECENT_EPISODES = 4
RECENT_CHARS = 600  # hard cap of the recent-context window

SYSTEM_PROMPT = """You are a coding assistant working on a git repository through tinymem.
You have no memory: the CURRENT STATE below is the only truth about the code.

Answer with code in fenced blocks. Rules:
1. Put the file path in the fence info string, like ```python path=src/app.py
2. Give each changed function, method or class COMPLETE, from its first line to its last.
   Several symbols of one file may share a block. Do not repeat unchanged symbols.
3. A new file: give the whole file in one block with its path.
4. Never write placeholders such as "... rest of the code unchanged" or "existing code here".
5. Never remove code by leaving it out. {delete}
6. Only use paths inside the repository. Do not edit entities listed in a STATE NOTICE.
Keep prose short."""


def estimate_tokens(text: str) -> int:
    """A deterministic estimate (about four characters per token) used for budgeting.

    Real tokenizers differ by model; the budget keeps a margin for that.
    """
    return (len(text) + 3) // 4


@dataclass
class Candidate:
    meta: FileMeta
    rec: EntityRecord
    text: str
    score: float = 0.0

    @property
    def key(self) -> str:
        return entity_key(self.meta.path, self.rec.symbol)


@dataclass
class Hydration:
    messages: list[dict[str, str]]
    hydrated: list[dict[str, str]] = field(default_factory=list)  # key, artifact
    mapped: list[str] = field(default_factory=list)  # keys shown only as signatures
    stale: list[str] = field(default_factory=list)
    tokens: int = 0
    budget: int = 0


def _signature(text: str) -> str:
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith(("@", "#[", "//", "#", "/*", "*")):
            return s[:120]
    return text.strip().splitlines()[0][:120] if text.strip() else ""


def hydrate(
    view: StateView,
    etv: EtvReport,
    prompt: str,
    *,
    files: list[str],
    budget: int,
    recent: list[tuple[str, Episode]],
) -> Hydration:
    stale = sorted(etv.stale_keys())
    stale_set = set(stale)
    wanted_files = set(files)
    recent_keys: set[str] = set()
    for _, ep in recent:
        if ep.kind == "init":
            continue
        recent_keys.update(t.entity for t in ep.transitions if t.to_state is State.AUTHORITATIVE)
    cands: list[Candidate] = []
    for meta in view.all_meta():
        if meta.deleted:
            continue
        snapshot: bytes | None = None
        for rec in meta.live_entities():
            key = entity_key(meta.path, rec.symbol)
            if key in stale_set:
                continue
            if snapshot is None:
                snapshot = view.blob(meta.snapshot)
            text = snapshot[rec.start : rec.end].decode("utf-8", "replace")
            cands.append(Candidate(meta, rec, text))
    scores = rank(
        [Doc(c.key, c.meta.path, c.rec.symbol, c.text) for c in cands],
        prompt,
        files=files,
        file_symbol=FILE_SYMBOL,
    )
    for c in cands:
        c.score = scores[c.key]
        if c.meta.path in wanted_files:
            c.score += 500  # the user named the file explicitly: it comes first
        if c.key in recent_keys:
            c.score += 20
    # Neighbours: what the strongest matches call or mention comes next.
    names = {c.rec.symbol.rsplit(".", 1)[-1] for c in cands if c.rec.symbol != FILE_SYMBOL}
    referenced: set[str] = set()
    for c in cands:
        if c.score >= 100:
            referenced.update(set(_WORD.findall(c.text)) & names)
    for c in cands:
        if c.rec.symbol.rsplit(".", 1)[-1] in referenced:
            c.score += 15
    cands.sort(key=lambda c: (-c.score, c.meta.path, c.rec.start, c.rec.symbol))

    system = SYSTEM_PROMPT.format(delete=DELETE_DIRECTIVE_HELP)
    tail = f"\n[REQUEST]\n{prompt}\n"
    notice = ""
    if stale:
        lines = "\n".join(f"- {k}" for k in stale)
        notice = (
            "[STATE NOTICE: DISK DIVERGENCE]\nThese entities were changed outside tinymem and"
            " are EXCLUDED; do not rewrite them, the user must run `tm adopt` first:\n"
            f"{lines}\n[END NOTICE]\n\n"
        )
    recent_text = _recent_window(recent)
    fixed = estimate_tokens(system) + estimate_tokens(notice + recent_text + tail) + 16
    room = budget - fixed
    hydrated: list[Candidate] = []
    covered: list[tuple[str, int, int]] = []  # spans already shown in full
    body_parts: list[str] = []
    mapped: list[Candidate] = []
    for c in cands:
        inside = any(
            p == c.meta.path and s <= c.rec.start and c.rec.end <= e for p, s, e in covered
        )
        if inside:
            continue
        if c.score > 0:
            lang = c.meta.language or ""
            part = (
                f"### {c.key} (artifact {c.rec.artifact[:12]})\n"
                f"```{lang} path={c.meta.path}\n{c.text}\n```\n"
            )
            cost = estimate_tokens(part)
            if cost <= room:
                room -= cost
                body_parts.append(part)
                hydrated.append(c)
                covered.append((c.meta.path, c.rec.start, c.rec.end))
                continue
        mapped.append(c)
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
    sections = [notice, recent_text]
    sections.append("[CURRENT STATE: AUTHORITATIVE]\n" + "".join(body_parts) + "[END STATE]\n")
    if map_lines:
        sections.append("\n[OTHER ENTITIES: signatures only]\n" + "\n".join(map_lines) + "\n")
    user = "".join(sections) + tail
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return Hydration(
        messages=messages,
        hydrated=[{"entity": c.key, "artifact": c.rec.artifact} for c in hydrated],
        mapped=map_keys,
        stale=stale,
        tokens=estimate_tokens(system) + estimate_tokens(user),
        budget=budget,
    )


def _recent_window(recent: list[tuple[str, Episode]]) -> str:
    lines = []
    for _, ep in recent[:RECENT_EPISODES]:
        if ep.kind not in ("ask", "accept", "reject", "adopt"):
            continue
        lines.append(f"- {ep.kind}: {ep.summary[:140]} ({ep.outcome})")
    if not lines:
        return ""
    text = "\n".join(lines)[:RECENT_CHARS]
    return f"[RECENT EPISODES: context only, not truth]\n{text}\n[END RECENT]\n\n"
