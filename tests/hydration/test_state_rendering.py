"""While the rendered state does not fit, the least relevant entity is dropped and the
section rendered again: only the file that lost it is rendered again (#29)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import PY_APP, git, tm, write
from tinymem.ask import AskOptions, prepare
from tinymem.hydration import hydrate
from tinymem.ledger import current
from tinymem.repository import open_repo
from tinymem.statemap import StateView


def test_each_file_part_is_rendered_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for f in range(3):
        body = "".join(
            f"    def keep{i}(self):\n        return {i}\n\n"
            f"    def other{i}(self):\n        return -{i}\n\n"
            for i in range(30)
        )
        write(repo, f"mod{f}.py", f"class Box{f}:\n{body}")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    assert tm(repo, "init").returncode == 0
    named = " ".join(f"Box{f}.keep{i}" for f in range(3) for i in range(1, 13))
    rendered: Counter[tuple[str, tuple[str, ...]]] = Counter()
    original = hydrate.file_part

    def counting(
        path: str,
        language: str | None,
        data: bytes,
        spans: list[tuple[int, int]],
        keys: list[str],
        *rest: str | None,
    ) -> str:
        rendered[(path, tuple(keys))] += 1
        return original(path, language, data, spans, keys, *rest)

    monkeypatch.setattr(hydrate, "file_part", counting)
    prep = prepare(open_repo(str(repo)), AskOptions(f"change {named}", flags={"budget": "900"}))
    shown = {h["entity"].partition("::")[0] for h in prep.hydration.hydrated}
    assert len(shown) == 3  # three files shown
    assert len(rendered) > len(shown)  # the section was rendered again, smaller
    assert set(rendered.values()) == {1}


def test_a_shown_file_is_read_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo, "app.py", PY_APP)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    assert tm(repo, "init").returncode == 0
    store = open_repo(str(repo))
    meta = current(store).meta("app.py")
    assert meta is not None
    prepare(store, AskOptions("fix Client.get"))  # the relevance index is built
    reads: Counter[str] = Counter()
    original = StateView.blob

    def counting(self: StateView, oid: str) -> bytes:
        reads[oid] += 1
        return original(self, oid)

    monkeypatch.setattr(StateView, "blob", counting)
    monkeypatch.setattr(hydrate, "_READ", {})  # a new process: no file record kept yet
    prep = prepare(store, AskOptions("fix Client.get"))
    assert prep.hydration.hydrated
    assert reads[meta.snapshot] == 1  # by the candidates, not again to render them
