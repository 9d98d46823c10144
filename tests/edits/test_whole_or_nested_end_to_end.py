"""`tm ask` → `tm accept` through the loopback model server, for three replies that once
wrote wrong code with every gate passing: a snippet of a config file taken as the whole
file, a whole file that left out statements outside its definitions, and a nested function
given alone (added at the top level). Each is blocked with its reason; the file stays."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Initialise, tm, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer

PYPROJECT = (CODE / "click/pyproject.toml").read_text()
UTILS = (CODE / "click/src/click/utils.py").read_text()
SCAFFOLD = (CODE / "flask/src/flask/sansio/scaffold.py").read_text()
TOOL = '''"""Tool."""
import logging
import sys

logging.basicConfig(level=logging.INFO)


def main() -> None:
    print(sys.argv[1])


if __name__ == "__main__":
    main()
'''
TOOL_CUT = '''"""Tool."""
import logging
import sys


def main() -> None:
    print(sys.argv[1:])
'''


def _ask(repo: Path, server: ModelServer, reply: str, request: str) -> dict[str, object]:
    server.add(reply)
    proc = tm_ask(repo, server, request, "--json", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert isinstance(prop, dict)
    return prop


def test_a_config_snippet_is_not_written_as_the_whole_file(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"pyproject.toml": PYPROJECT})
    reply = (
        "To raise the line length, change `pyproject.toml`:\n\n"
        "```toml\n[tool.ruff]\nline-length = 120\n```\n"
    )
    prop = _ask(repo, server, reply, "raise ruff's line length to 120")
    gates = prop["gates"]
    assert isinstance(gates, dict) and "replaces the whole file" in gates["A"]
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 5
    assert "gate A" in proc.stderr and "SEARCH/REPLACE block or unified diff" in proc.stderr
    assert (repo / "pyproject.toml").read_text() == PYPROJECT


def test_statements_a_whole_file_leaves_out_need_allow_delete(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"tool.py": TOOL})
    reply = f"Here is the updated `tool.py`:\n\n```python\n{TOOL_CUT}```\n"
    prop = _ask(repo, server, reply, "print every argument in main")
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 5
    assert "outside every definition" in proc.stderr and "logging.basicConfig" in proc.stderr
    assert (repo / "tool.py").read_text() == TOOL
    # The user's explicit word removes them.
    proc = tm(repo, "accept", str(prop["id"]), "--allow-delete")
    assert proc.returncode == 0, proc.stderr
    assert (repo / "tool.py").read_text() == TOOL_CUT


def test_a_nested_function_alone_is_not_added_at_the_top_level(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"src/click/utils.py": UTILS})
    reply = (
        "In `src/click/utils.py`, change the wrapper in `_safecall` to log the exception:\n\n"
        "```python\ndef wrapper(*args: P.args, **kwargs: P.kwargs) -> R | None:\n"
        "    try:\n        return func(*args, **kwargs)\n    except Exception as e:\n"
        "        print(e)\n    return None\n```\n"
    )
    prop = _ask(repo, server, reply, "make _safecall's wrapper print the exception")
    assert prop["confidence"] == "UNRESOLVED"
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 5
    assert "nested in `_safecall`" in proc.stderr and "the whole of `_safecall`" in proc.stderr
    assert (repo / "src/click/utils.py").read_text() == UTILS


def test_a_nested_function_with_its_annotations_dropped_is_not_added_at_the_top_level(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # Its parameters were compared as text: `(f)` is not `(f: T_route)`, so the route's
    # decorator was appended to scaffold.py as a new module-level function.
    initialised({"src/flask/sansio/scaffold.py": SCAFFOLD})
    reply = (
        "In `src/flask/sansio/scaffold.py`, change the decorator in `Scaffold.route`:\n\n"
        "```python\n        def decorator(f):\n"
        '            endpoint = options.pop("endpoint", None) or f.__qualname__\n'
        "            self.add_url_rule(rule, endpoint, f, **options)\n"
        "            return f\n```\n"
    )
    request = "in Scaffold.route, default the endpoint to the view's qualified name"
    prop = _ask(repo, server, reply, request)
    assert prop["confidence"] == "UNRESOLVED"
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 5
    assert "nested in `Scaffold.route`" in proc.stderr
    assert "the whole of `Scaffold.route`" in proc.stderr
    assert (repo / "src/flask/sansio/scaffold.py").read_text() == SCAFFOLD


def test_a_repair_round_asks_for_the_function_around_the_nested_one(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised({"src/click/utils.py": UTILS})
    alone = (
        "```python path=src/click/utils.py\n"
        "def wrapper(*args: P.args, **kwargs: P.kwargs) -> R | None:\n"
        "    try:\n        return func(*args, **kwargs)\n    except Exception as e:\n"
        "        print(e)\n    return None\n```\n"
    )
    start = UTILS.index("def _safecall(")
    end = UTILS.index("\n\n\n", start)
    safecall = UTILS[start:end] + "\n"
    fixed = safecall.replace(
        "        except Exception:\n            pass\n",
        "        except Exception as e:\n            print(e)\n",
    )
    assert fixed != safecall
    server.add(alone, f"```python path=src/click/utils.py\n{fixed}```\n")
    proc = tm_ask(repo, server, "make _safecall's wrapper print the exception", "--json")
    assert proc.returncode == 0, proc.stderr
    followup = server.chat_requests[1].body["messages"][-1]["content"]
    # The model is told why and shown the function to give whole.
    assert "nested in `_safecall`" in followup and "def _safecall(" in followup
    props = json.loads(proc.stdout)["proposals"]
    placed = [p for p in props if p["gates"]["A"] == "pass"]
    assert [e["symbol"] for p in placed for e in p["entities"]] == ["_safecall"]
    assert tm(repo, "accept", placed[0]["id"]).returncode == 0
    assert (repo / "src/click/utils.py").read_text() == UTILS.replace(safecall, fixed)


def test_a_config_block_of_fewer_lines_needs_allow_delete(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # Review item 4: two of four requirements, given as the file, deleted the other two
    # (half the lines passed the D1 rule), and tm ask --accept wrote it.
    requirements = "flask==3.0.0\nrequests==2.31.0\ngunicorn==21.2.0\npsycopg2-binary==2.9.9\n"
    initialised({"requirements.txt": requirements})
    reply = "Update `requirements.txt`:\n\n```text\nflask==3.0.3\nclick==8.1.7\n```\n"
    server.add(reply)
    proc = tm_ask(repo, server, "pin flask 3.0.3 and add click", "--accept", "--repair", "0")
    assert proc.returncode == 0, proc.stderr
    assert (repo / "requirements.txt").read_text() == requirements
    prop = _ask(repo, server, reply, "pin flask 3.0.3 and add click")
    gates = prop["gates"]
    assert isinstance(gates, dict) and gates["B"] == "user accept with --allow-delete"
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 5
    assert "leaves out 4 lines of requirements.txt" in proc.stderr
    assert (repo / "requirements.txt").read_text() == requirements
    proc = tm(repo, "accept", str(prop["id"]), "--allow-delete")
    assert proc.returncode == 0, proc.stderr
    assert (repo / "requirements.txt").read_text() == "flask==3.0.3\nclick==8.1.7\n"
