"""`tm ask --continue`: the last ask's conversation, as the next request's turns.

Only the conversation is taken from the episode (the user's words and the model's answer),
never the context tm put in front of it: the new episode hydrates that again from today's
State Map, so what changed since is shown as it is now and STALE entities stay out.
"""

from __future__ import annotations

import json

from tinymem.errors import UsageError
from tinymem.ledger import history
from tinymem.repository import Repo
from tinymem.statemap import StateView

__all__ = ["Previous", "previous_conversation"]

# The last asks looked at for one that answered (a failed or interrupted one has no answer).
LOOK_BACK = 50


class Previous:
    def __init__(self, episode: str, turns: list[dict[str, str]]) -> None:
        self.episode = episode
        self.turns = turns  # user/assistant messages, oldest first, ending with the answer


def _is_ask(kind: str) -> bool:
    return kind == "ask"  # only an ask's record is read: the others are passed over


def previous_conversation(repo: Repo) -> Previous:
    """The turns of the newest ask episode that got an answer; UsageError when none did."""
    seen = 0
    for commit, ep in history(repo, read=_is_ask):
        if ep.kind != "ask":
            continue
        seen += 1
        if seen > LOOK_BACK:
            break
        view = StateView(repo.git, commit)
        reply = view.episode_blob("response.txt")
        if reply is None or ep.outcome == "failed":
            continue
        prompt = view.episode_blob("prompt.txt") or b""
        answer = {"role": "assistant", "content": reply.decode("utf-8", "replace")}
        before = ep.details.get("continues")
        if before:
            # A continued ask stored the turns it sent after tm's system message.
            sent = json.loads(view.episode_blob("messages.json") or b"[]")
            turns = [
                {"role": str(m["role"]), "content": str(m["content"])}
                for m in sent[1:]
                if m.get("role") in ("user", "assistant")
            ]
        else:
            turns = [{"role": "user", "content": prompt.decode("utf-8", "replace")}]
        return Previous(ep.id, [*turns, answer])
    raise UsageError("tm ask --continue: no earlier ask on this branch got an answer to continue")
