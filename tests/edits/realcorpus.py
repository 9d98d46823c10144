"""Replies as small models write them, against real files of public projects.

The files (`tests/data/realcode/`, vendored unmodified with their licences, see SOURCES.md
there) were written by no one here, so the replies test what users meet, not our own
conventions. Each reply (`tests/edits/data/realreplies/*.md`) starts with a JSON header in an
HTML comment:

    {"file": "<project>/<path in the project>", "shape": "...", "request": "...",
     "hydrated": ["Session.close"], "expect": {"applied": {"Session.close": "modify"}}}

`expect` is either `{"applied": {symbol: "modify" | "add" | "delete"}}` (exactly those entities
change and nothing else, and the proposals name exactly those; `@file` for a file tm reads no
definitions in), or `{"blocked": "<words of the reason>"}`. `"allow_delete": true` accepts as
`tm accept --allow-delete` does. `"final_newline": false` commits the file without its last
line break (in a repository of its own: the other cases see the file as shipped), `"tail"` is
what the file must end with once applied and `"contains"` a text it must hold (for what
comparing definitions cannot see: a line break, the inside of a string).

A case is judged by its effects on the file, through the real pipeline (`build` on a real
State Map, then the accept plan, which writes nothing): "applied" when every effect holds,
"blocked" when no proposal passes and nothing would be written, otherwise "wrong" (code put in
the wrong place, duplicated or lost). The bench (`bench/bench_edits.py`) tabulates the same
verdicts per shape and language.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tinymem.accept import plan
from tinymem.edits.proposals import build
from tinymem.edits.reply import parse_reply
from tinymem.etv import verify
from tinymem.gitobjects import ObjectWriter
from tinymem.hydration.relevance import Request
from tinymem.ledger import current
from tinymem.proposalrecords import Proposal
from tinymem.records import FILE_SYMBOL, entity_key
from tinymem.repository import open_repo
from tinymem.symbols import analyze, extract, language_for_path

ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT / "data" / "realcode"
REPLIES = Path(__file__).resolve().parent / "data" / "realreplies"


@dataclass(frozen=True)
class Case:
    name: str
    file: str  # "<project>/<path in the project>"
    shape: str
    request: str
    hydrated: tuple[str, ...]
    expect: dict[str, object]
    reply: str
    allow_delete: bool = False
    final_newline: bool = True
    tail: str | None = None
    contains: str | None = None

    @property
    def project(self) -> str:
        return self.file.split("/", 1)[0]

    @property
    def setup(self) -> str:
        """The repository the case runs in: its project's, or one of its own when it changes
        the file it commits."""
        return self.project if self.final_newline else f"{self.project}~{self.name}"

    @property
    def path(self) -> str:
        """The file's path inside its project (and inside the test repository)."""
        return self.file.split("/", 1)[1]

    @property
    def language(self) -> str:
        return language_for_path(self.path) or "other"


@dataclass
class Verdict:
    outcome: str  # "applied" | "blocked" | "wrong"
    detail: str = ""
    reasons: list[str] = field(default_factory=list)  # why proposals were blocked


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(REPLIES.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        assert text.startswith("<!--"), path
        header, reply = text[4:].split("-->\n", 1)
        meta = json.loads(header)
        cases.append(
            Case(
                path.stem,
                meta["file"],
                meta["shape"],
                meta.get("request", ""),
                tuple(meta.get("hydrated", [])),
                meta["expect"],
                reply,
                bool(meta.get("allow_delete", False)),
                bool(meta.get("final_newline", True)),
                meta.get("tail"),
                meta.get("contains"),
            )
        )
    return cases


def make_repo(
    where: Path, files: list[str], *, keep_project: bool = False, final_newline: bool = True
) -> Path:
    """A git repository holding the given realcode files at their paths in their projects
    (or, with `keep_project`, at `<project>/<path>`; without `final_newline`, their last line
    break taken away), tm init'ed."""
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    for file in files:
        rel = file if keep_project else file.split("/", 1)[1]
        target = where / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CODE / file, target)
        if not final_newline:
            target.write_bytes(target.read_bytes().rstrip(b"\n"))
    home = where.parent / f"{where.name}-home"
    home.mkdir(exist_ok=True)
    # Never the developer's own git configuration.
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home),
    }
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "."],
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base"],
        [sys.executable, "-m", "tinymem", "init"],
    ):
        subprocess.run(argv, cwd=where, check=True, capture_output=True, env=env)
    return where


def repos_for(cases: list[Case], base: Path) -> Iterator[tuple[Path, list[Case]]]:
    """One repository per project (all its files), with the cases against it; a case that
    changes the file it commits has one of its own (`Case.setup`)."""
    by_setup: dict[str, list[Case]] = {}
    for case in cases:
        by_setup.setdefault(case.setup, []).append(case)
    for setup, group in sorted(by_setup.items()):
        files = sorted({c.file for c in group})
        yield make_repo(base / setup, files, final_newline=group[0].final_newline), group


