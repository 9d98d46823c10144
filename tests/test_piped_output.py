"""Piped or redirected, read commands print complete records, one per line, like git."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Initialise, tm, tm_ask
from tests.modelserver import ModelServer

LONG_DIR = "src/requests_toolbelt/multipart/adapters/very_long_directory_name"
LONG = f"{LONG_DIR}/encoder_with_a_long_name.py"
CODE = (
    "class MultipartEncoderMonitorWithCallbacks:\n"
    "    def a_method_with_a_rather_long_descriptive_name(self):\n"
    "        return 1\n"
)


FILES = {LONG: CODE}


def test_state_piped_prints_every_key_whole(repo: Path, initialised: Initialise) -> None:
    initialised(FILES)
    proc = tm(repo, "state")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    keys = {line.split("\t")[0] for line in lines}
    expected = {e["entity"] for e in json.loads(tm(repo, "state", "--json").stdout)["entities"]}
    assert keys == expected
    assert all("…" not in line and "\x1b" not in line for line in lines)
    assert all(line.split("\t")[2] == "AUTHORITATIVE" for line in lines)


def test_log_and_proposals_piped_are_complete(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES)
    model = "openai/a-model-name-that-is-much-longer-than-any-column-would-allow"
    method = "    def a_method_with_a_rather_long_descriptive_name(self):\n        return 2\n"
    server.add(f"```python path={LONG}\n{method}```\n")
    proc = tm_ask(repo, server, "change the method", "-m", model)
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.count("\t") == 6)
    cells = row.split("\t")
    assert cells[1] == LONG
    assert cells[2] == (
        "modify MultipartEncoderMonitorWithCallbacks.a_method_with_a_rather_long_descriptive_name"
    )
    log = tm(repo, "log")
    assert model in log.stdout and "…" not in log.stdout
