"""`tm ask`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer

from tinymem.commands.output import (
    closed_pipe,
    emit_json,
    err,
    escape,
    out,
    stdout_styled,
    write_table,
)

if TYPE_CHECKING:
    from tinymem.ask import AskResult
    from tinymem.proposalrecords import Proposal
    from tinymem.repair.triage import RepairItem


def register(app: typer.Typer) -> None:
    app.command("ask")(ask_cmd)


def ask_cmd(
    prompt: str = typer.Argument(
        None,
        help="What you want the model to do; `-` reads it from stdin. Text piped to tm ask is"
        " added after it; none on a terminal opens $EDITOR.",
        show_default=False,
        metavar="[PROMPT]",
    ),
    files: list[str] = typer.Option(
        None, "--file", "-f", help="Hydrate this file in full (repeatable).", metavar="PATH"
    ),
    model: str = typer.Option(
        None,
        "--model",
        "-m",
        help="litellm model, e.g. ollama_chat/qwen2.5-coder:7b.",
        metavar="MODEL",
    ),
    api_base: str = typer.Option(
        None, "--api-base", help="Endpoint URL of the model server.", metavar="URL"
    ),
    budget: int = typer.Option(None, "--budget", help="Prompt token budget.", metavar="TOKENS"),
    timeout: int = typer.Option(
        None, "--timeout", help="Seconds to wait for the model.", metavar="SECONDS"
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the exact messages and their token count; call nothing."
    ),
    repair: int = typer.Option(
        None,
        "--repair",
        min=0,
        help="Repair rounds: blocked proposals the model can fix go back to it with the reason"
        " and the current text, at most this many times (default 1; 0: none).",
        metavar="N",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON at the end."),
    resume: bool = typer.Option(
        False,
        "--continue",
        "-c",
        help="Continue the last ask's conversation (its words and answer; the context is"
        " hydrated again from today's State Map) as one new episode.",
    ),
    accept: bool = typer.Option(
        False,
        "--accept",
        help="Right after the reply, apply the proposals whose targets were hydrated in this"
        " prompt and that pass every gate (the rest stay pending), with a block of the same"
        " file that only adds definitions (a new helper) and passes every gate; a file with a"
        " proposal of"
        " the reply that this does not apply, or a function the reply changes two ways, is"
        " left for `tm accept ID`.",
    ),
) -> None:
    """Ask the model; its reply becomes proposals that tm can prove, or refuses with reasons.

    The State Map is verified against the work tree first (STALE entities are never shown to
    the model); the current truth that matters for the prompt is hydrated inside the token
    budget; the reply is streamed, parsed and recorded as PROPOSED in one ledger episode.
    Precedence of settings: flags > TM_* environment > git config tinymem.* > defaults.
    """
    from tinymem.ask import AskOptions, ask, prepare
    from tinymem.redact import redact_url
    from tinymem.sync import open_synced

    repo = open_synced()
    prompt = read_prompt(prompt)
    flags = model_flags(model, api_base, budget, timeout)
    flags["repair"] = None if repair is None else str(repair)
    opts = AskOptions(prompt=prompt, files=list(files or []), flags=flags)
    if resume:
        from tinymem.askcontinue import previous_conversation

        previous = previous_conversation(repo)
        turns = [*previous.turns, {"role": "user", "content": prompt}]
        # Relevance reads the user's words, the newest first (as `tm serve` does).
        said = [t["content"] for t in reversed(turns) if t["role"] == "user"]
        opts.prompt = "\n".join(said)
        opts.conversation = turns
        opts.continues = previous.episode

    def on_notice(text: str) -> None:
        err().print(f"tm: {escape(text)}")

    if dry_run:
        prep = prepare(repo, opts)
        for notice in prep.notices:
            on_notice(notice)
        if as_json:
            emit_json(
                {
                    "model": prep.model,
                    "api_base": redact_url(prep.api_base),
                    "tokens": prep.hydration.tokens,
                    "budget": prep.hydration.budget,
                    "messages": prep.hydration.messages,
                    "hydrated": prep.hydration.hydrated,
                    "stale": prep.hydration.stale,
                    "notes": prep.hydration.memory,
                    "too_large": [
                        {"entity": key, "tokens": tokens}
                        for key, tokens in prep.hydration.too_large
                    ],
                }
            )
            return
        for m in prep.hydration.messages:
            sys.stdout.write(f"----- {m['role']} -----\n{m['content']}\n")
        sys.stdout.write(
            f"----- {prep.hydration.tokens} tokens (estimate) of a {prep.hydration.budget}"
            f" budget; model {prep.model}; nothing was sent -----\n"
        )
        return

    if as_json:
        result = ask(repo, opts, None, on_notice=on_notice)
    else:
        # The reply as it arrives, each piece written once: the terminal wraps long lines and
        # keeps every one in its scrollback. (A live Markdown view redrew the screen at each
        # piece: it cropped lines at the terminal's width and repeated them in the scrollback.)

        reader_gone = False

        def on_plain(piece: str) -> None:
            nonlocal reader_gone
            if reader_gone:
                return
            try:
                sys.stdout.write(piece)
                sys.stdout.flush()
            except BrokenPipeError:
                # `tm ask … | head`: the reply is still read to its end and recorded (it is
                # paid for); tm ends like git once it is.
                reader_gone = True

        def on_plain_repair(number: int, items: list[RepairItem]) -> None:
            # stdout stays the model's text; what tm does between rounds goes to stderr.
            on_plain("\n")
            err().print(escape(_repair_line(number, items)))

        result = ask(repo, opts, on_plain, on_plain_repair, on_notice)
        on_plain("\n")
        if reader_gone:
            closed_pipe()
    ep = result.committed.episode if result.committed else None
    ep_id = ep.id if ep else "?"
    aborted = result.aborted
    proposals = result.live
    accepted = None
    if accept and not aborted and result.error is None:
        from tinymem.acceptreply import accept_reply

        accepted = accept_reply(repo, proposals)
    promoted = accepted.promoted if accepted else []
    held = accepted.held if accepted else {}
    if result.truncated is not None:
        err().print(f"tm: {escape(result.truncated)}")
    if as_json:
        emit_json(_json_doc(result, promoted, held))
    if result.error is not None:
        raise result.error
    if result.repair_error is not None:
        err().print(
            f"the repair round failed: {escape(str(result.repair_error))}; the proposals of"
            " the rounds before it are recorded"
        )
    if result.stopped is not None and result.stopped != "interrupted":
        err().print(escape(result.stopped))
    if aborted or result.stopped == "interrupted":
        err().print(f"Interrupted: the reply so far was recorded (episode {ep_id}).")
        raise typer.Exit(130)
    if as_json or result.outcome is None:
        return
    con = out()
    for r in result.outcome.refused:
        con.print(f"[red]refused[/] {escape(r['path'])}: {escape(r['reason'])}")
    if not proposals:
        con.print(f"No proposals in the reply (episode {ep_id}).")
        return
    title = f"Proposals (episode {ep_id})"
    rows = [
        [
            p.id,
            p.path or ("(note)" if p.note else "?"),
            ", ".join(f"{e.op} {e.symbol}" for e in p.entities)
            or (f"{p.note['kind']}: {p.note['text']}" if p.note else "-"),
            p.kind,
            p.confidence,
            str(p.round + 1) + (f" (repairs {p.repairs})" if p.repairs else ""),
            p.blocked or "pass",
        ]
        for p in proposals
    ]
    if stdout_styled():
        # One proposal per line, every path and entity whole (a table would shorten them).
        con.print(f"[bold]{escape(title)}[/]")
        for row in rows:
            pid, path, entities, kind, confidence, rounds, gate = row
            gates = "[green]pass[/]" if gate == "pass" else f"[red]blocked[/] {escape(gate)}"
            con.print(
                f"  [bold]{pid}[/]  {escape(path)}  {escape(entities)}"
                f"  [dim]{kind}, {confidence}, round {escape(rounds)}[/]  {gates}"
            )
    else:
        con.print(title)
        write_table(["id", "file", "entities", "kind", "confidence", "rounds", "gates"], rows)
    if accepted is not None:
        for c in accepted.result.plan.checks if accepted.result else []:
            g = c.blocked
            verdict = "promoted" if g is None else f"not promoted ({g.gate}: {g.detail})"
            con.print(f"--accept: {c.proposal.id} {escape(verdict)}")
        for pid, why in held.items():
            con.print(f"--accept: {pid} not promoted ({escape(why)})")
    con.print(_next_line(proposals, promoted))


def _next_line(proposals: list[Proposal], promoted: list[str]) -> str:
    """What the user can do now, true for the state the proposals are in."""
    waiting = [p for p in proposals if p.id not in promoted]
    passing = [p.id for p in waiting if not p.blocked]
    if not waiting:
        return "Next: git diff to review what was written, then commit it."
    if not passing:
        return (
            "Next: every proposal is blocked (see gates): tm diff shows them; ask again, or"
            " tm reject " + " ".join(p.id for p in waiting) + " to drop them."
        )
    return f"Next: tm diff to review; tm accept {' '.join(passing)} to apply; tm reject ID to drop."


def _piped() -> str | None:
    """What a pipe or a redirected file holds on stdin; None for a terminal, /dev/null or an
    inherited stdin nothing writes to (a socket, a character device): reading those would
    wait forever or for nothing."""
    import os
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        # No file descriptor (tests run tm in-process with a buffer as stdin): not a terminal.
        return None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    return sys.stdin.read()


def read_prompt(prompt: str | None) -> str:
    """The prompt as `llm` and git take one: `-` reads it from stdin; text piped along with a
    prompt is added after it as the input it is about; no prompt on a terminal opens $EDITOR."""
    from tinymem.errors import UsageError

    if prompt == "-":
        text = _piped() or ""
        if not text.strip():
            raise UsageError("tm ask -: no prompt came on stdin")
        return text.strip()
    if prompt is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            import click

            edited = click.edit(
                "\n# What should the model do? Lines starting with # are left out.\n"
            )
            text = "\n".join(
                line for line in (edited or "").splitlines() if not line.startswith("#")
            )
        else:
            text = _piped() or ""
        if not text.strip():
            raise UsageError('tm ask needs a prompt: tm ask "what to do" (or `-` to read stdin)')
        return text.strip()
    piped = None if sys.stdin.isatty() else _piped()
    if piped and piped.strip():
        return f"{prompt}\n\nInput (from stdin):\n{piped.rstrip()}"
    return prompt


def model_flags(
    model: str | None, api_base: str | None, budget: int | None, timeout: int | None
) -> dict[str, str | None]:
    """The model settings given as flags (None: not given), for `config.resolve`."""
    return {
        "model": model,
        "apiBase": api_base,
        "budget": None if budget is None else str(budget),
        "timeout": None if timeout is None else str(timeout),
    }


def _repair_line(number: int, items: list[RepairItem]) -> str:
    what = "; ".join(f"{i.path or i.raw_path or 'a block with no file'}: {i.reason}" for i in items)
    return f"tm: repair round {number}: sent back to the model: {what}"


def _json_doc(
    result: AskResult, promoted: list[str], held: dict[str, str] | None = None
) -> dict[str, Any]:
    ep = result.committed.episode if result.committed else None
    proposals = result.outcome.proposals if result.outcome else []
    return {
        "episode": ep.id if ep else None,
        "commit": result.committed.commit if result.committed else None,
        "outcome": ep.outcome if ep else None,
        "error": str(result.error) if result.error else None,
        "proposals": [
            {
                "id": p.id,
                "path": p.path,
                "kind": p.kind,
                "confidence": p.confidence,
                "reason": p.reason,
                "entities": [{"symbol": e.symbol, "op": e.op} for e in p.entities],
                "gates": p.gates,
                "notes": p.notes,
                "blocked": p.blocked,
                "hydrated": p.hydrated,
                "round": p.round,
                "repairs": p.repairs,
                "status": p.status,
                "superseded_by": p.superseded_by,
                "note": p.note,
            }
            for p in proposals
        ],
        "refused": result.outcome.refused if result.outcome else [],
        "rounds": len(result.rounds),
        "repair_stopped": result.stopped,
        "repair_error": str(result.repair_error) if result.repair_error else None,
        "accepted": promoted,
        "held": held or {},
    }
