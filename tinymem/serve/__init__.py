"""`tm serve`: tm's memory and gates behind an OpenAI-compatible endpoint.

aiohttp's server, because litellm already installs aiohttp (no new dependency and nothing
else to keep up to date) and its `StreamResponse` writes each SSE chunk as it comes, which is
all streaming needs; starlette + uvicorn would add two packages for the same thing.

`chat.py` turns one chat request into an ask episode (run in a worker thread: the core is
synchronous), `views.py` answers the read endpoints with the JSON of the matching `--json`
commands, `app.py` wires routes, the bearer token and OpenAI-style errors.
"""
