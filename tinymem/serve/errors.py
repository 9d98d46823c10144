"""tm's errors as OpenAI-style error objects with a fitting HTTP status."""

from __future__ import annotations

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

__all__ = ["error_body", "status_for"]


def status_for(exc: TinymemError) -> int:
    if isinstance(exc, ModelNotFoundError):
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
