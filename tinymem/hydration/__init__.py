"""What the model is shown: the current truth for a request, inside a token budget.

`relevance` ranks entities for the request, `hydrate` chooses what fits and assembles the
messages, `excerpts` renders an entity as it sits in its file, `prompt` holds the fixed parts
(system prompt, STATE NOTICE, recent window).
"""
