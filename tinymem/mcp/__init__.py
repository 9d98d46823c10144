"""`tm mcp`: tm's memory and gates as Model Context Protocol tools, for agents that bring
their own model. `tools.py` is the core side (plain calls, JSON-ready answers), `propose.py`
records a client's edits as an ask episode, `server.py` is the only importer of the SDK."""
