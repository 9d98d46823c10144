"""Reading a ledger commit's trailers (`Tinymem-Head: <commit>`): apart from `ledger.py` so
that checking whether HEAD moved (every command, the pre-commit hook) does not load the
ledger's writing code."""

from __future__ import annotations

__all__ = ["message_trailer"]


def message_trailer(message: str, name: str) -> str | None:
    prefix = f"{name}: "
    for line in reversed(message.splitlines()):
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    return None
