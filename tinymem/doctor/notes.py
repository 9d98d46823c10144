"""The notes (`refs/tinymem/notes` and the branch's `notes/`): every record readable, and the
project notes what the episodes wrote (`notes/proof.py`, as `tm rebuild` proves them).
Reported only on a problem, like the records check: a corrupt note makes `tm note` and `tm
status` exit 13, and this says which and how to get it back."""

from __future__ import annotations

from tinymem.doctor.report import FAIL, DoctorReport
from tinymem.errors import TinymemError
from tinymem.notes.proof import prove_project_notes
from tinymem.notes.store import NOTES_REF, read_notes
from tinymem.repository import Repo
from tinymem.statemap import StateView


def check_notes(repo: Repo, view: StateView, report: DoctorReport) -> None:
    try:
        read_notes(repo, view=view, include_deleted=True)
        proof = prove_project_notes(repo)
    except TinymemError as exc:
        report.add(
            "notes",
            FAIL,
            f"the notes cannot be read: {exc}",
            f"fetch them again from another clone (`git fetch REMOTE {NOTES_REF}`, then"
            " `tm note merge FETCH_HEAD`), or move the ref back to a commit whose notes read"
            f" (`git log {NOTES_REF}`, `git update-ref {NOTES_REF} COMMIT`)",
        )
        return
    if proof.ok:
        return
    back = (
        f"`git update-ref {NOTES_REF} {proof.proven}` moves it back to the newest commit they prove"
        if proof.proven is not None
        else f"`git log {NOTES_REF}` shows who moved it"
    )
    report.add(
        "notes",
        FAIL,
        f"{NOTES_REF} is not what the episodes wrote ({len(proof.differences)} difference(s))",
        f"`tm rebuild` lists them; {back}",
        proof.differences[:20],
    )
