"""`tm doctor`: check everything tm depends on and report each problem once, with its fix.

Never fixes, never writes state, never calls a model unless asked (`--model`). Checks that
depend on an earlier one (the ledger needs a valid state ref, the replay needs every object) are
skipped when it failed, so one broken thing is one problem, not a cascade of symptoms.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pygit2

from tinymem import config as cfg
from tinymem.branches.refs import LEGACY_REF, current_branch, ledger_refs, state_ref
from tinymem.errors import (
    ModelError,
    ModelNotFoundError,
    ModelReplyError,
    ModelTimeoutError,
    TinymemError,
    UsageError,
)
from tinymem.gitobjects import MODE_TREE, read_blob, read_tree, walk_blobs
from tinymem.ledger import EPISODE_FILE, Episode
from tinymem.records import entity_key
from tinymem.repository import Repo, open_repo
from tinymem.statemap import (
    ENTITIES,
    EPISODE,
    FILES,
    META,
    PROPOSAL_RECORD,
    PROPOSALS,
    FileMeta,
    StateView,
    unescape_symbol,
)
from tinymem.writing.leftovers import leftovers

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
LAYOUT = (FILES, ENTITIES, META, PROPOSALS, EPISODE)
MODEL_TIMEOUT = 5.0


def ref_fix(ref: str = "refs/tinymem/heads/BRANCH") -> str:
    return (
        f"point it back at the last good ledger commit (`git update-ref {ref} COMMIT`; a clone"
        " has it under the same name), or fetch it from a remote with"
        " `git fetch REMOTE 'refs/tinymem/*:refs/tinymem/*'`"
    )


# A tiny program per grammar: it must parse cleanly and yield at least one symbol, which proves
# both the grammar and our definition query load.
GRAMMAR_SAMPLES: dict[str, tuple[str, bytes]] = {
    "python": ("sample.py", b"def f():\n    return 1\n"),
    "javascript": ("sample.js", b"function f() { return 1; }\n"),
    "typescript": ("sample.ts", b"function f(): number { return 1; }\n"),
    "tsx": ("sample.tsx", b"function F() { return <div />; }\n"),
    "go": ("sample.go", b"package p\n\nfunc F() int { return 1 }\n"),
    "rust": ("sample.rs", b"fn f() -> i32 { 1 }\n"),
    "java": ("Sample.java", b"class A { int f() { return 1; } }\n"),
    "c": ("sample.c", b"int f(void) { return 1; }\n"),
    "cpp": ("sample.cpp", b"int f() { return 1; }\n"),
    "ruby": ("sample.rb", b"def f\n  1\nend\n"),
}
# Providers whose litellm route needs a key in the environment (local servers need none).
PROVIDER_KEYS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "xai": "XAI_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "cohere": "COHERE_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "azure": "AZURE_API_KEY",
}
API_KEY_VARS: tuple[str, ...] = tuple(sorted(set(PROVIDER_KEYS.values())))


@dataclass
class Finding:
    check: str
    status: str  # ok | warn | fail | skip
    message: str
    fix: str | None = None
    details: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "status": self.status,
            "message": self.message,
            "fix": self.fix,
            "details": self.details,
        }


@dataclass
class DoctorReport:
    findings: list[Finding] = field(default_factory=list)
    config: list[dict[str, Any]] = field(default_factory=list)
    api_keys: dict[str, str] = field(default_factory=dict)  # name -> "set" | "not set"
    stale_entities: int | None = None
    unreadable: list[str] = field(default_factory=list)

    def add(
        self,
        check: str,
        status: str,
        message: str,
        fix: str | None = None,
        details: list[str] | None = None,
    ) -> Finding:
        f = Finding(check, status, message, fix, list(details or []))
        self.findings.append(f)
        return f

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.status == FAIL]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.status == WARN]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "problems": len(self.problems),
            "warnings": len(self.warnings),
            "checks": [f.to_json() for f in self.findings],
            "config": self.config,
            "api_keys": self.api_keys,
            "stale_entities": self.stale_entities,
            "unreadable_files": self.unreadable,
        }


def doctor(
    start: str | None = None,
    *,
    model: bool = False,
    flags: dict[str, str | None] | None = None,
) -> DoctorReport:
    report = DoctorReport()
    repo: Repo | None = None
    try:
        repo = open_repo(start)
        report.add("repository", OK, f"git work tree at {repo.workdir}")
    except TinymemError as exc:
        report.add(
            "repository",
            FAIL,
            str(exc),
            "run tm inside a git work tree (cd into one, or `git init`)",
        )
    view: StateView | None = None
    if repo is not None:
        tip = _check_refs(repo, report)
        if tip is not None:
            view = _check_layout(repo, tip, report)
        if view is None:
            for name in ("artifacts", "rebuild", "work tree"):
                report.add(name, SKIP, "needs a valid State Map of the current branch")
        else:
            complete = _check_artifacts(repo, view, report)
            if complete:
                _check_rebuild(repo, view, report)
                _check_etv(repo, view, report)
            else:
                for name in ("rebuild", "work tree"):
                    report.add(name, SKIP, "needs every object the State Map names (see above)")
    _check_grammars(report)
    if repo is not None:
        _check_hook(repo, report)
        _check_leftovers(repo, report)
    values = _check_config(repo, flags or {}, report)
    _check_keys(values, report)
    if model:
        _check_model(values, report)
    return report


# ------------------------------------------------------------------------------ state ref


def _check_refs(repo: Repo, report: DoctorReport) -> str | None:
    """Validate every ref under refs/tinymem/; the current branch's ledger tip when it is
    sound (read only: a branch without a State Map is not started here)."""
    git = repo.git
    tip: str | None = None
    branch = current_branch(git)
    name = LEGACY_REF
    if branch is None:
        report.add(
            "state ref",
            WARN,
            "HEAD is detached: tm keeps one State Map per branch, so none is checked",
            "switch to a branch (`git switch NAME`) and run tm doctor there",
        )
    else:
        name = state_ref(branch)
        try:
            ref = git.references.get(name)
            if ref is None and not ledger_refs(git):
                legacy = git.references.get(LEGACY_REF)  # an older tm's single State Map
                if legacy is not None:
                    name, ref = LEGACY_REF, legacy
        except pygit2.GitError as exc:
            report.add("state ref", FAIL, f"{name} is unreadable: {exc}", ref_fix(name))
        else:
            if ref is None and ledger_refs(git):
                report.add(
                    "state ref",
                    WARN,
                    f"branch {branch} has no State Map yet; the next tm command starts it from"
                    " the branch it was made from",
                    "tm status",
                )
            elif ref is None:
                report.add(
                    "state ref",
                    FAIL,
                    "tm is not initialized here: no branch has a State Map",
                    "tm init",
                )
            else:
                problem = _ref_problem(git, ref)
                if problem is not None:
                    report.add("state ref", FAIL, f"{name} {problem}", ref_fix(name))
                else:
                    tip = str(ref.target)
                    moved = " (moved to this branch by the next tm command)"
                    report.add(
                        "state ref",
                        OK,
                        f"{name} -> ledger commit {tip[:12]}"
                        + (moved if name == LEGACY_REF else ""),
                    )
    try:
        others = [n for n in git.references if n.startswith("refs/tinymem/") and n != name]
    except pygit2.GitError as exc:
        others = []
        report.add("refs", FAIL, f"the refs under refs/tinymem/ cannot be listed: {exc}", ref_fix())
    for other_name in sorted(others):
        if not pygit2.reference_is_valid_name(other_name):
            report.add(
                "refs",
                FAIL,
                f"{other_name} is not a valid ref name",
                f"git update-ref -d {other_name}",
            )
            continue
        try:
            other = git.references.get(other_name)
        except pygit2.GitError as exc:
            report.add(
                "refs",
                FAIL,
                f"{other_name} is unreadable: {exc}",
                f"git update-ref -d {other_name}",
            )
            continue
        ledger = other_name.startswith("refs/tinymem/heads/") or other_name == LEGACY_REF
        problem = None if other is None else _ref_problem(git, other, need_commit=ledger)
        if problem is not None:
            report.add("refs", FAIL, f"{other_name} {problem}", f"git update-ref -d {other_name}")
    return tip


def _ref_problem(
    git: pygit2.Repository, ref: pygit2.Reference, need_commit: bool = True
) -> str | None:
    if ref.type == pygit2.enums.ReferenceType.SYMBOLIC:
        return f"is a symbolic ref (to {ref.target}), not a commit id"
    oid = str(ref.target)
    obj = git.get(oid)
    if obj is None:
        return f"points at {oid[:12]}, which is missing from the object database"
    if need_commit and not isinstance(obj, pygit2.Commit):
        return f"points at a {obj.type_str} ({oid[:12]}), not a ledger commit"
    return None


def _check_layout(repo: Repo, tip: str, report: DoctorReport) -> StateView | None:
    """The tip's tree has the State Map layout and its own episode record."""
    try:
        view = StateView(repo.git, tip)
        assert view.tree_id is not None
        tree = read_tree(repo.git, view.tree_id)
    except (TinymemError, KeyError, pygit2.GitError) as exc:
        report.add("layout", FAIL, f"the ledger commit {tip[:12]} is unreadable: {exc}", ref_fix())
        return None
    problems: list[str] = []
    for entry in tree:
        name = entry.name or ""
        if name not in LAYOUT:
            problems.append(f"unexpected entry {name!r} at the top of the tree")
        elif entry.filemode != MODE_TREE:
            problems.append(f"{name} is not a directory")
    record = None
    try:
        record = view.episode_blob(EPISODE_FILE)
    except (KeyError, pygit2.GitError) as exc:
        problems.append(f"{EPISODE}/{EPISODE_FILE} is unreadable: {exc}")
    else:
        if record is None:
            problems.append(f"{EPISODE}/{EPISODE_FILE} is missing")
        else:
            try:
                Episode.from_bytes(record)
            except TinymemError as exc:
                problems.append(f"{EPISODE}/{EPISODE_FILE}: {exc}")
    if problems:
        report.add(
            "layout",
            FAIL,
            f"the ledger commit {tip[:12]} is not a State Map: {problems[0]}",
            ref_fix(),
            problems,
        )
        return None
    report.add("layout", OK, f"{tip[:12]} has the State Map layout and its episode record")
    return view


