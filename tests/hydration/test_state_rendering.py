"""While the rendered state does not fit, the least relevant entity is dropped and the
section rendered again: only the file that lost it is rendered again (#29)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import git, tm, write
from tinymem.ask import AskOptions, prepare
from tinymem.hydration import hydrate
from tinymem.repository import open_repo


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
