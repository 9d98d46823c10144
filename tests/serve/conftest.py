"""The `served` fixture: a real `tm serve` in a repository with tm initialised."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modelserver import ModelServer
from tests.serve.served import Served, init, reap, start, stop


@pytest.fixture
def served(repo: Path, server: ModelServer) -> Iterator[Served]:
    init(repo)
    s = start(repo, server)
    yield s
    stop(s)


@pytest.fixture(autouse=True)
def _reaped() -> Iterator[None]:
    """No `tm serve` outlives its test, even one whose test failed before stopping it."""
    yield
    reap()
