"""Splice proposed symbols into a file: pure functions, bytes in, bytes out, no I/O, no git.

`tm accept` uses this to write a proposal into the user's file without touching anything the
proposal did not name. The one property everything here serves: every byte outside the spans
that are replaced or inserted stays exactly as it was (comments, formatting, other symbols,
trailing whitespace, a BOM, the final newline or its absence, the line-ending convention).

How a proposed symbol is placed (`splice`):
- Existing name (the same qualified name in `extract(path, original)`): its byte span
  [start, end) is replaced by the new text, re-indented to the original's indentation and
  converted to the file's line endings.
- New name `P.leaf` whose container `P` exists: inside `P`, after its last member (with that
  member's indentation and the blank-line gap used between `P`'s members), or at the end of
  `P`'s body when it has no member yet (Python: after the last statement of the class body;
  brace languages: before the closing `}`). Go methods (and C++ out-of-line definitions) are
  top-level items: they go after the last top-level item of `P`, or, when `P`'s definitions
  sit in a namespace block (`geo.Square.perimeter`), after the last of them inside it. Rust
  members go into the `impl` block whose header the model wrote (`impl Display for S { fn fmt
  … }`), else into the last inherent `impl P`, else into a new `impl P { … }` after `P`.
- New top-level name: after `Replacement.after` when it names a symbol of the file, else after
  the file's last top-level definition (so a trailing `if __name__ == "__main__":` block or
  `module.exports = …` stays last; "end of file" when nothing follows), separated by the
  blank-line gap the file uses between top-level definitions (default: 2 in Python, 1 elsewhere).

A replacement for a container and one for its own member in the same call: the container's
text wins, the member's text is dropped. The member is reported in `replaced` (placement
"contained in the replacement of C") when the container's new text still defines it, else in
`removed`. A new member of a container replaced or added in the same call is spliced into the
container's new text (or, when that text already defines it, reported as contained).

Safety checks after splicing (any failure raises SpliceError and nothing is returned):
the result parses cleanly when the original did (tree-sitter, and for Python also the
interpreter's own parser, since tree-sitter-python accepts empty blocks and bad indentation);
each proposed name is defined inside the region its text went to; no other symbol appears (a
text that also defines a helper, or a renamed definition, is refused rather than spliced);
every symbol outside the edited regions keeps its name and its exact bytes.

Re-indentation: the new text's first line sets its base indentation; every line is shifted
from that base to the target's, except blank lines (kept as they are) and lines that start
inside a multi-line string literal (their leading whitespace is part of the value; Python
docstrings are re-indented with the code). Line breaks become the file's (CRLF when most of
its line breaks are).
"""

from __future__ import annotations

from tinymem.edits.splice.delete import delete_symbols
from tinymem.edits.splice.model import Replacement, SpliceError, SpliceResult
from tinymem.edits.splice.splicer import splice
from tinymem.edits.splice.wholefile import in_file_form, whole_file_symbols

__all__ = [
    "Replacement",
    "SpliceError",
    "SpliceResult",
    "delete_symbols",
    "in_file_form",
    "splice",
    "whole_file_symbols",
]
