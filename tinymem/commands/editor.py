"""Text from the user's editor, as `git commit` gets a message: git's choice of editor
(`git var GIT_EDITOR`: GIT_EDITOR, core.editor, VISUAL, EDITOR, then vi), run through the
shell on a file in the git directory, lines starting with `#` dropped."""

from __future__ import annotations

import os
import subprocess

from tinymem import gitcmd
from tinymem.errors import UsageError
from tinymem.repository import Repo

_FILE = "NOTE_EDITMSG"


def edit_text(repo: Repo, text: str, what: str) -> str:
    # Asking git is bounded (a git stuck on a lock must not hold `tm note edit` for ever);
    # the editor below is not: the user edits for as long as they want.
    named = gitcmd.git_output(repo.workdir, "var", "GIT_EDITOR")
    if named is None:
        raise UsageError(
            "git named no editor (GIT_EDITOR, core.editor, VISUAL, EDITOR), or did not answer"
            f" within {gitcmd.TIMEOUT:g} s; use --text"
        )
    editor = named.decode("utf-8", "replace").strip()
    if not editor:
        raise UsageError("no editor is set (GIT_EDITOR, core.editor, VISUAL, EDITOR); use --text")
    path = os.path.join(repo.git.path, _FILE)
    with open(path, "w", encoding="utf-8") as f:
        f.write(
            f"{text}\n\n# Write {what} above. Lines starting with '#' are left out;"
            " an empty text changes nothing.\n"
        )
    # As git runs it: through the shell, the file as its argument.
    done = subprocess.run(["sh", "-c", f'{editor} "$@"', editor, path], check=False)
    if done.returncode != 0:
        raise UsageError(f"the editor ({editor}) exited with {done.returncode}; nothing changed")
    with open(path, encoding="utf-8") as f:
        kept = [line for line in f.read().splitlines() if not line.startswith("#")]
    os.unlink(path)
    new = "\n".join(kept).strip()
    if not new:
        raise UsageError("the text was left empty; nothing changed")
    return new
