"""One State Map per branch: which ledger ref the current worktree uses (`refs.py`), the move
of a single-ref repository to it (`migrate.py`), a branch's first State Map (`start.py`), what
a merge or rebase brought (`merged.py`) and two ledgers of one branch made one
(`ledgermerge.py`)."""
