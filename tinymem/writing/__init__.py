"""Writing the user's work tree: the only code that changes files there.

- `safedir.py`: a directory of the work tree opened component by component (no symlink, no
  `.git/`, no submodule or nested repository), so the check and the write see the same thing;
- `ondisk.py`: what a target holds right before a write, the text its checks compare;
- `atomic.py`: one file replaced atomically through such a directory, its temporary file kept
  in `.git/tinymem/tmp/`, out of the work tree;
- `journal.py`: the intent record an accept writes before its first rename;
- `transaction.py`: several files written all or nothing, rolled back from what is on disk;
- `recovery.py`: the next tm command finishes or rolls back an accept a crash interrupted.
"""
