"""`tm ask`: ETV, hydration, the model call, and its reply recorded as gated proposals.

Blocked proposals the model can fix go back to it in bounded repair rounds of the same
conversation (`tinymem.repair`): one follow-up message per round names what was wrong and
shows the current text of the target; what passed is kept and not asked again. Every call is
one episode, including failed and aborted ones: the exact messages of every round, every raw
reply, model, timings, token counts and hydrated entity keys are stored in its ledger commit
(`askrecord.py`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from tinymem import config as cfg
from tinymem.askmemory import memory_for
from tinymem.edits.proposals import Outcome, build
from tinymem.edits.reply import parse_reply
from tinymem.errors import ModelError, TinymemError, UsageError
from tinymem.etv import EtvReport, verify
from tinymem.gitobjects import ObjectWriter
from tinymem.hydration.hydrate import Hydration, estimate_tokens, hydrate
from tinymem.hydration.relevance import Request
from tinymem.ledger import Committed, Episode, current
from tinymem.ledger import recent as recent_episodes
from tinymem.llm import CallResult, OnText, call, endpoint_name, preloading
from tinymem.modelsetup import check_endpoint, check_setup, is_ollama
from tinymem.proposalrecords import Proposal
from tinymem.records import entity_key
from tinymem.repair.chain import link
from tinymem.repair.followup import FollowUp, follow_up
from tinymem.repair.triage import RepairItem, triage
from tinymem.repository import Repo
from tinymem.statemap import StateView
from tinymem.textlist import shortened

__all__ = [
    "AskOptions",
    "AskResult",
    "OnRepair",
    "Prepared",
    "Round",
    "ask",
    "prepare",
]

# Told before a repair round starts: its number and what goes back to the model.
OnRepair = Callable[[int, list[RepairItem]], None]


@dataclass
class AskOptions:
    prompt: str
    files: list[str] = field(default_factory=list)
    flags: dict[str, str | None] = field(default_factory=dict)  # model, apiBase, budget, ...
    # `tm serve`: the client's own messages, kept as sent, with tm's context in front of them
    # (`prompt` is then their text, for relevance and the episode summary); no repair rounds,
    # since the client drives the conversation.
    conversation: list[dict[str, str]] | None = None
    continues: str | None = None  # `tm ask --continue`: the episode whose conversation this is


@dataclass
class Prepared:
    view: StateView
    etv: EtvReport
    hydration: Hydration
    model: str
    api_base: str | None
    context: int
    timeout: float
    max_reply: int
    repair: int = 0  # repair rounds allowed
    # Said before the call: a STALE entity the request is about, a -f file cut by the budget.
    notices: list[str] = field(default_factory=list)


@dataclass
class Round:
    """One model call: round 0 answers the request, round N is the Nth repair."""

    number: int
    messages: list[dict[str, str]]  # exactly what was sent
    call: CallResult | None = None
    error: ModelError | None = None
    proposals: list[Proposal] = field(default_factory=list)  # made from this reply
    sent_back: list[RepairItem] = field(default_factory=list)  # what the next round asks
    follow_up: FollowUp | None = None  # the message that opened the next round


@dataclass
class AskResult:
    prepared: Prepared
    call: CallResult | None  # round 0's
    outcome: Outcome | None  # every round's proposals (superseded ones too) and refusals
    committed: Committed | None
    error: ModelError | None = None  # round 0 failed: nothing was proposed
    rounds: list[Round] = field(default_factory=list)
    stopped: str | None = None  # why no further repair round was sent, when one was due
    truncated: str | None = None  # the endpoint counted far fewer prompt tokens than were sent
    episode: Episode = field(default_factory=lambda: Episode(kind="ask", summary=""))

    @property
    def aborted(self) -> bool:
        return any(r.call is not None and r.call.aborted for r in self.rounds)

    @property
    def repair_error(self) -> ModelError | None:
        return next((r.error for r in self.rounds[1:] if r.error is not None), None)

    @property
    def live(self) -> list[Proposal]:
        """The proposals that stand at the end (superseded ones left out)."""
        if self.outcome is None:
            return []
        return [p for p in self.outcome.proposals if p.status != "superseded"]


def prepare(repo: Repo, opts: AskOptions) -> Prepared:
    view = current(repo)
    values = cfg.resolve(repo.git, opts.flags)
    context = cfg.as_int(values, "context") or 8192
    budget = cfg.as_int(values, "budget") or max(512, context - max(1024, context // 4))
    repair = cfg.repair_rounds(values) if opts.conversation is None else 0
    etv = verify(repo, view)
    recent = recent_episodes(repo, 6)
    files = [repo.rel(f) for f in opts.files]
    for given, rel in zip(opts.files, files, strict=True):
        _known_file(repo, view, given, rel)
    reserve = repair_reserve(budget) if repair else 0
    memory, memory_notice = memory_for(repo, view, etv, values, opts.prompt)
    hyd = hydrate(
        view,
        etv,
        opts.prompt,
        files=files,
        budget=budget,
        recent=recent,
        reserve=reserve,
        cache_dir=repo.cache_dir,
        memory=memory,
    )
    notices = _stale_notices(view, hyd.stale, opts.prompt, files)
    notices += _left_out(view, hyd, files)
    notices += _too_large(hyd, files)
    if memory_notice is not None:
        notices.append(memory_notice)
    if opts.conversation is not None:
        hyd.messages = hyd.injected(opts.conversation)
        hyd.tokens = sum(estimate_tokens(m["content"]) for m in hyd.messages)
    return Prepared(
        view=view,
        etv=etv,
        hydration=hyd,
        model=values["model"].value or cfg.DEFAULT_MODEL,
        api_base=values["apiBase"].value,
        context=context,
        timeout=float(cfg.as_int(values, "timeout") or 120),
        max_reply=_max_reply(values),
        repair=repair,
        notices=notices,
    )


def _known_file(repo: Repo, view: StateView, given: str, rel: str) -> None:
    """A -f file tm can show: one the State Map holds. Anything else was ignored silently."""
    meta = view.meta(rel)
    if meta is not None and not meta.deleted:
        return
    full = repo.abspath(rel)
    if os.path.isdir(full):
        raise UsageError(f"-f {given} is a directory; -f takes a file (repeat it for several)")
    if os.path.exists(full):
        raise UsageError(f"-f {given}: tm does not track this file yet; `tm adopt {rel}` first")
    raise UsageError(f"-f {given}: no such file")


def _stale_notices(view: StateView, stale: list[str], prompt: str, files: list[str]) -> list[str]:
    """The STALE entities the request is about (named, or in a named file): the model will not
    see them and what it proposes for them will be blocked, so say it before waiting on it."""
    if not stale:
        return []
    req = Request.parse(prompt)
    named = set(files) | set(req.paths)
    about: list[str] = []
    for key in stale:
        path, _, symbol = key.partition("::")
        last = symbol.rsplit(".", 1)[-1]
        if (
            path in named
            or path.rsplit("/", 1)[-1] in req.paths
            or symbol in req.qualified
            or (last and last in req.words)
        ):
            about.append(key)
    if not about:
        return []
    paths = " ".join(dict.fromkeys(k.partition("::")[0] for k in about))
    return [
        f"{', '.join(about[:3])}{' and others' if len(about) > 3 else ''} changed by hand since"
        f" tm recorded it (STALE): the model will not see your text and a change to it will be"
        f" blocked; `tm adopt {paths}` first makes your text the truth"
    ]


def _too_large(hyd: Hydration, files: list[str]) -> list[str]:
    """What the request is about but cannot be shown whole in any room the budget leaves:
    the model would answer from its signature alone (and a rewrite from a signature is
    refused as a fragment). The -f files have their own notice (`_left_out`)."""
    given = set(files)
    return [
        f"{key} (about {tokens:,} tokens) is larger than the room for code in the budget of"
        f" {hyd.budget:,} tokens: the model sees only its signature; raise --budget"
        " (tinymem.budget), or ask about a smaller part of it"
        for key, tokens in hyd.too_large
        if key.partition("::")[0] not in given
    ]


def _left_out(view: StateView, hyd: Hydration, files: list[str]) -> list[str]:
    """What of the -f files did not fit the budget: shown by signature only, or not at all."""
    shown = {h["entity"] for h in hyd.hydrated}
    stale = set(hyd.stale)
    out: list[str] = []
    for rel in dict.fromkeys(files):
        meta = view.meta(rel)
        if meta is None:
            continue
        keys = [
            entity_key(rel, r.symbol)
            for r in meta.live_entities()
            if entity_key(rel, r.symbol) not in stale
        ]
        missing = [k for k in keys if k not in shown and not _inside_shown(k, shown)]
        if missing and keys:
            names = shortened([k.partition("::")[2] for k in missing], 4)
            out.append(
                f"-f {rel}: {len(missing)} of its {len(keys)} entities did not fit the budget of"
                f" {hyd.budget} tokens and were left out ({names}); raise --budget or"
                " name fewer files"
            )
    return out


def _inside_shown(key: str, shown: set[str]) -> bool:
    """A method is shown when its class is (hydration shows a container with its members)."""
    path, _, symbol = key.partition("::")
    parts = symbol.split(".")
    return any(entity_key(path, ".".join(parts[:i])) in shown for i in range(1, len(parts)))


# Below this budget every token of the first prompt is worth more than a repair round: held
# back there, hydration showed the target in full for 24 % of named requests at 800 tokens
# instead of 52 %, and 65 % of described ones at 2000 instead of 70 % (bench/bench_ask.py).
REPAIR_RESERVE_FROM = 2000


def repair_reserve(budget: int) -> int:
    """Tokens hydration leaves out so that a repair round (the reply and one follow-up in the
    same conversation) still fits the budget: a quarter of it, taken only from what lies
    above REPAIR_RESERVE_FROM."""
    return min(budget // 4, max(0, budget - REPAIR_RESERVE_FROM))


# Memory grows with the reply in litellm's stream handling and in reading the reply (a 3.7 MB
# reply: 0.85 GB peak RSS, see docs/architecture.md); no small model writes more than this.
MAX_REPLY_CEILING = 1_000_000


def _max_reply(values: dict[str, cfg.Value]) -> int:
    wanted = cfg.as_int(values, "maxReply") or 200_000
    if wanted > MAX_REPLY_CEILING:
        raise UsageError(
            f"maxReply {wanted} is above tm's ceiling of {MAX_REPLY_CEILING} characters"
            " (memory grows with the reply); set a smaller TM_MAX_REPLY / tinymem.maxReply"
        )
    return wanted


def ask(
    repo: Repo,
    opts: AskOptions,
    on_text: OnText | None = None,
    on_repair: OnRepair | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> AskResult:
    """`on_notice` hears, before the model is called, what the user should know first
    (`Prepared.notices`)."""
    from tinymem.askrecord import record

    # The ledger this ask belongs to, whatever HEAD does while the model talks: a reply
    # about this branch's files must never be recorded into the branch switched to.
    ref = repo.state_ref
    stop = _stopping_error(repo, opts)
    if stop is None:
        with preloading():
            prep = prepare(repo, opts)
    else:
        prep = prepare(repo, opts)  # the first round reports `stop`, after hydration as ever
    if on_notice is not None:
        for notice in prep.notices:
            on_notice(notice)
    result = AskResult(prep, None, None, None)
    result.episode.summary = " ".join(opts.prompt.split())[:120]
    try:
        _converse(
            repo, opts, result, on_text, on_repair, stop if isinstance(stop, ModelError) else None
        )
    except KeyboardInterrupt:
        # Between two calls (parsing, gating): what the finished rounds proposed is kept.
        if not result.rounds or result.rounds[0].call is None:
            raise
        result.stopped = "interrupted"
    record(repo, opts, result, ref=ref)
    return result


def _stopping_error(repo: Repo, opts: AskOptions) -> TinymemError | None:
    """What will stop the model call before it starts (the fail-fast checks `call` makes: a
    setting that cannot work, nothing listening at the endpoint), or None: then litellm is
    worth loading while hydration runs. The first round reports this error instead of
    checking again (a silent host costs `CONNECT_TIMEOUT` once, not twice)."""
    try:
        settings = _settings(repo, opts)
        check_setup(*settings[:2])
        check_endpoint(*settings)
    except TinymemError as exc:
        return exc  # a setting's error `prepare` raises again at once: no import to wait for
    return None


def _settings(repo: Repo, opts: AskOptions) -> tuple[str, str | None, str, float]:
    values = cfg.resolve(repo.git, opts.flags)
    model = values["model"].value or cfg.DEFAULT_MODEL
    api_base = values["apiBase"].value
    timeout = float(cfg.as_int(values, "timeout") or 120)
    return model, api_base, endpoint_name(model, api_base), timeout


def _converse(
    repo: Repo,
    opts: AskOptions,
    result: AskResult,
    on_text: OnText | None,
    on_repair: OnRepair | None,
    stop: ModelError | None = None,
) -> None:
    prep = result.prepared
    view = prep.view
    hydrated = {h["entity"]: h["artifact"] for h in prep.hydration.hydrated}
    shown: dict[str, str] = {}  # what follow-ups showed
    request = Request.parse(opts.prompt)
    qualified = request.qualified
    named_paths = request.paths | frozenset(repo.rel(f) for f in opts.files)
    messages = list(prep.hydration.messages)
    everything = Outcome([], [])
    sent: list[RepairItem] = []
    for number in range(prep.repair + 1):
        rnd = Round(number, list(messages))
        result.rounds.append(rnd)
        try:
            if stop is not None:
                raise stop  # found before hydration (`_stopping_error`)
            rnd.call = call(
                prep.model,
                messages,
                api_base=prep.api_base,
                timeout=prep.timeout,
                context=prep.context,
                max_reply_chars=prep.max_reply,
                on_text=on_text,
            )
        except ModelError as exc:
            rnd.error = exc
            if number == 0:
                result.error = exc
            return
        if number == 0:
            result.call = rnd.call
            result.truncated = truncation_notice(prep, messages, rnd.call.prompt_tokens)
            result.outcome = everything
        if rnd.call.aborted and number > 0:
            return  # a repair cut short: its partial blocks are not worth a proposal
        # ETV again now: a file the user edited while the model was talking must block.
        etv = verify(repo, view)
        writer = ObjectWriter(repo.git)
        outcome = build(
            view,
            writer,
            repo.workdir,
            parse_reply(rnd.call.text, interrupted=rnd.call.aborted),
            etv,
            hydrated,
            result.episode.id,
            qualified=qualified,
            taken={p.id for p in everything.proposals},
            shown_later=shown,
            cache_dir=repo.cache_dir,
            named_paths=named_paths,
        )
        # Durable now, so that the follow-up can read the blocks back; referenced only once
        # the episode is committed (until then `git gc` may prune them, as it should).
        writer.flush()
        for p in outcome.proposals:
            p.round = number
        fresh = link(outcome.proposals, sent, everything.proposals)
        rnd.proposals = fresh
        everything.proposals.extend(fresh)
        everything.refused.extend(outcome.refused)
        if rnd.call.aborted:
            return
        items = triage(view, outcome, fresh, etv)
        if not items or number == prep.repair:
            return
        message = _fitting_follow_up(items, result, number + 1, rnd.call.text)
        if message is None:
            return
        rnd.sent_back, rnd.follow_up, sent = items, message, items
        shown = {**shown, **message.shown}
        messages = [
            *messages,
            {"role": "assistant", "content": rnd.call.text},
            {"role": "user", "content": message.text},
        ]
        if on_repair is not None:
            on_repair(number + 1, items)


# The endpoint's count of prompt tokens below this share of tm's estimate (about four characters
# a token, which real tokenizers exceed on code) means the server cut the prompt: Ollama keeps
# only the last num_ctx tokens (2,048 or 4,096 by default) without a word. The floor keeps
# small prompts, which fit any context, out of it.
TRUNCATED_SHARE = 0.5
TRUNCATED_FLOOR = 512


def truncation_notice(
    prep: Prepared, messages: list[dict[str, str]], counted: int | None
) -> str | None:
    """One sentence when the endpoint saw far fewer prompt tokens than tm sent, with the fix."""
    if counted is None:
        return None
    sent = sum(estimate_tokens(m["content"]) for m in messages)
    if counted >= sent * TRUNCATED_SHARE or sent - counted < TRUNCATED_FLOOR:
        return None
    if is_ollama(prep.model):
        fix = (
            f"raise tinymem.context (now {prep.context}, sent as num_ctx) to what the model"
            " supports, or lower tinymem.budget"
        )
    else:
        fix = (
            "raise the server's context window (Ollama: OLLAMA_CONTEXT_LENGTH, or use"
            " ollama_chat/MODEL, to which tm sends num_ctx) or lower tinymem.budget"
        )
    return (
        f"the prompt was probably truncated: the endpoint counted {counted} prompt tokens"
        f" where tm sent about {sent}; {fix}"
    )


def _fitting_follow_up(
    items: list[RepairItem], result: AskResult, number: int, reply: str
) -> FollowUp | None:
    """The follow-up, in its full form or else its short one (no current texts), when the
    conversation with it still fits the prompt budget; else None, with the reason kept."""
    prep = result.prepared
    budget = prep.hydration.budget
    spent = sum(estimate_tokens(m["content"]) for m in result.rounds[-1].messages)
    spent += estimate_tokens(reply)
    for full in (True, False):
        message = follow_up(items, prep.view, number, prep.repair, current=full)
        if spent + message.tokens <= budget:
            return message
    result.stopped = (
        f"the repair round was not sent: the conversation would need about"
        f" {spent + message.tokens} tokens, over the budget of {budget}"
    )
    return None
