"""One tree-sitter grammar, loaded without the others.

`tree_sitter_language_pack`'s package module imports three grammar packages (C#, YAML,
embedded templates) and ctypes whatever language is asked for: ~16 ms of a pre-commit hook
that parses one Python file. Its other grammars are extension modules in its `bindings/`
directory, each loadable alone; C# comes from its own package. Anything unexpected in that
layout falls back to the pack's `get_language`, so a new version of the pack costs time,
never a grammar.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
from functools import cache
from typing import Any, cast

from tree_sitter import Language

__all__ = ["load_language"]

_PACK = "tree_sitter_language_pack"
# Grammars the pack's get_language takes from a package of their own (see its get_binding).
_OWN_PACKAGES = {"csharp": "tree_sitter_c_sharp"}


@cache  # a Language is immutable; finding and loading its module again costs ~0.3 ms a call
def load_language(language: str) -> Language:
    """The tree-sitter Language named `language` (a name the pack knows)."""
    try:
        binding = _binding(language)
    except (ImportError, OSError, AttributeError):
        binding = None
    if binding is None:
        from tree_sitter_language_pack import get_language

        # The pack types its argument as a Literal of all its grammars.
        return get_language(cast("Any", language))
    return Language(binding)


def _binding(language: str) -> object | None:
    package = _OWN_PACKAGES.get(language)
    if package is not None:
        return cast("object", importlib.import_module(package).language())
    # find_spec of a top-level name locates the package without running its __init__.
    spec = importlib.util.find_spec(_PACK)
    if spec is None or not spec.submodule_search_locations:
        return None
    directory = os.path.join(next(iter(spec.submodule_search_locations)), "bindings")
    name = f"{_PACK}.bindings.{language}"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(directory, language + suffix)
        if os.path.isfile(path):
            loader = importlib.machinery.ExtensionFileLoader(name, path)
            module_spec = importlib.util.spec_from_file_location(name, path, loader=loader)
            if module_spec is None:
                return None
            module = importlib.util.module_from_spec(module_spec)
            loader.exec_module(module)
            return cast("object", module.language())
    return None