def judge(workdir: Path, case: Case) -> Verdict:
    repo = open_repo(str(workdir))
    view = current(repo)
    etv = verify(repo, view)
    hydrated: dict[str, str] = {}
    meta = view.meta(case.path)
    assert meta is not None, case.path
    for symbol in case.hydrated:
        hydrated[entity_key(case.path, symbol)] = meta.entities[symbol].artifact
    writer = ObjectWriter(repo.git)
    outcome = build(
        view,
        writer,
        repo.workdir,
        parse_reply(case.reply),
        etv,
        hydrated,
        "corpus",
        qualified=Request.parse(case.request).qualified,
        cache_dir=repo.cache_dir,
    )
    writer.flush()
    elsewhere = [p for p in outcome.proposals if p.path is not None and p.path != case.path]
    stopped: list[str] = []  # why the gates stopped those
    if elsewhere:
        # A file the case does not name would be written (a new file invented from a name):
        # wrong, unless every gate stops it.
        other = plan(repo, view, elsewhere, allow_delete=case.allow_delete)
        written = sorted(f.path for f in other.files.values() if f.after != f.before)
        if written:
            return Verdict("wrong", f"it would write {written}", [])
        stopped = [f"{c.blocked.gate}: {c.blocked.detail}" for c in other.checks if c.blocked]
    proposals = [p for p in outcome.proposals if p.path == case.path]
    before = (workdir / case.path).read_bytes()
    if not proposals:
        return Verdict("blocked", "no proposal for the file", [str(outcome.refused), *stopped])
    result = plan(repo, view, proposals, allow_delete=case.allow_delete)
    if len(proposals) > 1:
        # `tm accept --all` takes proposals in the order of their random ids: the verdict
        # may not depend on it.
        other = plan(repo, view, proposals[::-1], allow_delete=case.allow_delete)
        if not other.ok and result.ok:
            result = other
    reasons = [f"{c.blocked.gate}: {c.blocked.detail}" for c in result.checks if c.blocked]
    after = result.files[case.path].after if case.path in result.files else before
    if not any(c.ok for c in result.checks):
        if after != before:
            return Verdict("wrong", "blocked, yet the file would change", reasons)
        return Verdict("blocked", "; ".join(reasons), reasons)
    if reasons:
        return Verdict("wrong", "some proposals of the reply were blocked", reasons)
    assert after is not None
    problem = effects(case, before, after) or listed(case, proposals)
    return Verdict("wrong", problem, reasons) if problem else Verdict("applied")


def listed(case: Case, proposals: list[Proposal]) -> str | None:
    """None when the proposals name exactly the entities the case expects changed, each with
    its operation: an entity the block gives unchanged is no change (a user reviewing
    `tm show` must not be told that five methods are modified when one is)."""
    expected = case.expect.get("applied")
    if not isinstance(expected, dict):
        return None
    named = {e.symbol: e.op for p in proposals for e in p.entities}
    if named != expected:
        return f"the proposals name {named}, expected {expected}"
    return None


def effects(case: Case, before: bytes, after: bytes) -> str | None:
    """None when the change is exactly what the case expects, else what is wrong."""
    expected = case.expect.get("applied")
    if not isinstance(expected, dict):
        return f"applied, but the case expects it blocked ({case.expect})"
    language = language_for_path(case.path)
    if language and analyze(language, before).clean and not analyze(language, after).clean:
        return "the file no longer parses"
    if before.startswith(b"#!") and before.split(b"\n", 1)[0] != after.split(b"\n", 1)[0]:
        return "the file's first line (its shebang) is no longer first"
    if case.tail is not None and not after.endswith(case.tail.encode()):
        return f"the file ends {after[-80:]!r}, expected {case.tail!r}"
    if case.contains is not None and case.contains.encode() not in after:
        return f"the file does not hold {case.contains!r}"
    if FILE_SYMBOL in expected:
        return None if before != after else "the file did not change"
    old = {s.name: before[s.start : s.end] for s in extract(case.path, before).symbols}
    new = {s.name: after[s.start : s.end] for s in extract(case.path, after).symbols}
    lost = sorted(set(old) - set(new) - {n for n, op in expected.items() if op == "delete"})
    if lost:
        return f"definitions lost or renamed: {lost[:5]}"
    want_added = sorted(n for n, op in expected.items() if op == "add")
    # A new class comes with its members.
    added = sorted(
        n for n in set(new) - set(old) if not any(n.startswith(w + ".") for w in want_added)
    )
    if added != want_added:
        return f"added {added}, expected {want_added}"
    changed = sorted(n for n in old if n in new and old[n] != new[n])
    gone = sorted(n for n, op in expected.items() if op == "delete" and n in new)
    if gone:
        return f"did not delete {gone}"
    want = {n for n in expected if expected[n] == "modify"}
    # A change inside a member changes its containers' text too.
    allowed = want | {n for n in old if any(w.startswith(n + ".") for w in want | set(added))}
    outside = [n for n in changed if n not in allowed]
    if outside:
        return f"changed what it should not: {outside[:5]}"
    missing = sorted(w for w in want if w not in changed)
    if missing:
        return f"did not change {missing}"
    return None
