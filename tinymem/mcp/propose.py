"""An edit written by an MCP client's model, recorded as `tm ask` records a reply: the same
parsing, gates and episode (kind `ask`, one round, no repair: the agent reads the gate results
and proposes again). The episode's model is the client (`mcp:NAME VERSION`), so `tm log`
and `tm blame` name it as the source."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tinymem.ask import MAX_REPLY_CEILING, AskOptions, AskResult, Prepared, Round
from tinymem.askrecord import record
from tinymem.edits.proposals import build
from tinymem.edits.reply import parse_reply
from tinymem.errors import UsageError
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.hydration.hydrate import Hydration
from tinymem.ledger import Committed, current
from tinymem.llm import CallResult
from tinymem.proposalrecords import Proposal
from tinymem.repository import Repo

__all__ = ["Proposed", "propose"]


@dataclass
class Proposed:
    committed: Committed | None
    proposals: list[Proposal] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)  # blocks whose path was refused


def propose(repo: Repo, text: str, source: str) -> Proposed:
    if not text.strip():
        raise UsageError("the text is empty; give code blocks, a diff or SEARCH/REPLACE blocks")
    if len(text) > MAX_REPLY_CEILING:
        raise UsageError(
            f"the text has {len(text)} characters, over tm's ceiling of {MAX_REPLY_CEILING};"
            " propose the edits in parts"
        )
    view = current(repo)
    etv = verify(repo, view)
    opts = AskOptions(prompt=f"edits proposed by {source}")
    prep = Prepared(
        view=view,
        etv=etv,
        # Nothing was hydrated: the client's model saw what its agent read, not tm's prompt.
        hydration=Hydration(messages=[], stale=sorted(etv.stale_keys())),
        model=source,
        api_base=None,
        context=0,
        timeout=0.0,
        max_reply=MAX_REPLY_CEILING,
    )
    reply = CallResult(
        text=text, prompt_tokens=None, completion_tokens=None, seconds=0.0, first_token_seconds=None
    )
    result = AskResult(prep, reply, None, None)
    result.episode.summary = opts.prompt
    writer = ObjectWriter(repo.git)
    outcome = build(
        view,
        writer,
        repo.workdir,
        parse_reply(text),
        etv,
        {},
        result.episode.id,
        cache_dir=repo.cache_dir,
    )
    writer.flush()  # the blobs the records name, durable before the commit refers to them
    result.outcome = outcome
    result.rounds = [Round(0, [], call=reply, proposals=list(outcome.proposals))]
    record(repo, opts, result)
    return Proposed(result.committed, result.live, list(outcome.refused))
