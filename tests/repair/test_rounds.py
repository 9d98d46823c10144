"""Repair rounds end to end: `tm ask` against the loopback model server playing scripted
two-turn conversations, then `tm accept`, in real repositories."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from subprocess import PIPE, Popen

from tests.conftest import (
    MODEL_ENV,
    PY_APP,
    Initialise,
    ask_argv,
    git,
    init_repo,
    tm,
    tm_ask,
    write,
)
from tests.modelserver import ModelServer, ScriptedReply

SVC = """\
class Mailer:
    def send(self, msg):
        return msg


class Pager:
    def send(self, msg):
        return msg.upper()
"""

FIXED = '```python path=app.py\ndef fetch_user(uid):\n    return {"id": uid, "v": 2}\n```\n'
FIXED_APP = PY_APP.replace('    return {"id": uid}\n', '    return {"id": uid, "v": 2}\n')
GOOD_SVC = (
    "```python path=svc.py\nclass Mailer:\n    def send(self, msg):\n"
    "        return msg.strip()\n```\n"
)
BROKEN = '```python path=app.py\ndef fetch_user(uid:\n    return {"id": uid, "v": 2}\n```\n'


FILES = {"app.py": PY_APP, "svc.py": SVC}


def _ask(repo: Path, server: ModelServer, *extra: str) -> dict[str, object]:
    proc = tm_ask(repo, server, "add v to fetch_user", "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def _live(doc: dict[str, object]) -> list[dict[str, object]]:
    proposals = doc["proposals"]
    assert isinstance(proposals, list)
    return [p for p in proposals if p["status"] == "pending"]


def _follow_up(server: ModelServer) -> str:
    """The follow-up message, after checking that it continues the same conversation."""
    first, second = (r.body["messages"] for r in server.chat_requests)
    assert second[: len(first)] == first
    assert second[len(first)]["role"] == "assistant"
    assert len(second) == len(first) + 2 and second[-1]["role"] == "user"
    content: str = second[-1]["content"]
    return content


def _accept_lands(repo: Path, pid: str, path: str, expected: str) -> None:
    proc = tm(repo, "accept", pid)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / path).read_text() == expected
    assert tm(repo, "rebuild").returncode == 0


def test_syntax_error_then_fix(repo: Path, initialised: Initialise, server: ModelServer) -> None:
    initialised(FILES, commit=False)
    server.add(BROKEN, FIXED)
    doc = _ask(repo, server)
    assert len(server.chat_requests) == 2
    assert _follow_up(server) == (
        "[REPAIR ROUND 1 OF 1]\n"
        "tinymem could not use 1 block of your answer, for the reasons below. Everything else"
        " you sent was kept: do not repeat it.\n"
        "Answer with corrected blocks for these only, under the same rules: the file path in"
        " every fence, each changed definition complete, no placeholders.\n"
        "\n"
        "1. The block for app.py that starts `def fetch_user(uid:`: it does not parse:"
        " '(' was never closed at line 1, column 15\n"
        "   Lines 1-2 of that block:\n"
        "   1> def fetch_user(uid:\n"
        '   2      return {"id": uid, "v": 2}\n'
        "   Its current text (authoritative):\n"
        "### app.py::fetch_user\n"
        "```python path=app.py\n"
        "def fetch_user(uid):\n"
        '    return {"id": uid}\n'
        "```\n"
        "[END REPAIR]\n"
    )
    (fixed,) = _live(doc)
    assert fixed["round"] == 1 and fixed["blocked"] is None
    old = next(p for p in doc["proposals"] if p["status"] == "superseded")  # type: ignore[union-attr]
    assert fixed["repairs"] == old["id"] and old["superseded_by"] == [fixed["id"]]
    # Only what stands is pending: the broken first try is kept in the vault, not offered.
    status = json.loads(tm(repo, "status", "--json").stdout)
    assert status["pending_proposals"] == [fixed["id"]]
    _accept_lands(repo, str(fixed["id"]), "app.py", FIXED_APP)


def test_every_round_is_recorded_in_one_episode(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    server.add(BROKEN, FIXED)
    doc = _ask(repo, server)
    ep = str(doc["episode"])
    sent = [r.body["messages"] for r in server.chat_requests]
    conversation = json.loads(tm(repo, "show", ep, "--messages").stdout)
    assert conversation == sent[1]  # the last request holds every message, in order
    assert json.loads(tm(repo, "show", ep, "--messages", "--round", "0").stdout) == sent[0]
    assert tm(repo, "show", ep, "--response").stdout == BROKEN
    assert tm(repo, "show", ep, "--response", "--round", "1").stdout == FIXED
    for which in ("--response", "--messages"):
        missing = tm(repo, "show", ep, which, "--round", "2")
        assert missing.returncode == 2 and f"episode {ep} has no round 2" in missing.stderr
    shown = json.loads(tm(repo, "show", ep, "--json").stdout)
    assert "1 repair round" in shown["outcome"]
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    rounds = episode["details"]["rounds"]
    assert [r["round"] for r in rounds] == [0, 1]
    assert rounds[0]["sent_back"][0]["path"] == "app.py"
    # The reason recorded (and said on stderr) is the one the model was told.
    told = "does not parse: '(' was never closed at line 1, column 15"
    assert rounds[0]["sent_back"][0]["reason"] == told
    assert rounds[0]["follow_up_tokens"] > 0
    assert rounds[1]["usage"]["completion_tokens"] is not None


def test_elided_definition_then_complete(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    elided = (
        "```python path=app.py\n"
        "class Client:\n"
        "    # ... existing methods ...\n"
        "    def get(self, path):\n"
        "        return path.strip()\n"
        "```\n"
    )
    complete = (
        "```python path=app.py\n"
        "class Client:\n"
        "    def get(self, path):\n"
        "        return path.strip()\n"
        "```\n"
    )
    server.add(elided, complete)
    doc = _ask(repo, server)
    follow = _follow_up(server)
    assert "elided ('# ... existing methods ...')" in follow
    assert "### app.py::Client\n" in follow  # the whole current class, as hydration shows it
    (fixed,) = _live(doc)
    assert fixed["blocked"] is None and fixed["round"] == 1
    expected = PY_APP.replace("        return path\n", "        return path.strip()\n")
    _accept_lands(repo, str(fixed["id"]), "app.py", expected)


def test_elided_whole_file_then_complete_symbols(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    whole = PY_APP.replace('{"id": uid}', '{"id": uid, "v": 2}').replace(
        "        return (path, body)\n", "        # ... existing code ...\n        pass\n"
    )
    server.add(f"```python path=app.py\n{whole}```\n", FIXED)
    doc = _ask(repo, server)
    follow = _follow_up(server)
    assert (
        "elided ('# ... existing code ...'): a whole file with placeholders would delete code;"
        " give each changed definition complete instead"
    ) in follow
    assert "### app.py::fetch_user, app.py::Client\n" in follow
    (fixed,) = _live(doc)
    assert fixed["kind"] == "symbols" and fixed["round"] == 1
    _accept_lands(repo, str(fixed["id"]), "app.py", FIXED_APP)


def test_example_path_then_the_real_one(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    server.add(FIXED.replace("path=app.py", "path=path/to/file.py"), FIXED)
    doc = _ask(repo, server)
    follow = _follow_up(server)
    assert "1. The block for 'path/to/file.py': that is an example path" in follow
    (fixed,) = _live(doc)
    assert fixed["round"] == 1 and fixed["path"] == "app.py" and fixed["blocked"] is None
    _accept_lands(repo, str(fixed["id"]), "app.py", FIXED_APP)


def test_ambiguous_member_then_its_class(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    alone = "```python path=svc.py\ndef send(self, msg):\n    return msg.strip()\n```\n"
    inside = (
        "```python path=svc.py\n"
        "class Pager:\n"
        "    def send(self, msg):\n"
        "        return msg.strip().upper()\n"
        "```\n"
    )
    server.add(alone, inside)
    proc = tm_ask(repo, server, "make send strip", "--json")
    doc = json.loads(proc.stdout)
    follow = _follow_up(server)
    assert "`send` is ambiguous in svc.py: it could be Mailer.send, Pager.send;" in follow
    assert "ask again" not in follow  # that advice is for the user, not the model
    # Both candidates, each under its class header.
    assert (
        "### svc.py::Mailer.send, svc.py::Pager.send\n```python path=svc.py\n"
        "class Mailer:\n    def send(self, msg):\n        return msg\n⋮\n"
        "class Pager:\n    def send(self, msg):\n        return msg.upper()\n```\n"
    ) in follow
    (fixed,) = _live(doc)
    expected = SVC.replace("return msg.upper()", "return msg.strip().upper()")
    _accept_lands(repo, str(fixed["id"]), "svc.py", expected)


RESULT = """\
public class Result {
    public int success(int code) {
        return code;
    }

