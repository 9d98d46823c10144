"""The fixed parts of every prompt: the system prompt, the STATE NOTICE, the recent window."""

from __future__ import annotations

import re

from tinymem.edits.directives import DELETE_DIRECTIVE_HELP
from tinymem.edits.notelines import NOTE_DIRECTIVE_HELP
from tinymem.ledger import Episode
from tinymem.records import FILE_SYMBOL, State, split_key

__all__ = [
    "RECENT_CHARS",
    "RECENT_EPISODES",
    "SYSTEM_PROMPT",
    "recent_window",
    "state_notice",
    "system_prompt",
]

RECENT_EPISODES = 4
RECENT_CHARS = 600  # hard cap of the recent-context window

# One line a rule (the model reads no wrapping; the indented continuation lines cost tokens).
SYSTEM_PROMPT = (
    "You are a coding assistant on a git repository.\n"
    "You have no memory: the CURRENT STATE below is the only truth about the code.\n"
    "\n"
    "Answer with code in fenced blocks. Rules:\n"
    "1. Put the file path in the fence info string, like ```python path=src/app.py\n"
    "2. Give each changed function, method or class COMPLETE, first line to last. A method may"
    " come alone or inside its class lines as shown (⋮ marks lines left out). Several symbols"
    " of one file may share a block. Do not repeat unchanged symbols.\n"
    "3. A new file: give the whole file in one block with its path.\n"
    '4. Never write placeholders such as "... rest of the code unchanged" or "existing code'
    ' here": what a block leaves out is kept unchanged, never deleted.\n'
    "5. {delete}\n"
    "6. Only use paths inside the repository. Do not edit entities listed in a STATE NOTICE.\n"
    "7. A unified diff or a SEARCH/REPLACE block is accepted too, when its context lines match"
    " the current text exactly.\n"
    "8. {note}\n"
    "Keep prose short."
)


def system_prompt() -> str:
    return SYSTEM_PROMPT.format(delete=DELETE_DIRECTIVE_HELP, note=NOTE_DIRECTIVE_HELP)


def state_notice(stale: list[str]) -> str:
    if not stale:
        return ""
    lines = "\n".join(f"- {k}" for k in stale)
    return (
        "[STATE NOTICE: DISK DIVERGENCE]\nThese entities were changed outside tinymem and"
        " are EXCLUDED; do not rewrite them, the user must run `tm adopt` first:\n"
        f"{lines}\n[END NOTICE]\n\n"
    )


# An ask whose outcome says only that it went as asked: what follows (accept, reject) says more.
_PLAIN_ASK = re.compile(r"\d+ proposal\(s\), 0 blocked")
NAMES_SHOWN = 4  # of the entities an accept made current, the rest counted
VERDICTS = ("accept", "reject")


def _verdict(ep: Episode, asked: str = "") -> str:
    """What an accept made current or why a reject was given, not the proposal ids its
    summary holds: the model never sees a proposal id. The entities the request (`asked`)
    already names are not named again."""
    if ep.kind == "reject":
        why = ep.details.get("why")
        return f"rejected, because {why}" if isinstance(why, str) and why else "rejected"
    names = [
        name
        for name in dict.fromkeys(
            _name(t.entity) for t in ep.transitions if t.to_state is State.AUTHORITATIVE
        )
        if not re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", asked)
    ]
    what = names[:NAMES_SHOWN]
    if len(names) > NAMES_SHOWN:
        what.append(f"{len(names) - NAMES_SHOWN} more")
    text = " ".join(["accepted", ", ".join(what)]) if what else "accepted"
    if ep.notes:
        notes = "a note" if len(ep.notes) == 1 else f"{len(ep.notes)} notes"
        text += f"{',' if what else ''} with {notes}"
    return text


def _name(key: str) -> str:
    path, symbol = split_key(key)
    return path if symbol == FILE_SYMBOL else symbol


def _line(ep: Episode, verdicts: list[str]) -> str:
    text = ep.summary[:140] if ep.kind not in VERDICTS else _verdict(ep)
    # "ok" is every episode's outcome, and a proposal count says less than the verdict.
    if ep.outcome != "ok" and not (ep.kind == "ask" and _PLAIN_ASK.fullmatch(ep.outcome)):
        text += f" ({ep.outcome})"
    return f"- {ep.kind}: " + " → ".join([text, *verdicts])


def recent_window(recent: list[tuple[str, Episode]]) -> str:
    """The last episodes, newest first. An accept or reject of proposals that all came from
    an ask of the window is said on that ask's line (`ask: … → accepted parse_args`): a
    line of its own only repeated which request it answered."""
    eps = [ep for _, ep in recent[:RECENT_EPISODES] if ep.kind in ("ask", *VERDICTS, "adopt")]
    folded: dict[int, list[str]] = {}  # by the ask's place: its verdicts, oldest first
    said: set[int] = set()  # the verdicts said on an ask's line
    for i, ep in enumerate(eps):
        if ep.kind not in VERDICTS or not ep.proposals:
            continue
        j = next((j for j in range(i + 1, len(eps)) if eps[j].kind == "ask"), None)
        if j is not None and set(ep.proposals) <= set(eps[j].proposals):
            folded.setdefault(j, []).insert(0, _verdict(ep, eps[j].summary))
            said.add(i)
    lines = [_line(ep, folded.get(i, [])) for i, ep in enumerate(eps) if i not in said]
    if not lines:
        return ""
    text = "\n".join(lines)[:RECENT_CHARS]
    return f"[RECENT EPISODES: context only, not truth]\n{text}\n[END RECENT]\n\n"
