"""Project memory: notes (decisions, constraints, gotchas, ...) anchored to entities or files.

`model.py` is the record, `store.py` where notes live in git and how an episode writes them,
`drift.py` whether a note's anchors still name the text it was written against. This is the
store layer: it imports the ledger and State Map, never the flows built on them.
"""
