"""Run the server: bind, say where, and on SIGINT/SIGTERM stop without losing a reply.

A stop first refuses new requests (503) while the listener stays open, waits for every
request in flight to be answered and recorded (however long the model takes; `--timeout`
bounds it; a request whose body has not all arrived is answered 408 within
`request.BODY_TIMEOUT`, and a streamed reply its client stopped reading is cut off within
`completions.WRITE_TIMEOUT`), then closes the listener and connections, and only then shuts the
worker threads down: a worker still running when the interpreter exits finds no executor to
schedule on, and its model call fails half-way ("cannot schedule new futures after
interpreter shutdown").
A second signal stops at once, as servers do: what was in flight is then not answered, and
an ask cut off mid-call is not recorded (its model reply is lost, nothing else: every record
is one atomic ref update, and an interrupted accept is rolled back by the next tm command).
"""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from aiohttp import web

from tinymem.errors import UsageError
from tinymem.serve import console

__all__ = ["FLIGHTS", "Flights", "run"]

EXIT_INTERRUPTED = 130  # errors.EXIT_CODES
# With nothing in flight left, closing only waits for responses already handed to aiohttp.
CLOSE_TIMEOUT = 10.0


class Flights:
    """The requests being answered, so that a stop can refuse new ones and wait for these."""

    def __init__(self) -> None:
        self.count = 0
        self.stopping = False
        self._idle = asyncio.Event()
        self._idle.set()

    def begin(self) -> None:
        self.count += 1
        self._idle.clear()

    def end(self) -> None:
        self.count -= 1
        if self.count == 0:
            self._idle.set()

    async def idle(self) -> None:
        await self._idle.wait()


FLIGHTS: web.AppKey[Flights] = web.AppKey("flights", Flights)


def _bind_error(host: str, port: int, exc: OSError) -> UsageError:
    if exc.errno == errno.EADDRINUSE:
        return UsageError(
            f"port {port} on {host} is already in use (another tm serve?); choose another"
            " with --port, or --port 0 for any free one"
        )
    reason = exc.strerror or str(exc)
    return UsageError(f"cannot listen on {host} port {port}: {reason}")


def run(app: web.Application, host: str, port: int, announce: Callable[[int], str]) -> None:
    """Serve `app` until SIGINT or SIGTERM. `announce(port)` is the line printed once the
    port is bound (the real one, also for --port 0); a port that cannot be bound is a
    UsageError and nothing is announced."""
    console.install()
    asyncio.run(_serve(app, host, port, announce))
    console.emit("tm serve: stopped")


async def _serve(
    app: web.Application, host: str, port: int, announce: Callable[[int], str]
) -> None:
    loop = asyncio.get_running_loop()
    # Our own pool as the default executor (`asyncio.to_thread`), to shut it down ourselves
    # once nothing is in flight.
    pool = ThreadPoolExecutor(thread_name_prefix="tm-serve")
    loop.set_default_executor(pool)
    flights = app[FLIGHTS]
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=CLOSE_TIMEOUT)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise _bind_error(host, port, exc) from None
    stop = asyncio.Event()

    def on_signal() -> None:
        if flights.stopping:
            console.emit("tm serve: stopped without waiting for the requests in flight")
            sys.stderr.flush()
            # Worker threads cannot be interrupted; exiting is the only way out at once.
            os._exit(EXIT_INTERRUPTED)
        flights.stopping = True
        if flights.count:
            console.emit(
                f"tm serve: stopping once the {flights.count} request(s) in flight are answered"
                " and recorded; Ctrl-C again stops at once"
            )
        stop.set()

    # Before the announcement: whoever reads it may signal at once, and a signal before these
    # handlers meets tm's own (an exit 130, "tm: interrupted"; SIGTERM's default death).
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    console.emit(announce(int(runner.addresses[0][1])))
    await stop.wait()
    await flights.idle()
    await runner.cleanup()
    await loop.shutdown_default_executor()
