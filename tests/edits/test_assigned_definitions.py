"""Definitions by assignment in real JavaScript (express's `lib/response.js`: `res.location =
function location(url) {…}`) through `tm ask` → `tm accept` and the loopback model server:
indexed, shown to the model, and a reply rewriting or adding one lands in its place."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Initialise, tm, tm_ask
from tests.edits.realcorpus import CODE
from tests.modelserver import ModelServer

RESPONSE = (CODE / "express/lib/response.js").read_text()
PATH = "lib/response.js"
LOCATION = """res.location = function location(url) {
  return this.set('Location', encodeUrl(url));
};
"""
NEW_LOCATION = """res.location = function location(url) {
  if (!url) {
    throw new TypeError('res.location: url is required');
  }
  return this.set('Location', encodeUrl(url));
};
"""
NO_CACHE = """res.noCache = function noCache() {
  return this.set('Cache-Control', 'no-store');
};
"""
RENDER_END = """  app.render(view, opts, done);
};
"""


FILES = {PATH: RESPONSE}


def test_every_assigned_method_is_an_entity(repo: Path, initialised: Initialise) -> None:
    initialised(FILES)
    state = json.loads(tm(repo, "state", "--json").stdout)
    names = {e["entity"] for e in state["entities"] if e["entity"].startswith(PATH + "::")}
    assigned = {n for n in names if n.startswith(f"{PATH}::res.")}
    assert len(assigned) == 22
    assert f"{PATH}::res.location" in assigned


def test_a_reply_rewriting_one_is_placed_in_it(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    server.add(f"Here it is:\n\n```javascript\n// {PATH}\n{NEW_LOCATION}```\n")
    proc = tm_ask(repo, server, "res.location should refuse an empty url", "--json")
    assert proc.returncode == 0, proc.stderr
    # The prompt showed the model that very definition.
    sent = json.dumps(server.chat_requests[-1].body["messages"])
    assert json.dumps(LOCATION.rstrip("\n"))[1:-1] in sent
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert prop["gates"]["A"] == "pass", prop
    assert [(e["symbol"], e["op"]) for e in prop["entities"]] == [("res.location", "modify")]
    accepted = tm(repo, "accept", prop["id"])
    assert accepted.returncode == 0, accepted.stderr
    assert (repo / PATH).read_text() == RESPONSE.replace(LOCATION, NEW_LOCATION)
    assert tm(repo, "status", "--check").returncode == 0


def test_a_new_one_is_added_after_the_last(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    server.add(f"```js\n// {PATH}\n{NO_CACHE}```\n")
    proc = tm_ask(repo, server, "add res.noCache that sets Cache-Control to no-store", "--json")
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert [(e["symbol"], e["op"]) for e in prop["entities"]] == [("res.noCache", "add")]
    accepted = tm(repo, "accept", prop["id"])
    assert accepted.returncode == 0, accepted.stderr
    # After the last `res.` definition, before the file's private helpers.
    assert (repo / PATH).read_text() == RESPONSE.replace(RENDER_END, RENDER_END + "\n" + NO_CACHE)
    state = json.loads(tm(repo, "state", "--json").stdout)
    assert f"{PATH}::res.noCache" in {e["entity"] for e in state["entities"]}
