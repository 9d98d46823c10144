"""A function the request is about that no budget room can hold: the user is told, instead of
the model answering from a signature in silence."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, tm, write


def _long_function(name: str, steps: int) -> str:
    body = "".join(f"    x = x + {i}  # step {i} of the long computation\n" for i in range(steps))
    return f"def {name}(x):\n{body}    return x\n"


def _project(repo: Path) -> Path:
    write(
        repo,
        "app.py",
        "def small():\n    return 1\n\n\n" + _long_function("big", 400),
    )
    write(
        repo,
        "shapes.py",
        "class Shape:\n"
        + "".join(
            f"    def area_{i}(self, x):\n        return x * {i} + {i} - len(str(x)) // 3\n\n"
            for i in range(120)
        ),
    )
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    assert tm(repo, "init").returncode == 0
    return repo


def _notices(proc_stderr: str) -> list[str]:
    return [ln for ln in proc_stderr.splitlines() if "larger than the room for code" in ln]


def test_named_function_larger_than_the_budget_is_reported(repo: Path) -> None:
    project = _project(repo)
    proc = tm(project, "ask", "fix big so it returns x times two", "--budget", "2000", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    (line,) = _notices(proc.stderr)
    assert line.startswith("tm: app.py::big (about ")
    assert "budget of 2,000 tokens" in line and "--budget" in line
    # What the notice says is what the prompt shows: the signature, not the body.
    assert "def big(x):" in proc.stdout and "step 399" not in proc.stdout
    proc = tm(project, "ask", "fix big", "--budget", "2000", "--dry-run", "--json")
    (found,) = json.loads(proc.stdout)["too_large"]
    assert found["entity"] == "app.py::big" and found["tokens"] > 2000


def test_no_notice_when_it_fits_or_is_not_the_subject(repo: Path) -> None:
    project = _project(repo)
    proc = tm(project, "ask", "fix big", "--budget", "20000", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert _notices(proc.stderr) == [] and "step 399" in proc.stdout
    proc = tm(project, "ask", "make small return 2", "--budget", "2000", "--dry-run")
    assert _notices(proc.stderr) == []


def test_a_large_class_whose_method_is_shown_is_not_reported(repo: Path) -> None:
    project = _project(repo)
    proc = tm(project, "ask", "fix Shape.area_7 for negative x", "--budget", "1500", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "def area_7(self, x):" in proc.stdout
    assert _notices(proc.stderr) == []


def test_a_large_file_given_with_f_has_its_own_notice_only(repo: Path) -> None:
    project = _project(repo)
    proc = tm(project, "ask", "fix big", "-f", "app.py", "--budget", "2000", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert _notices(proc.stderr) == []
    assert any("-f app.py" in ln for ln in proc.stderr.splitlines())
