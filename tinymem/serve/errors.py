"""tm's errors as OpenAI-style error objects with a fitting HTTP status."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

from tinymem.errors import (
    ConcurrencyError,
    ModelError,
    ModelNotFoundError,
    ModelTimeoutError,
    NoBranchError,
    NotInitializedError,
    TinymemError,
    UnsafePathError,
    UsageError,
)

__all__ = ["NotFound", "error_body", "internal_error", "status_for"]


class NotFound(UsageError):
    """What the request names (an episode) does not exist: HTTP 404, not a malformed 400."""


def status_for(exc: TinymemError) -> int:
    if isinstance(exc, (NotFound, ModelNotFoundError)):
        return 404
    if isinstance(exc, ModelTimeoutError):
        return 504
    if isinstance(exc, ModelError):
        return 502  # the model endpoint, behind tm, failed
    if isinstance(exc, (UsageError, UnsafePathError)):
        return 400
    if isinstance(exc, ConcurrencyError):
        return 503
    if isinstance(exc, (NotInitializedError, NoBranchError)):
        return 409  # the repository is not in a state tm can serve from
    return 500


def error_body(message: str, status: int, code: str | None = None) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def internal_error(exc: BaseException) -> str:
    """A bug in tm met while answering: one sentence for the client, the same on the server's
    stderr (the traceback with TM_DEBUG=1), as the command line does."""
    if os.environ.get("TM_DEBUG"):
        traceback.print_exception(exc, file=sys.stderr)
    message = f"internal error ({type(exc).__name__}: {exc}); please report it"
    print(f"tm serve: {message}, TM_DEBUG=1 shows the traceback", file=sys.stderr, flush=True)
    return message
