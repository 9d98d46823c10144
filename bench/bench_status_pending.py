"""`tm status` with many pending proposals, against `git status` in the same run.

Builds a repository of `--files` Python files in a temporary directory, runs `tm init`, then
adds pending proposals in steps (`--counts`, cumulative) straight through the ledger API: one
ledger commit per step whose tree gains that many `proposals/<id>/` entries, each stored as
`tm ask` stores it (record, block and artifact blobs); one in five is rejected, as `tm reject`
leaves it (rejected proposals stay under proposals/). After each step it times `tm status`,
`tm status --json` and `git status --porcelain`: two warm-up runs of each, then `--runs`
interleaved runs, medians; the first `tm status` after the step is reported apart (it is the
one that meets the new proposals). Nothing is asserted; the JSON result goes to `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TM = [sys.executable, "-m", "tinymem"]


def _env(base: Path) -> dict[str, str]:
    env = dict(os.environ)
    # As bench_foundation.py: bytecode cached like a normal install, outside the project.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
    for who in ("AUTHOR", "COMMITTER"):
        env.setdefault(f"GIT_{who}_NAME", "bench")
        env.setdefault(f"GIT_{who}_EMAIL", "bench@localhost")
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv} failed: {proc.stderr.decode()}")
    return took


def _build(repo: Path, files: int, env: dict[str, str]) -> None:
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    for i in range(files):
        path = repo / "src" / f"m{i // 50}" / f"f{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{i}(x):\n    return x + {i}\n\n\nclass C{i}:\n    pass\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "base"], cwd=repo, check=True, env=env)
    subprocess.run([*TM, "init", "-q"], cwd=repo, check=True, env=env)


def _add_proposals(repo: Path, count: int, files: int) -> None:
    """`count` proposals in one ledger commit, as an ask episode records them."""
    sys.path.insert(0, str(ROOT))
    from tinymem.gitobjects import MODE_TREE, ObjectWriter
    from tinymem.ledger import Draft, Episode, commit_episode
    from tinymem.proposalrecords import Proposal, ProposedEntity, store
    from tinymem.repository import open_repo
    from tinymem.statemap import PROPOSALS, StateView

    repo_ = open_repo(str(repo))

    def operation(view: StateView, writer: ObjectWriter) -> Draft:
        episode = Episode(kind="ask", summary=f"{count} generated proposals")
        changes: dict[str, tuple[int, str] | None] = {}
        for n in range(count):
            i = n % files
            text = f"def f{i}(x):\n    return x * {n}\n".encode()
            artifact = writer.blob(text)
            p = Proposal(
                id=secrets.token_hex(3) + f"{n:05d}",
                episode=episode.id,
                path=f"src/m{i // 50}/f{i}.py",
                kind="symbols",
                confidence="CONFIRMED",
                reason=None,
                entities=[ProposedEntity(f"f{i}", "modify", artifact, None)],
                block=writer.blob(b"```python\n" + text + b"```\n"),
                file_base=None,
                gates={"A": "pass", "ETV": "pass"},
                status="rejected" if n % 5 == 4 else "pending",
            )
            oid = store(writer, p)
            changes[f"{PROPOSALS}/{p.id}"] = (MODE_TREE, oid)
            episode.proposals[p.id] = oid
        return Draft(episode=episode, changes=changes)

    commit_episode(repo_, operation)


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--counts", default="0,1000,9000", help="proposals added at each step")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tm-bench-pending-") as tmp:
        base = Path(tmp)
        env = _env(base)
        repo = base / "work"
        _build(repo, args.files, env)
        total = 0
        for step in (int(c) for c in args.counts.split(",")):
            if step:
                _add_proposals(repo, step, args.files)
            total += step
            first = _run([*TM, "status"], repo, env)
            timings: dict[str, list[float]] = {"tm status": [], "tm status --json": [], "git": []}
            commands = {
                "tm status": [*TM, "status"],
                "tm status --json": [*TM, "status", "--json"],
                "git": ["git", "status", "--porcelain"],
            }
            for _ in range(2):
                for argv in commands.values():
                    _run(argv, repo, env)
            for _ in range(args.runs):
                for name, argv in commands.items():
                    timings[name].append(_run(argv, repo, env))
            git = _median(timings["git"])
            row = {
                "proposals": total,
                "pending": total - total // 5,
                "first tm status (s)": round(first, 3),
                "tm status (s)": round(_median(timings["tm status"]), 3),
                "tm status --json (s)": round(_median(timings["tm status --json"]), 3),
                "git status (s)": round(git, 4),
                "tm status / git": round(_median(timings["tm status"]) / git, 1),
                "tm status --json / git": round(_median(timings["tm status --json"]) / git, 1),
                "first / git": round(first / git, 1),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        args.out.write_text(json.dumps({"files": args.files, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
