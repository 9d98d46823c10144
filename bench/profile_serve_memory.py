#!/usr/bin/env python3
"""Where `tm serve`'s memory goes: its request path driven in process, RSS at each step.

Imports litellm as serve does, then sends the same chat request (`serve.chat.chat`, the
loopback model server of the tests) on a pool of 6 threads, as serve's default executor has
on 2 cores, two at a time every fifth request; prints VmRSS / VmHWM / RssAnon / RssFile and
glibc's `mallinfo2` (bytes malloc holds in use and free, over all arenas; pymalloc's arenas
are not in it) after each step, then after a full collection and `malloc_trim(0)`.
`--serve-memory` applies what `tm serve` does (serve/memory.py) first. Run it on a copy
of a repository: requests are recorded as episodes. To see a cold build, delete the copy's
`.git/tinymem/relevance.sqlite` first.

Usage:
  .venv/bin/python bench/profile_serve_memory.py REPO [--requests 20] [--serve-memory]
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.modelserver import ModelServer, ScriptedReply


class _MallInfo2(ctypes.Structure):
    _NAMES = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks")
    _fields_ = [(n, ctypes.c_size_t) for n in (*_NAMES, "uordblks", "fordblks", "keepcost")]


LIBC = ctypes.CDLL(None)
LIBC.mallinfo2.restype = _MallInfo2


def step(name: str) -> None:
    out: dict[str, object] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "Threads"):
            out[key] = value.strip()
    info = LIBC.mallinfo2()
    out["malloc_in_use_MB"] = round(info.uordblks / 2**20, 1)
    out["malloc_free_MB"] = round(info.fordblks / 2**20, 1)
    print(f"{time.strftime('%H:%M:%S')} {name}: {json.dumps(out)}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--serve-memory", action="store_true")
    args = ap.parse_args()
    step("start")
    if args.serve_memory:
        from tinymem.serve.memory import give_back, preload, settle

        settle()
        preload()
    else:
        from tinymem.llm import import_litellm

        import_litellm()
    step("litellm imported")
    from tinymem.serve.chat import ServeSettings, chat

    text = "".join(f"line {i} of a reply that streams\n" for i in range(20))
    reply = ScriptedReply(text=text, chunks=tuple(text.splitlines(True)), chunk_delay=0.0)
    words = "explain how the session token cache decides when to retry"
    body = {"model": "openai/test", "messages": [{"role": "user", "content": words}]}
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")

    def one() -> None:
        chat(settings, body)
        if args.serve_memory:
            give_back()

    with ModelServer(default=reply) as ms, ThreadPoolExecutor(max_workers=6) as pool:
        flags: dict[str, str | None] = {"model": "openai/test", "apiBase": ms.openai_base}
        settings = ServeSettings(workdir=str(args.repo), flags=flags, trailer=False)
        t0 = time.monotonic()
        pool.submit(one).result()
        step(f"first request ({time.monotonic() - t0:.1f} s)")
        for k in range(args.requests):
            for f in [pool.submit(one) for _ in range(2 if k % 5 == 0 else 1)]:
                f.result()
            if k in (0, 4, args.requests - 1):
                step(f"after {k + 1} more requests")
    gc.collect()
    step("after a full collection")
    LIBC.malloc_trim(0)
    step("after malloc_trim(0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
