"""What tm needs around the ledger: its grammars load, the pre-commit hook can run, and no
interrupted accept, ledger lock or unrecorded reply is left behind."""

from __future__ import annotations

import os

from tinymem.doctor.report import FAIL, OK, WARN, DoctorReport
from tinymem.repository import Repo
from tinymem.writing.leftovers import leftovers

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


def check_grammars(report: DoctorReport) -> None:
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


def check_hook(repo: Repo, report: DoctorReport) -> None:
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


def check_leftovers(repo: Repo, report: DoctorReport) -> None:
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
    if found.strays:
        report.add(
            "interrupted",
            WARN,
            f"{len(found.strays)} temporary file(s) of a killed tm write beside your files",
            "the next tm write of the file beside each removes it, or delete them",
            found.strays,
        )
    if not (
        found.recovered
        or found.accept_running
        or found.ref_lock
        or found.unrecorded
        or found.strays
    ):
        report.add("interrupted", OK, "no interrupted accept, ledger lock or unrecorded reply")
