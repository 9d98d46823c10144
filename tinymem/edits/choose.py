"""Deciding between entities of one name (the same method in two classes, overloads, a
property's getter and setter) by evidence, in this order:

1. the block's own role (`roles.py`): a `@x.setter` is the setter, an `@overload` stub an
   overload, a definition without `@overload` the implementation. It comes first: the
   request's `Scaffold.static_folder` names the getter and the setter alike, and the prompt
   showing the getter does not make a setter the model wrote into one;
2. the qualified name in the request (`Session.send`);
3. the entity shown in this very prompt;
4. the block's own container header, exact or without generics, `where` clause and bases;
5. between members of one container only, the unchanged signature.

A step that would leave no candidate is skipped.
"""

from __future__ import annotations

from tinymem.edits.alignment import Evidence, FileView, header_key, plain, signature
from tinymem.edits.roles import by_role, role
from tinymem.edits.singletons import file_role
from tinymem.symbols import Symbol, language_for_path

__all__ = ["choose"]


def choose(
    candidates: list[Symbol],
    item_text: bytes,
    item_header: str | None,
    file: FileView,
    evidence: Evidence,
) -> list[Symbol]:
    """The candidates the evidence leaves (one when it decides)."""
    left = list(candidates)

    def narrow(keep: list[Symbol]) -> None:
        if keep and len(keep) < len(left):
            left[:] = keep

    language = language_for_path(file.path)
    if len(left) > 1:
        wanted = role(language, item_text)
        narrow(by_role(wanted, left, lambda c: file_role(file, c, wanted)))
    if len(left) > 1 and evidence.qualified:
        narrow(
            [
                c
                for c in left
                if any(
                    plain(c.name) == q or plain(c.name).endswith("." + q)
                    for q in evidence.qualified
                    if "." in q
                )
            ]
        )
    if len(left) > 1 and evidence.hydrated:
        narrow(
            [
                c
                for c in left
                if c.name in evidence.hydrated
                or any(c.name.startswith(h + ".") for h in evidence.hydrated)
            ]
        )
    if len(left) > 1 and item_header is not None:
        narrow([c for c in left if file.header_of(c) == item_header])
        # A model shortens headers: generics, a `where` clause, base classes left out.
        key = header_key(item_header)
        narrow([c for c in left if header_key(file.header_of(c) or "") == key])
    if len(left) > 1 and len({c.parent for c in left}) == 1:
        # Within one container only (overloads, a getter and its setter, one type's impl
        # blocks): an unchanged signature is no evidence of which class a method belongs to.
        wanted_signature = signature(item_text)
        narrow([c for c in left if signature(file.text(c)) == wanted_signature])
    return left
