"""`tm log | show | blame | doctor | config`: read-only audit and diagnostics.

Nothing here changes tm's state (`tm config KEY VALUE` writes git config, not the State Map)
and nothing calls a model except `tm doctor --model`. Output is one line per item and plain
when piped, so it pages and greps well.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from tinymem.commands import completers
from tinymem.commands.output import (
    diff_markup,
    emit_json,
    escape,
    out,
    page,
    short,
    stdout_styled,
    write_rows,
)
from tinymem.errors import EXIT_CHECK_FAILED

# An init episode of a big repository records every file: the text view shows the first few.
LIST_LIMIT = 50


def register(app: typer.Typer) -> None:
    # Idempotent, so a test can register these before cli.py does without doubling them.
    have = {c.name for c in app.registered_commands}
    for name, fn in (
        ("log", log_cmd),
        ("show", show_cmd),
        ("blame", blame_cmd),
        ("doctor", doctor_cmd),
        ("config", config_cmd),
    ):
        if name not in have:
            app.command(name)(fn)


# ------------------------------------------------------------------------------------- log


def log_cmd(
    target: str = typer.Argument(
        None, metavar="[PATH | PATH::SYMBOL]", help="Only episodes that touched this."
    ),
    count: int = typer.Option(
        None, "-n", "--max-count", help="Show at most N episodes.", metavar="N"
    ),
    kind: str = typer.Option(
        None, "--kind", help="Only this kind: init, ask, accept, reject, adopt, …", metavar="KIND"
    ),
    branch: list[str] = typer.Option(
        [], "--branch", "-b", metavar="NAME", help="This branch's ledger (repeatable)."
    ),
    all_branches: bool = typer.Option(
        False, "--all-branches", help="Every branch's ledger together, each episode once."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """List the ledger's episodes, newest first: episode id, ledger commit id, time, kind,
    author (the model, for an ask), summary, outcome. `tm show` takes either id; `-3` is `-n 3`.

    The ledger is the current branch's (State Maps are per branch); --branch names others,
    --all-branches shows every branch's, with the branches holding each episode. With a file
    or directory, only episodes that recorded, changed or proposed something in it; with an
    entity (path::Symbol), only episodes with a transition of that entity.
    """
    from tinymem.auditlog import log, parse_target
    from tinymem.branches.refs import ledger_refs
    from tinymem.ledger import current
    from tinymem.sync import open_synced

    repo = open_synced()
    branches = list(ledger_refs(repo.git)) if all_branches else list(dict.fromkeys(branch))
    if not branches:
        current(repo)  # a clear "run tm init" rather than an empty list
    entries = log(
        repo,
        parse_target(repo, target) if target else None,
        limit=count,
        kind=kind,
        branches=branches,
    )
    if as_json:
        emit_json(entries)
        return
    page()
    styled = stdout_styled()
    write_rows([_log_line(e, styled) for e in entries], styled)


def _log_line(e: dict[str, Any], styled: bool) -> str:
    def mark(style: str, text: str) -> str:
        return f"[{style}]{escape(text)}[/]" if styled else text

    def plain(text: str) -> str:
        return escape(text) if styled else text

    summary = e["summary"]
    if e["kind"] == "accept" and e["prompt_summary"]:
        summary += f' ("{e["prompt_summary"]}")'
    if e["undone_by"]:
        summary += f" (undone by {e['undone_by']})"
    if styled and len(summary) > 72:  # piped: complete, as git prints it
        summary = summary[:71] + "…"
    counts = []
    if e["entities_changed"]:
        counts.append(f"{e['entities_changed']} changed")
    if e["entities_proposed"]:
        counts.append(f"{e['entities_proposed']} proposed")
    outcome = plain(e["outcome"])
    if e["outcome"] == "failed":
        outcome = mark("red", "failed") + ": " + plain(e["error"] or "")
    elif e["blocked"]:
        first = e["blocked"][0]
        outcome = mark("red", e["outcome"]) + plain(f" ({first['proposal']} {first['reason']})")
    elif e["kind"] == "accept" and e["outcome"] == "ok":
        outcome = mark("green", "promoted")
    counted = "[" + ", ".join(counts) + "]" if counts else ""
    if not styled:  # piped: one field per column, for `cut -f` (the README's promise)
        fields = [e["episode"], short(e["commit"])]
        if "branches" in e:
            fields.append(",".join(e["branches"]))
        fields += [_when(e["time"]), e["kind"], e["author"], summary, counted, outcome]
        return "\t".join(fields)
    author = e["author"] if len(e["author"]) <= 24 else e["author"][:23] + "…"
    held = f"{mark('cyan', '(' + ', '.join(e['branches']) + ')')}  " if "branches" in e else ""
    return (
        f"{mark('yellow', e['episode'])} {mark('dim', short(e['commit']))}  {held}"
        f"{mark('dim', _when(e['time']))}  {e['kind']:<7} "
        f"{plain(author):<24}  {plain(summary)}"
        f"{'  ' + counted if counted else ''}  {outcome}"
    )


def _when(iso: str) -> str:
    return iso[:16].replace("T", " ")


# ------------------------------------------------------------------------------------ show


def show_cmd(
    episode: str = typer.Argument(
        None,
        help="Episode id or ledger commit id, as tm log prints them (a prefix is enough);"
        " default: the latest episode.",
        autocompletion=completers.episodes,
        metavar="EPISODE",
    ),
    messages: bool = typer.Option(
        False, "--messages", help="Print the exact messages sent to the model (JSON)."
    ),
    response: bool = typer.Option(False, "--response", help="Print the model's raw reply."),
    prompt: bool = typer.Option(False, "--prompt", help="Print the user's prompt."),
    round_number: int = typer.Option(
        None,
        "--round",
        min=0,
        help="With --messages or --response: that round of an ask (0: the answer, N: the"
        " Nth repair round).",
        metavar="N",
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Everything one episode recorded: transitions with reasons, proposals with their gate
    results and diffs, token counts and timings.

    --messages, --response and --prompt print the stored bytes exactly as sent or received.
    An ask with repair rounds stores the whole conversation: --messages prints every message
    of its last request in order (each earlier round sent a prefix of it), --round N one
    round's request or reply.
    """
    from tinymem.auditlog import attachment, show
    from tinymem.errors import UsageError
    from tinymem.sync import open_synced

    raw = [name for name, on in (("messages", messages), ("response", response)) if on]
    if prompt:
        raw.append("prompt")
    if len(raw) + as_json > 1:
        raise UsageError("choose one of --messages, --response, --prompt and --json")
    if round_number is not None and not (messages or response):
        raise UsageError("--round goes with --messages or --response")
    repo = open_synced()
    if episode is None:
        from tinymem.ledger import current

        episode = current(repo).commit_id or ""  # like `git show`: the newest
    if raw:
        data = attachment(repo, episode, raw[0], round_number)
        sys.stdout.buffer.write(data)
        # Byte for byte when redirected; a final newline only to keep a terminal's prompt tidy.
        if data and not data.endswith(b"\n") and sys.stdout.isatty():
            sys.stdout.buffer.write(b"\n")
        sys.stdout.flush()
        return
    doc = show(repo, episode)
    if as_json:
        emit_json(doc)
        return
    page()
    _render_show(doc)


