"""The vocabulary of the State Map: states, confidence levels, sources, entity keys."""

from __future__ import annotations

from enum import StrEnum

# The symbol name of the one entity a file without symbols (Markdown, TOML, ...) is made of.
FILE_SYMBOL = "@file"
KEY_SEPARATOR = "::"


class State(StrEnum):
    PROPOSED = "PROPOSED"
    AUTHORITATIVE = "AUTHORITATIVE"
    SUPERSEDED = "SUPERSEDED"
    TOMBSTONED = "TOMBSTONED"


class Confidence(StrEnum):
    CONFIRMED = "CONFIRMED"
    INFERRED = "INFERRED"
    UNRESOLVED = "UNRESOLVED"


class Source(StrEnum):
    DISK = "disk"  # imported by `tm init`
    USER = "user"  # adopted by the user: the highest authority
    MODEL = "model"  # a promoted model proposal


def entity_key(path: str, symbol: str) -> str:
    return f"{path}{KEY_SEPARATOR}{symbol}"


def nested(a: str, b: str) -> bool:
    """One name is the other or holds it: `Cls` and `Cls.send`, `f.py::Cls` and
    `f.py::Cls.send` (symbols or entity keys alike)."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def split_key(key: str) -> tuple[str, str]:
    """`a/b.py::C.m` -> (`a/b.py`, `C.m`); a bare path means its file-level entity."""
    path, sep, symbol = key.partition(KEY_SEPARATOR)
    if not sep:
        return key, FILE_SYMBOL
    return path, symbol
