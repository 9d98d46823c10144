"""`tm serve`."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_cmd)


def serve_cmd(
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on (loopback).", metavar="HOST"
    ),
    port: int = typer.Option(
        4321,
        "--port",
        min=0,
        max=65535,
        help="Port to listen on (0: any free one).",
        metavar="PORT",
    ),
    token: str = typer.Option(
        None,
        "--token",
        help="Bearer token every request must carry (needed off loopback; or TM_SERVE_TOKEN,"
        " tinymem.serveToken).",
        metavar="TOKEN",
    ),
    model: str = typer.Option(
        None, "--model", "-m", help="litellm model (as for tm ask).", metavar="MODEL"
    ),
    api_base: str = typer.Option(
        None, "--api-base", help="Endpoint URL of the model server.", metavar="URL"
    ),
    budget: int = typer.Option(None, "--budget", help="Prompt token budget.", metavar="TOKENS"),
    timeout: int = typer.Option(
        None, "--timeout", help="Seconds to wait for the model.", metavar="SECONDS"
    ),
    accept: bool = typer.Option(
        False,
        "--accept",
        help="Apply right away the proposals whose targets were hydrated in that very request"
        " and that pass every gate (Gate B), as tm ask --accept does.",
    ),
    no_trailer: bool = typer.Option(
        False, "--no-trailer", help="Do not add the one-line note of proposals to replies."
    ),
) -> None:
    """Serve tm's memory and gates as an OpenAI-compatible endpoint for editors and agents.

    Point any OpenAI client at http://HOST:PORT/v1: every chat request is hydrated from the
    State Map (tm's context goes in front of the client's messages), sent through the same
    model settings as tm ask, streamed back as it arrives, and recorded as one ask episode
    whose code blocks become gated proposals. Also: /v1/models, /v1/user/code (adopt),
    /health, /doctor, /state, /recent, /episodes/ID. On loopback it refuses requests from web
    pages (a Host or Origin that is not loopback); POST bodies must be application/json.
    Ctrl-C (or SIGTERM) stops it: new requests then get 503, and the requests in flight are
    finished, answered and recorded first; a second Ctrl-C stops at once. A request whose
    body has not all arrived 30 s after its headers is answered 408 (TM_SERVE_BODY_TIMEOUT
    sets the seconds), and a streamed reply its client takes nothing of for 30 s is cut off
    (TM_SERVE_WRITE_TIMEOUT), its episode recorded.
    """
    from tinymem import config as cfg
    from tinymem.commands.ask import model_flags
    from tinymem.errors import UsageError
    from tinymem.ledger import current
    from tinymem.serve.app import make_app
    from tinymem.serve.chat import ServeSettings
    from tinymem.serve.guard import Access, is_loopback
    from tinymem.serve.lifecycle import run
    from tinymem.sync import open_synced

    repo = open_synced()
    current(repo)  # refuse to start in a repository without tm
    secret = cfg.serve_token(repo.git, token)
    loopback = is_loopback(host)
    if not loopback and not secret:
        raise UsageError(
            f"listening on {host} lets other machines use your model and repository; set a"
            " bearer token with --token (or TM_SERVE_TOKEN / tinymem.serveToken)"
        )
    flags = model_flags(model, api_base, budget, timeout)
    values = cfg.resolve(repo.git, flags)
    shown = values["model"].value or cfg.DEFAULT_MODEL
    settings = ServeSettings(repo.workdir, flags, accept=accept, trailer=not no_trailer)
    app = make_app(settings, Access(loopback=loopback, token=secret or ""))

    # litellm costs ~2.5 s to import: pay it now, not in the first request.
    import threading

    from tinymem.serve.memory import preload, settle
    from tinymem.treewatch import watch

    settle()  # before the first thread
    watch(repo.workdir)  # ETV then looks only at what changed since the last request
    threading.Thread(target=preload, daemon=True).start()
    where = f"[{host}]" if ":" in host and not host.startswith("[") else host

    def announce(bound: int) -> str:
        return (
            f"tm serve: http://{where}:{bound}/v1 for {repo.workdir} (model {shown}"
            f"{', token required' if secret else ''}); Ctrl-C stops"
        )

    run(app, host, port, announce)