# ------------------------------------------------------------------------------ artifacts


def _walk(
    repo: Repo, view: StateView, top: str, missing: dict[str, str]
) -> Iterator[tuple[str, str]]:
    sub = view.subtree(top)
    if sub is None:
        return
    try:
        yield from walk_blobs(repo.git, sub)
    except KeyError:
        # A tree below it is gone: walk_blobs cannot say which, the subtree id is enough.
        missing.setdefault(sub, f"a tree below {top}/")


def _check_artifacts(repo: Repo, view: StateView, report: DoctorReport) -> bool:
    """Every object the State Map names exists; files/ and meta/ agree. True when complete."""
    odb = repo.git.odb
    missing: dict[str, str] = {}  # object id -> the first place that names it
    unreadable: list[str] = []
    disagree: list[str] = []
    named = 0

    def need(oid: str | None, where: str) -> None:
        nonlocal named
        if not oid:
            return
        named += 1
        if oid not in missing and oid not in odb:
            missing[oid] = where

    files = dict(_walk(repo, view, FILES, missing))
    for path, oid in files.items():
        need(oid, f"{FILES}/{path}")
    for path, oid in _walk(repo, view, ENTITIES, missing):
        file_path, _, name = path.rpartition("/")
        need(oid, f"{entity_key(file_path, unescape_symbol(name))} in {ENTITIES}/")
    metas: dict[str, FileMeta] = {}
    recorded: set[str] = set()  # paths with a meta/ entry, readable or not
    for path, oid in _walk(repo, view, META, missing):
        recorded.add(path)
        need(oid, f"{META}/{path}")
        if oid in missing:
            continue
        try:
            meta = FileMeta.from_bytes(read_blob(repo.git, oid))
        except (TinymemError, KeyError, pygit2.GitError) as exc:
            unreadable.append(f"{META}/{path}: {exc}")
            continue
        metas[path] = meta
        need(meta.snapshot, f"{path} snapshot")
        for rec in meta.entities.values():
            key = entity_key(path, rec.symbol)
            need(rec.artifact, f"{key} artifact")
            need(rec.base, f"{key} base")
            for old in rec.superseded:
                need(old, f"{key} superseded artifact")
        live = files.get(path)
        if not meta.deleted and live != meta.snapshot:
            disagree.append(
                f"{path}: meta/ records snapshot {meta.snapshot[:12]},"
                f" files/ holds {(live or 'nothing')[:12]}"
            )
        elif meta.deleted and live is not None:
            disagree.append(f"{path}: meta/ records a deletion, files/ still holds it")
    for path in sorted(set(files) - recorded):
        disagree.append(f"{path}: in files/ without a meta/ record")
    unpinned: list[str] = []
    for pid, oid in _walk(repo, view, PROPOSALS, missing):
        pid, _, name = pid.partition("/")
        if name and name != PROPOSAL_RECORD:
            need(oid, f"{PROPOSALS}/{pid}")
            continue  # a blob the record names, pinned under its own id
        if not name:
            unpinned.append(pid)
        need(oid, f"{PROPOSALS}/{pid}")
        if oid in missing:
            continue
        try:
            raw = json.loads(read_blob(repo.git, oid))
            need(raw.get("block"), f"proposal {pid} block")
            need(raw.get("file_base"), f"proposal {pid} file base")
            for e in raw.get("entities") or []:
                need(e.get("artifact"), f"proposal {pid} {e.get('symbol')} artifact")
                need(e.get("base"), f"proposal {pid} {e.get('symbol')} base")
        except (ValueError, AttributeError, TypeError, KeyError) as exc:
            unreadable.append(f"{PROPOSALS}/{pid}: {exc}")
    if missing:
        report.add(
            "artifacts",
            FAIL,
            f"{len(missing)} object(s) the State Map names are missing from the vault",
            "restore them from another clone (`git fetch REMOTE 'refs/tinymem/*:refs/tinymem/*'`"
            " into a copy, then `git cat-file` them over), or point the branch's ledger ref back at"
            " the last good ledger commit",
            [f"{where}: {oid[:12]}" for oid, where in missing.items()],
        )
    if unreadable:
        report.add(
            "records",
            FAIL,
            f"{len(unreadable)} State Map record(s) are unreadable",
            "point the branch's ledger ref back at the last good ledger commit",
            unreadable,
        )
    if disagree:
        report.add(
            "records",
            FAIL,
            f"files/ and meta/ disagree on {len(disagree)} file(s)",
            "point the branch's ledger ref back at the last commit where `tm doctor` is clean",
            disagree,
        )
    if unpinned:
        report.add(
            "proposals",
            WARN,
            f"{len(unpinned)} proposal(s) were stored before tm kept their blobs reachable:"
            " `git gc` may prune their code",
            "accept or reject them soon (`tm accept ID` / `tm reject ID`), or ask again",
            [f"{PROPOSALS}/{pid}" for pid in unpinned],
        )
    if not (missing or unreadable or disagree):
        report.add(
            "artifacts",
            OK,
            f"every object named by {len(metas)} file record(s) and"
            f" {len(view.proposal_ids())} proposal(s) exists ({named} references)",
        )
    return not (missing or unreadable)