def _render_show(d: dict[str, Any]) -> None:
    con = out()
    con.print(f"[bold]episode {d['episode']}[/]  commit [yellow]{d['commit']}[/]")
    rows = [
        ("kind", d["kind"]),
        ("time", d["time"]),
        ("who", d["who"]),
        ("summary", d["summary"]),
        ("outcome", d["outcome"] + (f": {d['error']}" if d["error"] else "")),
    ]
    if d["undid"]:
        what = d["details"].get("undid_kind") or "episode"
        rows.append(("undid", f"{what} {d['undid']} (its files have their text before it again)"))
    if d["undone_by"]:
        rows.append(("undone by", f"{d['undone_by']} (`tm undo {d['undone_by']}` redoes it)"))
    kept = d["details"].get("kept") if d["kind"] == "undo" else None
    for path, blob in sorted((kept or {}).items()):
        rows.append(("kept", f"{path}: its text before the forced undo, git cat-file -p {blob}"))
    if d["model"]:
        rows.append(("model", d["model"] + (f" at {d['api_base']}" if d["api_base"] else "")))
    if d["prompt_summary"] and d["kind"] != "ask":
        rows.append(("prompt", d["prompt_summary"]))
    tokens = d["tokens"]
    if any(v is not None for v in tokens.values()):
        parts = []
        if tokens["prompt"] is not None:
            parts.append(f"prompt {tokens['prompt']}")
        if tokens["prompt_estimate"] is not None:
            budget = f" of a {tokens['budget']} budget" if tokens["budget"] is not None else ""
            parts.append(f"estimated {tokens['prompt_estimate']}{budget}")
        if tokens["completion"] is not None:
            parts.append(f"completion {tokens['completion']}")
        rows.append(("tokens", ", ".join(parts)))
    timings = d["timings"]
    if timings["seconds"] is not None:
        first = timings["first_token_seconds"]
        rows.append(
            (
                "time taken",
                f"{timings['seconds']:.2f} s"
                + (f" (first token after {first:.2f} s)" if first is not None else ""),
            )
        )
    if d["hydrated"]:
        rows.append(("hydrated", ", ".join(str(h.get("entity", h)) for h in d["hydrated"])))
    for label, value in rows:
        con.print(f"  {label:<11}{escape(str(value))}")
    if d["files"]:
        con.print(f"\n[bold]Files[/] ({len(d['files'])})")
        for f in d["files"][:LIST_LIMIT]:
            what = "deleted" if f["deleted"] else f"snapshot {short(f['snapshot'])}"
            if f["left"]:
                what = "record left the State Map (a file and a directory of one name)"
            con.print(f"  {escape(f['path'])}  [dim]{what}[/]")
        _more(len(d["files"]))
    if d["transitions"]:
        con.print(f"\n[bold]Transitions[/] ({len(d['transitions'])})")
        for t in d["transitions"][:LIST_LIMIT]:
            arrow = f"{t['from'] or '—'} → {t['to']}"
            con.print(
                f"  {escape(t['entity'])}  {arrow}  [dim]{short(t['artifact'])}"
                f"  {escape(t['reason'])}[/]"
            )
        _more(len(d["transitions"]))
    if d["proposals"]:
        con.print(f"\n[bold]Proposals[/] ({len(d['proposals'])})")
        for p in d["proposals"]:
            _render_proposal(p)
    for r in d["refused"]:
        con.print(f"  [red]refused[/] {escape(str(r.get('path')))}: {escape(str(r.get('reason')))}")
    extra = [a for a in d["attachments"] if a != "episode.json"]
    if extra:
        con.print(
            f"\n[dim]stored with it: {', '.join(extra)}"
            f"  (tm show {d['episode']} --messages | --response | --prompt)[/]"
        )


