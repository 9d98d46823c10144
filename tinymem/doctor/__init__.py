"""`tm doctor`: check everything tm depends on and report each problem once, with its fix.

Never fixes, never writes state, never calls a model unless asked (`--model`). Checks that
depend on an earlier one (the ledger needs a valid state ref, the replay needs every object) are
skipped when it failed, so one broken thing is one problem, not a cascade of symptoms.

The checks, in the order they run: `ledger.py` (refs, layout), `contents.py` (objects,
replay, work tree), `install.py` (grammars, hook, leftovers), `model.py` (configuration,
keys, the model itself); `report.py` holds what they find.
"""

from __future__ import annotations

from tinymem.doctor.contents import check_artifacts, check_etv, check_rebuild
from tinymem.doctor.install import check_grammars, check_hook, check_leftovers
from tinymem.doctor.ledger import check_layout, check_refs, ref_fix
from tinymem.doctor.model import API_KEY_VARS, check_config, check_keys, check_model
from tinymem.doctor.notes import check_notes
from tinymem.doctor.report import FAIL, OK, SKIP, WARN, DoctorReport, Finding
from tinymem.errors import TinymemError
from tinymem.repository import Repo, open_repo
from tinymem.statemap import StateView

__all__ = [
    "API_KEY_VARS",
    "FAIL",
    "OK",
    "SKIP",
    "WARN",
    "DoctorReport",
    "Finding",
    "doctor",
    "ref_fix",
]


def doctor(
    start: str | None = None,
    *,
    model: bool = False,
    flags: dict[str, str | None] | None = None,
) -> DoctorReport:
    report = DoctorReport()
    repo: Repo | None = None
    try:
        repo = open_repo(start)
        report.add("repository", OK, f"git work tree at {repo.workdir}")
    except TinymemError as exc:
        report.add(
            "repository",
            FAIL,
            str(exc),
            "run tm inside a git work tree (cd into one, or `git init`)",
        )
    view: StateView | None = None
    if repo is not None:
        tip = check_refs(repo, report)
        if tip is not None:
            view = check_layout(repo, tip, report)
        if view is None:
            for name in ("artifacts", "rebuild", "work tree"):
                report.add(name, SKIP, "needs a valid State Map of the current branch")
        else:
            complete = check_artifacts(repo, view, report)
            if complete:
                check_rebuild(repo, view, report)
                check_notes(repo, view, report)
                check_etv(repo, view, report)
            else:
                for name in ("rebuild", "work tree"):
                    report.add(name, SKIP, "needs every object the State Map names (see above)")
    check_grammars(report)
    if repo is not None:
        check_hook(repo, report)
        check_leftovers(repo, report)
    values = check_config(repo, flags or {}, report)
    check_keys(values, report)
    if model:
        check_model(values, report)
    return report