    public String success(String msg) {
        return msg;
    }
}
"""


def test_ambiguous_overload_then_a_diff(repo: Path, server: ModelServer) -> None:
    init_repo(repo, {"Result.java": RESULT}, commit=False)
    # A changed signature: both overloads are members of one name in one class, so the
    # class line decides nothing; a diff's lines do.
    alone = (
        "```java path=Result.java\npublic int success(long code) {\n"
        "    return (int) code;\n}\n```\n"
    )
    diff = (
        "```diff\n--- a/Result.java\n+++ b/Result.java\n@@ -2,3 +2,3 @@\n"
        "-    public int success(int code) {\n-        return code;\n"
        "+    public int success(long code) {\n+        return (int) code;\n     }\n```\n"
    )
    server.add(alone, diff)
    proc = tm_ask(repo, server, "let success take a long", "--json")
    assert proc.returncode == 0, proc.stderr
    follow = _follow_up(server)
    assert "`success` is ambiguous in Result.java" in follow
    assert "give the change as a unified diff against the text shown below" in follow
    assert "inside its class" not in follow
    (fixed,) = _live(json.loads(proc.stdout))
    expected = RESULT.replace(
        "int success(int code) {\n        return code;",
        "int success(long code) {\n        return (int) code;",
    )
    _accept_lands(repo, str(fixed["id"]), "Result.java", expected)


def test_bad_hunk_then_a_good_one(repo: Path, initialised: Initialise, server: ModelServer) -> None:
    initialised(FILES, commit=False)
    diff = (
        "```diff\n--- a/app.py\n+++ b/app.py\n@@ -6,2 +6,2 @@\n def fetch_user(uid):\n"
        '-    return {"{old}": uid}\n+    return {"id": uid, "v": 2}\n```\n'
    )
    server.add(diff.replace("{old}", "uid"), diff.replace("{old}", "id"))
    doc = _ask(repo, server)
    follow = _follow_up(server)
    assert "hunk 1 (@@ -6,2 +6,2 @@) matches nowhere in the current app.py" in follow
    assert "State Map" not in follow  # a word the model was never taught
    # The current lines around where the hunk was aimed.
    assert "of the current app.py (authoritative):\n```python path=app.py\n" in follow
    assert 'def fetch_user(uid):\n    return {"id": uid}\n' in follow
    (fixed,) = _live(doc)
    _accept_lands(repo, str(fixed["id"]), "app.py", FIXED_APP)


def test_a_second_failure_at_the_limit_stays_blocked(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    again = BROKEN.replace("uid:", "uid, :")
    server.add(BROKEN, again, FIXED)
    doc = _ask(repo, server, "--repair", "1")
    assert len(server.chat_requests) == 2  # the limit: no third call
    (last,) = _live(doc)
    assert last["round"] == 1 and last["blocked"] is not None and last["repairs"]
    ep = str(doc["episode"])
    assert tm(repo, "show", ep, "--response").stdout == BROKEN
    assert tm(repo, "show", ep, "--response", "--round", "1").stdout == again
    assert (repo / "app.py").read_text() == PY_APP


def test_two_rounds_when_allowed(repo: Path, initialised: Initialise, server: ModelServer) -> None:
    initialised(FILES, commit=False)
    server.add(BROKEN, BROKEN.replace("uid:", "uid, :"), FIXED)
    doc = _ask(repo, server, "--repair", "2")
    assert len(server.chat_requests) == 3
    (fixed,) = _live(doc)
    assert fixed["round"] == 2 and fixed["blocked"] is None
    assert "[REPAIR ROUND 2 OF 2]" in server.chat_requests[2].body["messages"][-1]["content"]
    _accept_lands(repo, str(fixed["id"]), "app.py", FIXED_APP)


def test_stale_target_spends_no_round(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    write(repo, "app.py", PY_APP.replace('{"id": uid}', '{"id": uid, "mine": 1}'))
    server.add(FIXED, FIXED)
    doc = _ask(repo, server)
    assert len(server.chat_requests) == 1
    (p,) = _live(doc)
    assert str(p["blocked"]).startswith("ETV: STALE")


def test_a_broken_block_or_a_bad_hunk_on_a_stale_target_spends_no_round(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    # Neither block parses nor applies, so its entities are unknown to the ETV gate; but it is
    # aimed at what the user changed, whose State Map text the follow-up would show as the
    # truth that the STATE NOTICE just excluded.
    initialised(FILES, commit=False)
    write(repo, "app.py", PY_APP.replace('{"id": uid}', '{"id": uid, "mine": 1}'))
    hunk = (
        "```diff\n--- a/app.py\n+++ b/app.py\n@@ -6,2 +6,2 @@\n def fetch_user(uid):\n"
        '-    return {"uid": uid}\n+    return {"id": uid, "v": 2}\n```\n'
    )
    for reply in (BROKEN, hunk):
        server.clear()
        server.add(reply, FIXED)
        doc = _ask(repo, server)
        assert len(server.chat_requests) == 1
        (p,) = _live(doc)
        assert p["blocked"] is not None and p["round"] == 0


def test_a_broken_block_beside_a_stale_entity_still_gets_its_round(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    write(repo, "svc.py", SVC.replace("msg.upper()", "msg.lower()"))  # Pager.send is STALE
    server.add(BROKEN, FIXED)
    doc = _ask(repo, server)
    assert len(server.chat_requests) == 2
    (fixed,) = _live(doc)
    _accept_lands(repo, str(fixed["id"]), "app.py", FIXED_APP)


def test_unsafe_path_is_refused_not_negotiated(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    server.add(FIXED.replace("path=app.py", "path=../outside.py"), FIXED)
    doc = _ask(repo, server)
    assert len(server.chat_requests) == 1
    assert doc["refused"] and not _live(doc)


def test_repair_zero_and_passing_replies_send_nothing_more(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    server.add(BROKEN, FIXED)
    doc = _ask(repo, server, "--repair", "0")
    assert len(server.chat_requests) == 1
    (p,) = _live(doc)
    assert p["blocked"] is not None
    server.clear()
    server.add(FIXED, FIXED)
    _ask(repo, server)
    assert len(server.chat_requests) == 1  # nothing was blocked: nothing to repair


def test_only_blocked_blocks_go_back_and_repeats_are_dropped(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    good = GOOD_SVC
    server.add(good + BROKEN, good + FIXED)  # the model repeats the block that passed
    doc = _ask(repo, server)
    follow = _follow_up(server)
    assert "1 block of your answer" in follow and "svc.py" not in follow
    live = _live(doc)
    assert sorted((p["path"], p["round"]) for p in live) == [("app.py", 1), ("svc.py", 0)]


def test_a_follow_up_over_the_budget_is_not_sent(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    padding = "# " + "x" * 70 + "\n"
    server.add(BROKEN.replace("def fetch_user", padding * 40 + "def fetch_user"), FIXED)
    proc = tm_ask(repo, server, "add v to fetch_user", "--budget", "900")
    assert proc.returncode == 0, proc.stderr
    assert len(server.chat_requests) == 1
    assert "the repair round was not sent" in proc.stderr and "budget of 900" in proc.stderr


def test_repair_setting_is_validated(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    proc = tm_ask(repo, server, "x", env={"TM_REPAIR": "9"})
    assert proc.returncode == 2 and "repair must be 0 to 5" in proc.stderr
    assert not server.chat_requests


def test_piped_output_says_what_went_back_on_stderr(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    server.add(BROKEN, FIXED)
    proc = tm_ask(repo, server, "add v to fetch_user")
    assert proc.returncode == 0, proc.stderr
    assert "tm: repair round 1: sent back to the model: app.py:" in proc.stderr
    assert "tm: repair round" not in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if line.count("\t") == 6)
    assert row.split("\t")[5].startswith("2 (repairs ")


def test_ctrl_c_during_a_repair_round_keeps_what_was_proposed(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    good = GOOD_SVC
    slow = ScriptedReply(text=FIXED * 40, chunk_size=4, chunk_delay=0.05)
    server.add(good + BROKEN, slow)
    env = {**os.environ, **MODEL_ENV, "COLUMNS": "200"}
    proc = Popen(
        [sys.executable, "-m", "tinymem", *ask_argv(server, "add v to fetch_user")],
        cwd=repo,
        stdout=PIPE,
        stderr=PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 60
    while len(server.chat_requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the repair reply is streaming
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Interrupted" in err and "Traceback" not in err
    episode = json.loads(git(repo, "show", "refs/tinymem/heads/main:episode/episode.json"))
    shown = json.loads(tm(repo, "show", episode["id"], "--json").stdout)
    proposals = [p for p in shown["proposals"] if p["status"] == "pending"]
    # Round 0's proposals, nothing from round 1.
    assert sorted((p["path"], p["round"]) for p in proposals) == [("app.py", 0), ("svc.py", 0)]
    assert episode["outcome"] == "aborted"
    partial = git(repo, "show", "refs/tinymem/heads/main:episode/response-1.txt")
    assert partial and partial != FIXED * 40


def test_accept_flag_applies_what_passes_at_the_end(
    repo: Path, initialised: Initialise, server: ModelServer
) -> None:
    initialised(FILES, commit=False)
    server.add(BROKEN, FIXED)
    proc = tm_ask(repo, server, "add v to fetch_user", "--accept")
    assert proc.returncode == 0, proc.stderr
    assert "promoted" in proc.stdout
    assert (repo / "app.py").read_text() == FIXED_APP
