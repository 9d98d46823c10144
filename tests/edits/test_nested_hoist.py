"""A function nested in another, moved out to the top level: the reply gives it and the
enclosing function without it (`hoists.py`). Given alone it is refused, naming the enclosing
function to ask for whole (`nested.py`); given with that whole function, the refusal was a
false block. Real click `utils.py`, real tree-sitter, and `tm ask` -> `tm accept` through the
loopback model server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Initialise, tm, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer
from tinymem.edits.align import align
from tinymem.edits.alignment import Evidence

UTILS = (CODE / "click/src/click/utils.py").read_bytes()
PATH = "src/click/utils.py"
WRAPPER = b"""def wrapper(func, *args, **kwargs):
    try:
        return func(*args, **kwargs)
    except Exception:
        pass
    return None
"""
SAFECALL = b'''def _safecall(func: t.Callable[P, R]) -> t.Callable[P, R | None]:
    """Wraps a function so that it swallows exceptions.

    :meta private:
    """
    return update_wrapper(functools.partial(wrapper, func), func)
'''
# `_safecall` changed another way, its nested wrapper still in it.
_AT = UTILS.index(b"def _safecall")
KEPT = UTILS[_AT : UTILS.index(b"\n\n\ndef ", _AT)]
KEPT = KEPT.replace(b"swallows exceptions.", b"swallows every exception.") + b"\n"


def _placed(block: bytes, evidence: Evidence) -> list[tuple[str, str]]:
    a = align(PATH, block, UTILS, evidence)
    assert a.blocked is None, a.blocked
    return sorted((t.name, t.op) for t in a.targets)


def test_a_nested_function_moved_out_in_the_block_of_its_enclosing_function_is_added() -> None:
    # Review (fb1): refused with "ask again for the whole of `_safecall`", which it gave.
    for block in (WRAPPER + b"\n\n" + SAFECALL, SAFECALL + b"\n\n" + WRAPPER):
        assert _placed(block, Evidence()) == [("_safecall", "modify"), ("wrapper", "add")]


def test_the_enclosing_function_in_another_block_of_the_reply_counts_as_well() -> None:
    assert _placed(WRAPPER, Evidence(blocks=(WRAPPER, SAFECALL))) == [("wrapper", "add")]
    # As the reply writes it: indented, with the class-less method reading alike.
    indented = b"".join(b"    " + line for line in SAFECALL.splitlines(True))
    assert _placed(WRAPPER, Evidence(blocks=(indented,))) == [("wrapper", "add")]


def test_a_nested_function_is_still_refused_when_its_enclosing_function_keeps_it() -> None:
    # The reply's `_safecall` still defines `wrapper`: the block is the nested one, alone.
    for evidence in (Evidence(), Evidence(blocks=(KEPT,))):
        a = align(PATH, WRAPPER, UTILS, evidence)
        assert a.targets == [] and a.blocked is not None
        assert "nested in `_safecall`" in a.blocked
    # Another function given without a `wrapper` says nothing of `_safecall`'s.
    other = b"def make_str(value: t.Any) -> str:\n    return str(value)\n"
    a = align(PATH, WRAPPER + b"\n\n" + other, UTILS, Evidence())
    assert a.blocked is not None and "nested in `_safecall`" in a.blocked


def _ask(repo: Path, server: ModelServer, reply: str) -> list[dict[str, object]]:
    server.add(reply)
    request = "move the nested wrapper in _safecall to module level"
    proc = tm_ask(repo, server, request, "--json", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    props = json.loads(proc.stdout)["proposals"]
    assert isinstance(props, list)
    return props


def _module_level(text: str) -> tuple[str, str]:
    """`wrapper`'s module-level definition and `_safecall` as the file now has them."""
    start = text.index("\ndef wrapper(") + 1
    wrapper = text[start : text.find("\n\n\n", start)]
    start = text.index("\ndef _safecall(") + 1
    return wrapper, text[start : text.find("\n\n\n", start)]


def test_a_hoist_in_one_block_is_written_by_ask_and_accept(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({PATH: UTILS})
    both = (WRAPPER + b"\n\n" + SAFECALL).decode()
    reply = f"{PATH}\n```python\n{both}```\n"
    (prop,) = _ask(repo, server, reply)
    gates = prop["gates"]
    assert isinstance(gates, dict) and gates["A"] == "pass", gates
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 0, proc.stderr
    wrapper, safecall = _module_level((repo / PATH).read_text())
    assert wrapper == WRAPPER.decode().rstrip("\n")
    assert safecall == SAFECALL.decode().rstrip("\n") and "def wrapper" not in safecall


def test_a_hoist_over_two_blocks_naming_the_file_is_written(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({PATH: UTILS})
    reply = (
        f"Move it out:\n\n{PATH}\n```python\n{WRAPPER.decode()}```\n\n"
        f"And update `_safecall` in {PATH}:\n\n```python\n# {PATH}\n{SAFECALL.decode()}```\n"
    )
    props = _ask(repo, server, reply)
    assert len(props) == 2
    for prop in props:
        gates = prop["gates"]
        assert isinstance(gates, dict) and gates["A"] == "pass", gates
    proc = tm(repo, "accept", *(str(p["id"]) for p in props))
    assert proc.returncode == 0, proc.stderr
    wrapper, safecall = _module_level((repo / PATH).read_text())
    assert wrapper == WRAPPER.decode().rstrip("\n") and "def wrapper" not in safecall


def test_the_enclosing_name_given_for_another_file_is_no_hoist(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # Another file's `_safecall` without a nested wrapper says nothing of utils.py's.
    initialised({PATH: UTILS, "src/click/other.py": "def _safecall(func):\n    return func\n"})
    reply = (
        f"{PATH}\n```python\n{WRAPPER.decode()}```\n\n"
        f"src/click/other.py\n```python\n{SAFECALL.decode()}```\n"
    )
    props = _ask(repo, server, reply)
    (mine,) = [p for p in props if p["path"] == PATH]
    gates = mine["gates"]
    assert isinstance(gates, dict) and "nested in `_safecall`" in str(gates["A"])
    assert tm(repo, "accept", str(mine["id"])).returncode == 5
    assert (repo / PATH).read_bytes() == UTILS