def _more(total: int) -> None:
    if total > LIST_LIMIT:
        out().print(f"  [dim]… and {total - LIST_LIMIT} more (--json lists them all)[/]")


def _render_proposal(p: dict[str, Any]) -> None:
    con = out()
    if p["missing"]:
        con.print(f"  {p['id']}  [red]its record is missing[/]")
        return
    ents = ", ".join(f"{e['op']} {e['symbol']}" for e in p["entities"]) or "-"
    con.print(
        f"  [bold]{p['id']}[/]  {escape(str(p['path'] or '?'))}  {escape(ents)}"
        f"  [dim]{p['kind']}, {p['confidence']}, {p['status']}[/]"
    )
    if p["reason"]:
        con.print(f"    reason  {escape(p['reason'])}")
    if p["round"]:
        con.print(
            f"    round   {p['round']} (repair), answering {p['repairs'] or 'a refused block'}"
        )
    if p["superseded_by"]:
        con.print(f"    repaired by {', '.join(p['superseded_by'])} in a later round")
    gates = p["gates_now"]
    if isinstance(gates, list):
        for g in gates:
            mark = "[green]pass[/]" if g.get("ok") else "[red]FAIL[/]"
            detail = str(g.get("detail"))
            note = "" if detail == "pass" else f"  [dim]{escape(detail)}[/]"
            con.print(f"    gate {g.get('gate')}  {mark}{note}")
    else:
        for gate, result in p["gates"].items():
            mark = "[green]pass[/]" if result == "pass" else escape(result)
            con.print(f"    gate {gate}  {mark}")
    for line in diff_markup(p["diff"]):
        con.print(f"    {line}")


