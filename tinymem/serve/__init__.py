"""`tm serve`: tm's memory and gates behind an OpenAI-compatible endpoint.

aiohttp's server, because litellm already installs aiohttp (no new dependency and nothing
else to keep up to date) and its `StreamResponse` writes each SSE chunk as it comes, which is
all streaming needs; starlette + uvicorn would add two packages for the same thing.

`chat.py` turns one chat request into an ask episode (run in a worker thread: the core is
synchronous) and `completions.py` answers it as JSON or SSE; `views.py` answers the read
endpoints with the JSON of the matching `--json` commands; `request.py` reads a JSON body;
`guard.py` decides who may ask (loopback Host and Origin, JSON only, the bearer token);
`errors.py` makes OpenAI error objects; `app.py` wires routes and middlewares;
`lifecycle.py` binds, announces, and stops without losing a reply in flight.
"""