def _check_rebuild(repo: Repo, view: StateView, report: DoctorReport) -> None:
    from tinymem.rebuild import rebuild

    try:
        result = rebuild(repo, view.commit_id)
    except (TinymemError, KeyError, pygit2.GitError) as exc:
        report.add("rebuild", FAIL, f"the ledger cannot be replayed: {exc}", ref_fix())
        return
    if result.ok:
        report.add(
            "rebuild", OK, f"replaying {result.episodes} episode(s) reproduces the State Map"
        )
        return
    report.add(
        "rebuild",
        FAIL,
        f"the State Map differs from a replay of the ledger ({len(result.differences)}"
        " difference(s))",
        "`tm rebuild` lists them; point the branch's ledger ref back at the last ledger commit"
        " where `tm rebuild` agrees",
        result.differences[:20],
    )


def _check_etv(repo: Repo, view: StateView, report: DoctorReport) -> None:
    from tinymem.etv import verify

    try:
        etv = verify(repo, view)
    except (TinymemError, OSError, pygit2.GitError) as exc:
        report.add("work tree", FAIL, f"the work tree cannot be verified: {exc}")
        return
    stale = etv.stale_keys()
    report.stale_entities = len(stale)
    report.unreadable = [
        d.path for d in etv.drift if d.why.startswith("unreadable") or d.why == "not a regular file"
    ]
    if report.unreadable:
        report.add(
            "unreadable",
            FAIL,
            f"{len(report.unreadable)} tracked file(s) cannot be read (counted as STALE)",
            "fix their permissions (chmod u+r PATH), or `tm adopt PATH` once the file is as"
            " you want it",
            [f"{d.path}: {d.why}" for d in etv.drift if d.path in report.unreadable],
        )
    if stale:
        report.add(
            "work tree",
            WARN,
            f"{len(stale)} STALE entit{'y' if len(stale) == 1 else 'ies'} in {len(etv.drift)}"
            f" file(s) of {etv.checked}: they are not shown to the model and block its proposals",
            "`tm status` lists them; `tm adopt PATH` makes your edits the truth",
        )
    elif etv.drift:
        report.add(
            "work tree",
            WARN,
            f"{len(etv.drift)} file(s) of {etv.checked} differ from the State Map outside any"
            " entity (nothing STALE)",
            "`tm status` lists them; `tm adopt PATH` records the edits",
        )
    else:
        report.add("work tree", OK, f"{etv.checked} files match the State Map (nothing STALE)")


