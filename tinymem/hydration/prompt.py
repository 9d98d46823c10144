"""The fixed parts of every prompt: the system prompt, the STATE NOTICE, the recent window."""

from __future__ import annotations

from tinymem.edits.directives import DELETE_DIRECTIVE_HELP
from tinymem.edits.notelines import NOTE_DIRECTIVE_HELP
from tinymem.ledger import Episode

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

SYSTEM_PROMPT = """You are a coding assistant working on a git repository through tinymem.
You have no memory: the CURRENT STATE below is the only truth about the code.

Answer with code in fenced blocks. Rules:
1. Put the file path in the fence info string, like ```python path=src/app.py
2. Give each changed function, method or class COMPLETE, from its first line to its last.
   A method may come alone or inside its class lines as shown (⋮ marks lines left out).
   Several symbols of one file may share a block. Do not repeat unchanged symbols.
3. A new file: give the whole file in one block with its path.
4. Never write placeholders such as "... rest of the code unchanged" or "existing code here".
5. Never remove code by leaving it out. {delete}
6. Only use paths inside the repository. Do not edit entities listed in a STATE NOTICE.
7. A unified diff or a SEARCH/REPLACE block is accepted too, when its context lines match
   the current text exactly.
8. {note}
Keep prose short."""


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


def recent_window(recent: list[tuple[str, Episode]]) -> str:
    lines = []
    for _, ep in recent[:RECENT_EPISODES]:
        if ep.kind not in ("ask", "accept", "reject", "adopt"):
            continue
        lines.append(f"- {ep.kind}: {ep.summary[:140]} ({ep.outcome})")
    if not lines:
        return ""
    text = "\n".join(lines)[:RECENT_CHARS]
    return f"[RECENT EPISODES: context only, not truth]\n{text}\n[END RECENT]\n\n"
