"""The child process that builds the relevance index for a long-lived parent (`tm serve`).

`python -m tinymem.hydration.indexchild GIT_DIR INDEX_FILE LEDGER_COMMIT`: brings the index
file to that ledger commit's State Map, as the parent's own refresh would, and exits 0. The
parent then finds the file at its tip and only opens it; if the child fails, or is killed
after `index._CHILD_TIMEOUT`, the parent builds it itself (`index._build_in_child`). The
build is one SQLite transaction: a child killed half-way leaves the file as it was.
"""

from __future__ import annotations

import sys

import pygit2

from tinymem.hydration.index import RelevanceIndex
from tinymem.statemap import StateView

__all__ = ["main"]


def main(argv: list[str]) -> int:
    git_dir, index_file, commit_id = argv
    index = RelevanceIndex(index_file)
    try:
        index.refresh(StateView(pygit2.Repository(git_dir), commit_id))
    finally:
        index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
