"""`tm config --unset KEY`, and an apiBase that is no URL refused when set."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, tm


def test_unset_removes_the_repository_setting(repo: Path) -> None:
    assert tm(repo, "config", "model", "openai/local").returncode == 0
    proc = tm(repo, "config", "--unset", "model")
    assert proc.returncode == 0, proc.stderr
    assert "tinymem.model unset" in proc.stdout
    assert git(repo, "config", "--local", "--get", "tinymem.model", check=False) == ""
    doc = json.loads(tm(repo, "config", "model", "--json").stdout)
    assert doc["source"] == "default"
    proc = tm(repo, "config", "--unset", "model", "--json")
    assert json.loads(proc.stdout)["removed"] is False
    assert tm(repo, "config", "--unset").returncode == 2


def test_unset_global_leaves_the_repository_alone(repo: Path) -> None:
    assert tm(repo, "config", "--global", "budget", "3000").returncode == 0
    assert tm(repo, "config", "budget", "2000").returncode == 0
    assert tm(repo, "config", "--unset", "--global", "budget").returncode == 0
    assert tm(repo, "config", "budget").stdout == "2000\n"
    assert tm(repo, "config", "--unset", "budget").returncode == 0
    assert json.loads(tm(repo, "config", "budget", "--json").stdout)["source"] == "default"


def test_api_base_that_is_no_url_is_refused(repo: Path) -> None:
    for bad in ("notaurl", "localhost:11434", "http://", "ftp://host/x", "http://h:port"):
        proc = tm(repo, "config", "apiBase", bad)
        assert proc.returncode == 2, (bad, proc.stderr)
        assert "apiBase must be a URL" in proc.stderr
    assert git(repo, "config", "--get", "tinymem.apiBase", check=False) == ""
    assert tm(repo, "config", "apiBase", "http://localhost:11434").returncode == 0
