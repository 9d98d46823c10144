"""The DELETE directive: the way a reply deletes code it shows as whole definitions.

Deletion is never inferred from an omission: an explicit directive line outside fences,
``DELETE: path::Symbol`` or ``DELETE: path`` (keyword case-insensitive, optionally bold or in
backticks, optionally a list item), is a deletion; so is a diff or SEARCH/REPLACE block whose
lines remove a definition (it names what goes line by line, `changes.py`). Either needs
`tm accept --allow-delete`, nothing more. See `DELETE_DIRECTIVE_HELP`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DELETE_DIRECTIVE_HELP", "DELETE_RE", "DeleteDirective", "delete_target"]


@dataclass(frozen=True, slots=True)
class DeleteDirective:
    target: str  # "path::Symbol" or "path" (whole file), as written
    line: int  # 1-based line in the reply


# The example deliberately avoids `path/to/file.py`: models copy example paths from prompts.
DELETE_DIRECTIVE_HELP = (
    "To delete code, write a line of its own outside any code block, exactly like "
    "`DELETE: src/app.py::parse_args` (a function or class), `DELETE: src/app.py::Parser.parse` "
    "(a method) or `DELETE: src/app.py` (the whole file): one line per deletion, with the real "
    "repository path."
)


_BOLD = r"(?:\*{1,2}|_{2})"
DELETE_RE = re.compile(
    r"^[ \t]{0,3}(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?"
    rf"(?:(?:{_BOLD}|`)[ \t]*)?DELETE[ \t]*(?:{_BOLD}[ \t]*)?:[ \t]*(?:{_BOLD}[ \t]*)?"
    rf"`?(?P<target>[^\s`*]+)`?[ \t]*(?:{_BOLD}|`)?[ \t]*$",
    re.I,
)


def delete_target(line: str) -> str | None:
    match = DELETE_RE.match(line)
    if match is None:
        return None
    target = match["target"].rstrip(".,;")
    path, sep, symbol = target.partition("::")
    # `DELETE: a.py::` must not silently become a whole-file deletion.
    if not path or path.endswith(":") or (sep and (not symbol or symbol.endswith(":"))):
        return None
    return target
