"""Bringing the current branch's State Map up to HEAD: the step every tm entry point runs
first (CLI commands, `tm serve` requests, the pre-commit hook), above the store, which never
calls it. See `step.bring_up_to_head`."""

from __future__ import annotations

from tinymem.sync.step import bring_up_to_head, open_synced, recover_interrupted

__all__ = ["bring_up_to_head", "open_synced", "recover_interrupted"]