# ------------------------------------------------------------------ grammars, hook, config


def _check_grammars(report: DoctorReport) -> None:
    from tinymem.symbols import GRAMMAR_LANGUAGES, analyze, extract

    failed: list[str] = []
    for lang in sorted(GRAMMAR_LANGUAGES):
        name, sample = GRAMMAR_SAMPLES.get(lang, ("", b""))
        try:
            syntax = analyze(lang, sample)
            if not syntax.clean:
                failed.append(f"{lang}: a tiny sample does not parse ({syntax.reason})")
                continue
            if name:
                ex = extract(name, sample)
                if ex.method != "tree-sitter" or not ex.symbols:
                    failed.append(f"{lang}: the definition query found nothing ({ex.reason})")
        except Exception as exc:  # a broken native grammar can raise anything
            failed.append(f"{lang}: {type(exc).__name__}: {exc}")
    if failed:
        report.add(
            "grammars",
            FAIL,
            f"{len(failed)} of {len(GRAMMAR_LANGUAGES)} grammars do not work",
            "reinstall the pinned grammars: pip install --force-reinstall"
            " 'tree-sitter-language-pack==0.13.0'",
            failed,
        )
    else:
        report.add(
            "grammars",
            OK,
            f"{len(GRAMMAR_LANGUAGES)} grammars load and parse"
            f" ({', '.join(sorted(GRAMMAR_LANGUAGES))})",
        )