# ----------------------------------------------------------------------------------- blame


def blame_cmd(
    file: str = typer.Argument(..., help="A file of the work tree.", metavar="FILE"),
    lines: str = typer.Option(
        None, "-L", metavar="START,END", help="Only these lines (END may be +COUNT or empty)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Which episode introduced each line of FILE as it is in the work tree.

    `import` for the baseline, `user` for adopted edits, the model and the prompt for accepted
    proposals. Lines that differ from the State Map (hand edits not yet adopted) are STALE and
    attributed to no one.
    """
    from tinymem.blame import blame, parse_range
    from tinymem.sync import open_synced

    repo = open_synced()
    start, end = parse_range(lines) if lines else (1, None)
    result = blame(repo, repo.rel(file), start, end)
    if as_json:
        emit_json(result.to_json())
        return
    page()
    width = len(str(result.lines[-1].line)) if result.lines else 1
    # Built as plain text and styled only on a terminal: rich's markup parsing would cost more
    # than the blame itself on a big file piped to a pager or grep.
    styled = stdout_styled()
    rows: list[str] = []
    for ln in result.lines:
        text = escape(ln.text) if styled else ln.text
        if ln.by is None:
            stale = "[bold red]STALE[/]" if styled else "STALE"
            who = f"{stale}        {'(not adopted)':<20} {'':<10}"
        else:
            author = ln.by.origin.author
            author = author if len(author) <= 20 or not styled else author[:19] + "…"
            commit = f"[yellow]{short(ln.by.commit)}[/]" if styled else short(ln.by.commit)
            who = f"{commit} {escape(author) if styled else author:<20} {ln.by.time[:10]}"
        rows.append(f"{who} {ln.line:>{width}}) {text}")
    if result.stale_lines:
        rows.append(
            f"{result.stale_lines} STALE line(s): the work tree differs from the State Map"
            f" there; `tm adopt {escape(result.path) if styled else result.path}` records them"
            " as yours"
        )
    write_rows(rows, styled)


# ---------------------------------------------------------------------------------- doctor


def doctor_cmd(
    model: bool = typer.Option(
        False, "--model", help="Also send a tiny request to the model endpoint (5 s timeout)."
    ),
    api_base: str = typer.Option(
        None, "--api-base", help="Endpoint to use for this check.", metavar="URL"
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Check the repository, tm's refs and ledger, the vault, the grammars, the hook and the
    configuration; report each problem once with its fix. Exit 1 when anything is wrong.

    Never fixes anything and never calls a model unless --model is given. API keys are shown
    only as set or not set.
    """
    from tinymem.doctor import FAIL, OK, SKIP, WARN, doctor

    report = doctor(model=model, flags={"apiBase": api_base})
    if as_json:
        emit_json(report.to_json())
    else:
        con = out()
        marks = {
            OK: "[green]ok  [/]",
            WARN: "[yellow]warn[/]",
            FAIL: "[bold red]FAIL[/]",
            SKIP: "[dim]skip[/]",
        }
        for f in report.findings:
            con.print(f"{marks[f.status]}  {f.check:<11} {escape(f.message)}")
            if f.status in (FAIL, WARN):
                for detail in f.details[:10]:
                    con.print(f"      [dim]{escape(detail)}[/]")
                if len(f.details) > 10:
                    con.print(f"      [dim]… and {len(f.details) - 10} more[/]")
                if f.fix:
                    con.print(f"      fix: {escape(f.fix)}")
            elif f.check in ("config", "api keys"):
                for detail in f.details:
                    con.print(f"      [dim]{escape(detail)}[/]")
        n, w = len(report.problems), len(report.warnings)
        if n:
            con.print(f"\n[bold red]{n} problem(s)[/], {w} warning(s).")
        else:
            con.print(f"\nNo problems found ({w} warning(s)).")
    if not report.ok:
        raise typer.Exit(EXIT_CHECK_FAILED)


# ---------------------------------------------------------------------------------- config


def config_cmd(
    key: str = typer.Argument(
        None, help="A setting: model, apiBase, budget, context, …", metavar="[KEY]"
    ),
    value: str = typer.Argument(
        None, help="Set KEY to this value in git config.", metavar="[VALUE]"
    ),
    global_: bool = typer.Option(
        False, "--global", help="Write the user's global git config instead of the repository's."
    ),
    unset: bool = typer.Option(
        False, "--unset", help="Remove KEY from the git config (with --global: the user's)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Show the effective configuration and where each value comes from, set or unset a value.

    Precedence: flag > TM_* environment > repository git config > global git config > default.
    Values are stored as tinymem.KEY in git config. API keys are never stored: export the
    provider's environment variable instead.
    """
    from tinymem import config as cfg
    from tinymem.config import find_setting, unset_setting, write_setting
    from tinymem.errors import TinymemError, UsageError
    from tinymem.repository import Repo, open_repo

    repo: Repo | None
    try:
        repo = open_repo()  # settings only: the State Map is not read
    except TinymemError:
        repo = None  # outside a repository: the global config and defaults still apply
    if unset:
        if key is None or value is not None:
            raise UsageError("--unset takes one KEY: tm config --unset KEY")
        removed = unset_setting(repo, key, global_=global_)
        if as_json:
            emit_json(
                {
                    "key": removed.key,
                    "scope": removed.scope,
                    "file": removed.path,
                    "removed": removed.removed,
                }
            )
            return
        if removed.removed:
            out().print(f"tinymem.{removed.key} unset  ({removed.scope}: {removed.path})")
        else:
            out().print(f"tinymem.{removed.key} was not set in the {removed.scope} config")
        return
    if value is not None:
        written = write_setting(repo, key, value, global_=global_)
        # A secret is not echoed into the terminal's scrollback or a script's log.
        shown = "(hidden)" if written.key == cfg.SERVE_TOKEN.key else written.value
        if as_json:
            emit_json(
                {
                    "key": written.key,
                    "value": shown,
                    "scope": written.scope,
                    "file": written.path,
                    "overridden_by": written.overridden_by,
                }
            )
            return
        out().print(f"tinymem.{written.key} = {escape(shown)}  ({written.scope}: {written.path})")
        if written.overridden_by:
            out().print(
                f"note: {written.overridden_by} is set in the environment and wins over this"
            )
        return
    if global_:
        raise UsageError("--global applies when setting a value: tm config --global KEY VALUE")
    values = cfg.resolve(repo.git if repo is not None else None)
    settings = {s.key: s for s in cfg.SETTINGS}
    if key is not None:
        s = find_setting(key)
        if s is cfg.SERVE_TOKEN:
            raise UsageError(
                "tm never prints serveToken (a secret); `git config tinymem.serveToken` shows it"
            )
        v = values[s.key]
        if as_json:
            emit_json(_setting_json(s, v))
            return
        if v.value is None:
            raise typer.Exit(EXIT_CHECK_FAILED)  # like `git config KEY` for an unset key
        sys.stdout.write(v.value + "\n")
        return
    if as_json:
        emit_json({"settings": [_setting_json(settings[k], v) for k, v in values.items()]})
        return
    con = out()
    width = max(len(k) for k in values)
    for k, v in values.items():
        shown = v.value if v.value is not None else "(not set)"
        con.print(
            f"{k:<{width}}  {escape(shown)}  [dim]({v.source}; {settings[k].env};"
            f" {escape(settings[k].help)})[/]"
        )


def _setting_json(s: Any, v: Any) -> dict[str, Any]:
    return {
        "key": s.key,
        "value": v.value,
        "source": v.source,
        "env": s.env,
        "default": s.default,
        "help": s.help,
    }
