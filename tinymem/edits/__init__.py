"""From a model's reply to edits of the user's files, in the order the flow runs.

1. Reading the reply (`reply`, with `fences`, `filenames`, `comments`, `unfenced`,
   `elisions`, `directives`): code blocks, the file each names, DELETE lines.
2. Building proposals (`proposals`): each block tied to its file and to the entities it
   changes, with the gate results as they stand at ask time.
3. Splicing (`splice/`): at accept time, the proposed symbols written into the file, every
   byte outside them kept.

Nothing here writes to the work tree or the State Map: callers do, after the gates.
"""
