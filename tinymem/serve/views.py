"""The read endpoints and `/v1/user/code`: each answers with the JSON of the matching
`--json` command (`tm state`, `tm note list`, `tm log`, `tm doctor`, `tm show`, `tm adopt`),
computed by the same core functions. Synchronous: `app.py` runs them in worker threads."""

from __future__ import annotations

import json
import os
from typing import Any

from tinymem import __version__
from tinymem import config as cfg
from tinymem.errors import UsageError
from tinymem.paths import names_directory, repo_relative
from tinymem.repository import Repo
from tinymem.serve.chat import ServeSettings
from tinymem.serve.errors import NotFound
from tinymem.sync import open_synced

__all__ = ["doctor", "episode", "health", "models", "notes", "recent", "state", "user_code"]

RECENT_DEFAULT = 20


def _model(settings: ServeSettings) -> str:
    repo = open_synced(settings.workdir)
    return cfg.resolve(repo.git, settings.flags)["model"].value or cfg.DEFAULT_MODEL


def health(settings: ServeSettings) -> dict[str, Any]:
    from tinymem.branches.refs import current_branch, state_ref

    repo = open_synced(settings.workdir)
    branch = current_branch(repo.git)
    return {
        "status": "ok",
        "version": __version__,
        "workdir": repo.workdir,
        "branch": branch,
        "state": None if branch is None else repo.state_tip(state_ref(branch)),
        "model": _model(settings),
    }


def models(settings: ServeSettings) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": _model(settings), "object": "model", "created": 0, "owned_by": "tinymem"}],
    }


def state(settings: ServeSettings) -> dict[str, Any]:
    """`tm state --json`, and the live notes as `tm note list --json` gives them."""
    from tinymem.statelist import state_rows

    repo = open_synced(settings.workdir)
    return {"entities": state_rows(repo), "notes": _notes(repo)}


def notes(settings: ServeSettings) -> dict[str, Any]:
    """As `tm note list --json`."""
    return {"notes": _notes(open_synced(settings.workdir))}


def _notes(repo: Repo) -> list[dict[str, Any]]:
    from tinymem.notes.listing import note_statuses

    return [s.to_json() for s in note_statuses(repo)]


def recent(settings: ServeSettings, limit: str | None) -> list[dict[str, Any]]:
    from tinymem.auditlog import log
    from tinymem.ledger import current

    try:
        count = RECENT_DEFAULT if limit is None else int(limit)
    except ValueError:
        raise UsageError(f"limit must be a whole number, got {limit!r}") from None
    if count < 0:  # checked here: the core's own message names `tm log`'s -n
        raise UsageError(f"limit must be zero or more, got {count}")
    repo = open_synced(settings.workdir)
    current(repo)
    return log(repo, None, limit=count)


def doctor(settings: ServeSettings) -> dict[str, Any]:
    from tinymem.doctor import doctor as run

    return run(settings.workdir, flags=settings.flags).to_json()


def episode(settings: ServeSettings, ref: str) -> dict[str, Any]:
    """`tm show ID --json`, with `messages`: the exact messages sent (null for episodes that
    called no model)."""
    from tinymem.auditlog import attachment, show

    repo = open_synced(settings.workdir)
    try:
        doc = show(repo, ref)
    except UsageError as exc:
        raise _missing(repo, ref, exc) from None
    doc["messages"] = None
    if "messages.json" in doc["attachments"]:
        doc["messages"] = json.loads(attachment(repo, ref, "messages"))
    return doc


def _missing(repo: Repo, ref: str, exc: UsageError) -> UsageError:
    """`tm show`'s refusal of `ref` as NotFound (404) when no episode matches it; an empty or
    ambiguous id stays a bad request (400). Looked at only once show has refused."""
    from tinymem.ledger import history, never

    wanted = ref.strip().lower()
    named = bool(wanted) and any(
        cid.startswith(wanted) or ep.id.startswith(wanted)
        for cid, ep in history(repo, first_parent=False, read=never)
    )
    return exc if named or not wanted else NotFound(str(exc))


def user_code(settings: ServeSettings, body: Any) -> dict[str, Any]:
    """The user's own text for a file: written and AUTHORITATIVE at once (`tm adopt --path`)."""
    from tinymem.adopt import adopt_content

    if not isinstance(body, dict):
        raise UsageError('the request needs a JSON body {"path": ..., "content": ...}')
    path, content = body.get("path"), body.get("content")
    if not isinstance(path, str) or not path.strip() or not isinstance(content, str):
        raise UsageError('the request needs a JSON body {"path": ..., "content": ...}')
    if names_directory(path):
        # As `tm adopt --path` refuses it: normalised away, `src/app.py/` would write a file.
        raise UsageError(f"path must name a file; {path!r} names a directory")
    repo = open_synced(settings.workdir)
    rel = repo_relative(repo.workdir, path)  # refuses `..`, absolute paths, `.git/`
    result = adopt_content(repo, os.path.join(repo.workdir, rel), content.encode())
    return result.to_json()
