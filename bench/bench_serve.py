#!/usr/bin/env python3
"""`tm serve`: the latency it adds in front of a model, and its memory after many requests.

Corpus: the same as bench_ask.py (copies of installed packages no one here wrote, ~350 files,
committed to a fresh repository, `tm init`). A loopback model server (tests/modelserver.py)
streams a fixed reply of 20 chunks, 10 ms apart. The official `openai` client sends the same
one-message conversation two ways, interleaved, after two warm-up requests through tm:

  direct  to the model server itself
  tm      to `tm serve` (a separate process) in front of it

For each: time to the first content chunk and to the end of the stream; the difference of
the medians is what tm adds (ETV, hydration, recording the episode). Target: first-chunk
overhead under 50 ms after the first request. Then 100 requests through tm and the server's
peak RSS (VmHWM of its process).

`--packages mypy` takes other packages of site-packages as the corpus (mypy with its vendored
typeshed: ~950 files, 30k entities); `--synth N` the synthetic repository of N files that
bench_foundation.py generates (its generator, seed 1234; `tm init -q` timed), asked about words
of its vocabulary (SYNTH_MESSAGES); `--code DIR` runs `tm serve` from another checkout's
`tinymem` (PYTHONPATH; e.g. `git archive a31d1aa tinymem | tar -x -C DIR`), to compare.

Usage:
  .venv/bin/python bench/bench_serve.py [--runs 15] [--requests 100] [--packages P ...]
      [--synth N] [--code DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import openai  # noqa: E402
from bench_ask import DEFAULT_PACKAGES, TM, build_corpus  # noqa: E402

from tests.modelserver import ModelServer, ScriptedReply  # noqa: E402

REPLY = "".join(f"line {i} of a reply that streams\n" for i in range(20))
MESSAGES = [{"role": "user", "content": "explain how the progress bar refreshes"}]
# The synthetic tree's names are two or three of bench_foundation.WORDS: a prompt in them.
SYNTH_MESSAGES = [
    {"role": "user", "content": "explain how the session token cache decides when to retry"}
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def synth_corpus(root: Path, n_files: int) -> dict[str, Any]:
    """bench_foundation's synthetic repository of `n_files`, committed and packed, `tm init`."""
    from bench_foundation import build_synthetic

    t0 = time.monotonic()
    repo = build_synthetic(root, n_files)
    built = time.monotonic() - t0
    t0 = time.monotonic()
    subprocess.run([TM, "init", "-q"], cwd=repo, check=True, capture_output=True)
    return {
        "synth": n_files,
        "path": str(repo),
        "build_seconds": round(built, 1),
        "tm_init_seconds": round(time.monotonic() - t0, 2),
    }


def timed(client: openai.OpenAI) -> tuple[float, float]:
    start = time.monotonic()
    first: float | None = None
    stream = client.chat.completions.create(model="openai/test", messages=MESSAGES, stream=True)  # type: ignore[arg-type]
    for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.monotonic() - start
    return (first or 0.0), time.monotonic() - start


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_serve.json")
    ap.add_argument("--packages", nargs="+", default=list(DEFAULT_PACKAGES))
    ap.add_argument("--synth", type=int, default=0, help="bench_foundation's N-file repository")
    ap.add_argument("--code", type=Path, default=None)
    ap.add_argument(
        "--repo",
        type=Path,
        help="an initialised repository to serve (kept; with --synth: its size)",
    )
    args = ap.parse_args()
    if args.synth:
        MESSAGES[:] = SYNTH_MESSAGES
    reply = ScriptedReply(text=REPLY, chunks=tuple(REPLY.splitlines(True)), chunk_delay=0.01)
    with tempfile.TemporaryDirectory(prefix="tm-serve-") as tmp, ModelServer(default=reply) as ms:
        if args.repo is not None:
            corpus = args.repo.resolve()
            info = {"repo": str(corpus), "synth": args.synth}
        elif args.synth:
            info = synth_corpus(Path(tmp), args.synth)
            corpus = Path(info["path"])
        else:
            corpus = Path(tmp) / "corpus"
            info = build_corpus(corpus, args.packages)
        port = _free_port()
        env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
        if args.code is not None:
            env["PYTHONPATH"] = str(args.code.resolve())
        argv = [sys.executable, "-m", "tinymem", "serve", "--port", str(port), "--no-trailer"]
        argv += ["-m", "openai/test", "--api-base", ms.openai_base]
        proc = subprocess.Popen(argv, cwd=corpus, env=env, stderr=subprocess.PIPE, text=True)
        url = f"http://127.0.0.1:{port}"
        for _ in range(3000):
            try:
                urllib.request.urlopen(url + "/health", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        direct = openai.OpenAI(base_url=ms.openai_base, api_key="x", max_retries=0)
        via = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=900)
        try:
            for _ in range(2):
                timed(via)
            d_first, d_total, t_first, t_total = [], [], [], []
            for _ in range(args.runs):
                a, b = timed(direct)
                d_first.append(a)
                d_total.append(b)
                a, b = timed(via)
                t_first.append(a)
                t_total.append(b)
            for _ in range(args.requests):
                via.chat.completions.create(model="openai/test", messages=MESSAGES)  # type: ignore[arg-type]
            rss = peak_rss_mb(proc.pid)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=60)
    med = statistics.median
    result: dict[str, Any] = {
        "corpus": info,
        "code": str(args.code) if args.code is not None else "this checkout",
        "runs": args.runs,
        "direct_first_ms": round(med(d_first) * 1000, 1),
        "tm_first_ms": round(med(t_first) * 1000, 1),
        "first_overhead_ms": round((med(t_first) - med(d_first)) * 1000, 1),
        "direct_total_ms": round(med(d_total) * 1000, 1),
        "tm_total_ms": round(med(t_total) * 1000, 1),
        "total_overhead_ms": round((med(t_total) - med(d_total)) * 1000, 1),
        "requests": args.requests,
        "peak_rss_mb": round(rss, 1),
    }
    print(json.dumps(result, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if result["first_overhead_ms"] < 50 else 1


if __name__ == "__main__":
    sys.exit(main())