def _check_hook(repo: Repo, report: DoctorReport) -> None:
    # Not installing the hook is a choice, so every finding here is a warning.
    from tinymem.hook import MARKER, hooks_dir, is_current, recorded_python

    path = os.path.join(hooks_dir(repo), "pre-commit")
    install = "tm hook install"
    try:
        with open(path, "rb") as f:
            text = f.read()
    except FileNotFoundError:
        report.add("hook", WARN, f"the pre-commit hook is not installed ({path})", install)
        return
    except OSError as exc:
        report.add("hook", WARN, f"the pre-commit hook {path} cannot be read: {exc}", install)
        return
    if MARKER.encode() not in text:
        report.add(
            "hook",
            WARN,
            f"{path} is not tinymem's hook: tm's pre-commit check is not installed",
            f"{install} (your hook is kept and still runs first)",
        )
        return
    if not os.access(path, os.X_OK):
        report.add("hook", WARN, f"{path} is not executable: git skips it", f"chmod +x {path}")
        return
    script = text.decode("utf-8", "replace")
    if not is_current(script):
        report.add("hook", WARN, f"{path} is an older tinymem hook", install)
        return
    python = recorded_python(script)
    if python is not None and not os.access(python, os.X_OK):
        report.add(
            "hook",
            WARN,
            f"the hook's recorded Python {python} no longer exists: commits are refused"
            " unless tm is on PATH",
            f"{install} (from the environment that has tm)",
        )
        return
    report.add("hook", OK, f"tinymem's pre-commit hook is installed and current ({path})")


def _check_leftovers(repo: Repo, report: DoctorReport) -> None:
    found = leftovers(repo)
    for said in found.recovered:
        report.add("interrupted", WARN, said, "check the files it names with `git diff`")
    if found.accept_running:
        report.add("interrupted", WARN, "a tm accept is running in another process right now")
    if found.ref_lock is not None:
        report.add(
            "interrupted",
            WARN,
            f"{found.ref_lock} was left {found.ref_lock_age:.0f} s ago by a killed process",
            f"the next tm write removes it, or: rm {found.ref_lock}",
        )
    if found.unrecorded:
        report.add(
            "interrupted",
            WARN,
            f"{len(found.unrecorded)} model reply(ies) could not be recorded in the ledger",
            "read them (response.txt) and ask again; delete the directories when done",
            found.unrecorded,
        )
    if not (found.recovered or found.accept_running or found.ref_lock or found.unrecorded):
        report.add("interrupted", OK, "no interrupted accept, ledger lock or unrecorded reply")


