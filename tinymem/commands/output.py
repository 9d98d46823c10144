"""Rendering shared by the commands: JSON to stdout, human text through rich."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

_out: Console | None = None
_err: Console | None = None


def out() -> Console:
    global _out
    if _out is None:
        _out = Console(highlight=False, soft_wrap=True)
    return _out


def err() -> Console:
    global _err
    if _err is None:
        _err = Console(stderr=True, highlight=False, soft_wrap=True)
    return _err


def emit_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def short(oid: str | None) -> str:
    return "-" if not oid else oid[:12]
