"""What `tm status --json` prints, as data: ETV's findings, the pending proposals and, when
the differing files are as a merge or rebase left them, that merge. `tm mcp`'s tm_status
answers with the same document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tinymem.branches.merged import Evidence
    from tinymem.etv import EtvReport
    from tinymem.notes.drift import NoteDrift
    from tinymem.repository import Repo
    from tinymem.statemap import StateView

__all__ = ["drifted_notes", "merged_drift", "status_doc"]


def merged_drift(repo: Repo, report: EtvReport) -> tuple[Evidence, list[str]] | None:
    """The merge, pull or rebase that left the differing files as they are, with those files."""
    from tinymem.branches.refs import may_have_merged

    if not report.drift or not may_have_merged(repo.git):
        return None
    from tinymem.branches.merged import merged_among

    return merged_among(repo, [d.path for d in report.drift])


def drifted_notes(repo: Repo, view: StateView, report: EtvReport | None) -> list[NoteDrift]:
    """The notes written for an older version of what they are about. `report`: ETV of the
    whole tree when the caller has it, else the notes' own files are verified."""
    from tinymem.notes.drift import Drift
    from tinymem.notes.listing import note_statuses

    notes = note_statuses(repo, view=view, report=report)
    return [n for n in notes if n.drift is not Drift.CURRENT]


def status_doc(
    repo: Repo,
    report: EtvReport,
    proposals: list[str],
    merged: tuple[Evidence, list[str]] | None,
    drifted_notes: list[NoteDrift],
) -> dict[str, Any]:
    """`drifted_notes`: the notes written for an older version of what they are about."""
    return {
        "branch": repo.branch,
        "merged": None if merged is None else {"commit": merged[0].after, "files": merged[1]},
        "clean": report.clean,
        "checked_files": report.checked,
        "files": [
            {
                "path": d.path,
                "why": d.why,
                "stale": [
                    {"entity": e.key, "symbol": e.symbol, "kind": e.kind, "why": e.why}
                    for e in d.stale
                ],
                "new_symbols": d.new_symbols,
                "outside_entities_changed": d.outside,
            }
            for d in report.drift
        ],
        "pending_proposals": proposals,
        "drifted_notes": [n.to_json() for n in drifted_notes],
    }