def _check_config(
    repo: Repo | None, flags: dict[str, str | None], report: DoctorReport
) -> dict[str, cfg.Value]:
    values = cfg.resolve(repo.git if repo is not None else None, flags)
    report.config = [{"key": v.key, "value": v.value, "source": v.source} for v in values.values()]
    bad: list[str] = []
    for key in cfg.NUMERIC_SETTINGS:
        try:
            cfg.as_int(values, key)
        except UsageError as exc:
            bad.append(str(exc))
    try:
        cfg.repair_rounds(values)
    except UsageError as exc:
        bad.append(str(exc))
    shown = [
        f"{v.key} = {v.value if v.value is not None else '(not set)'}  ({v.source})"
        for v in values.values()
    ]
    if bad:
        report.add(
            "config",
            FAIL,
            f"{len(bad)} setting(s) are not usable: {bad[0]}",
            "`tm config KEY VALUE` sets a valid value (or unset the TM_* environment variable)",
            bad + shown,
        )
    else:
        model = values["model"]
        base = values["apiBase"]
        report.add(
            "config",
            OK,
            f"model {model.value} ({model.source}); "
            + (
                f"apiBase {base.value} ({base.source})"
                if base.value
                else "apiBase not set: the provider's default endpoint"
            ),
            None,
            shown,
        )
    return values


def _check_keys(values: dict[str, cfg.Value], report: DoctorReport) -> None:
    # Only whether a key is set is ever reported: never its value, not even a prefix.
    report.api_keys = {name: "set" if os.environ.get(name) else "not set" for name in API_KEY_VARS}
    model = values["model"].value or cfg.DEFAULT_MODEL
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    needed = PROVIDER_KEYS.get(provider)
    have = [n for n, state in report.api_keys.items() if state == "set"]
    shown = [
        f"set: {', '.join(have) or 'none'}",
        f"not set: {', '.join(n for n in API_KEY_VARS if n not in have) or 'none'}",
    ]
    if needed and not os.environ.get(needed):
        report.add(
            "api keys",
            WARN,
            f"{needed} is not set; litellm's {provider} provider needs it"
            + (" (any value for a local OpenAI-compatible server)" if provider == "openai" else ""),
            f"export {needed}=... in your shell (tm never stores keys)",
            shown,
        )
    else:
        report.add(
            "api keys",
            OK,
            f"{', '.join(have)} set" if have else "no provider API key is set (none needed)",
            None,
            shown,
        )


def _check_model(values: dict[str, cfg.Value], report: DoctorReport) -> None:
    from tinymem.llm import call, endpoint_name

    model = values["model"].value or cfg.DEFAULT_MODEL
    api_base = values["apiBase"].value
    where = endpoint_name(model, api_base)
    try:
        context = cfg.as_int(values, "context") or 8192
    except UsageError:
        context = 8192
    started = time.monotonic()
    try:
        call(
            model,
            [{"role": "user", "content": "Reply with the single word OK."}],
            api_base=api_base,
            timeout=MODEL_TIMEOUT,
            context=context,
            max_reply_chars=4000,
        )
    except ModelError as exc:
        report.add("model", FAIL, str(exc), _model_fix(exc))
        return
    report.add(
        "model",
        OK,
        f"{model} at {where} answered in {time.monotonic() - started:.1f} s",
    )


def _model_fix(exc: ModelError) -> str:
    fixes: dict[type[ModelError], str] = {
        ModelNotFoundError: "pull or load the model on the server, or `tm config model NAME`",
        ModelTimeoutError: f"nothing came back within {MODEL_TIMEOUT:g} s: is the server still"
        " loading the model? try again, or look at the server's log",
        ModelReplyError: "the endpoint answers but not usefully: check the model name and the"
        " server's log",
    }
    for kind, fix in fixes.items():
        if isinstance(exc, kind):
            return fix
    return "start the model server, or point tm at it: `tm config apiBase URL` (or TM_API_BASE)"
