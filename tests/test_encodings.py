"""Encodings and file kinds: bytes that are neither in the reply nor in the file are never
written; line endings stay as the work tree has them; binary files get no text."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, init_repo, tm, tm_ask
from tests.modelserver import ModelServer

LATIN1 = b'# caf\xe9 au lait\n\n\ndef fetch_user(uid):\n    return {"id": uid}\n'


def _ask(repo: Path, server: ModelServer, reply: str) -> dict[str, object]:
    server.add(reply)
    proc = tm_ask(repo, server, "change fetch_user", "--json")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    assert isinstance(prop, dict)
    return prop


def test_replacement_characters_never_overwrite_latin1_bytes(
    repo: Path, server: ModelServer
) -> None:
    init_repo(repo, {"notes.txt": b"caf\xe9\nsecond line\n"})
    # The model was shown U+FFFD for the byte it could not decode, and copies it back.
    prop = _ask(repo, server, "```text path=notes.txt\ncaf\ufffd\nsecond line, longer\n```\n")
    assert "not UTF-8" in str(prop["blocked"])
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 5 and "not UTF-8" in proc.stderr
    assert (repo / "notes.txt").read_bytes() == b"caf\xe9\nsecond line\n"


def test_a_whole_latin1_file_is_taken_only_by_its_complete_symbols(
    repo: Path, server: ModelServer
) -> None:
    init_repo(repo, {"app.py": LATIN1})
    whole = LATIN1.decode("utf-8", "replace").replace('{"id": uid}', '{"id": uid, "v": 2}')
    prop = _ask(repo, server, f"```python path=app.py\n{whole}```\n")
    assert "not UTF-8" in str(prop["blocked"])
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 0, proc.stderr
    assert "only its complete symbols were spliced" in proc.stdout
    assert (repo / "app.py").read_bytes() == LATIN1.replace(b'{"id": uid}', b'{"id": uid, "v": 2}')


def test_a_symbol_of_a_latin1_file_is_spliced_into_its_own_bytes(
    repo: Path, server: ModelServer
) -> None:
    init_repo(repo, {"app.py": LATIN1})
    new = 'def fetch_user(uid):\n    return {"id": uid, "v": 2}\n'
    prop = _ask(repo, server, f"```python path=app.py\n{new}```\n")
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "app.py").read_bytes() == LATIN1.replace(b'{"id": uid}', b'{"id": uid, "v": 2}')


def test_diff_shows_undecodable_bytes(repo: Path, server: ModelServer) -> None:
    init_repo(repo, {"notes.txt": b"caf\xe9\nsecond line\n"})
    prop = _ask(repo, server, "```text path=notes.txt\ncafe\nsecond line\n```\n")
    diff = tm(repo, "diff", str(prop["id"]))
    assert diff.returncode == 0, diff.stderr
    assert "-caf\\xe9" in diff.stdout and "+cafe" in diff.stdout


def test_crlf_work_tree_keeps_its_line_endings(repo: Path, server: ModelServer) -> None:
    crlf = b'def fetch_user(uid):\r\n    return {"id": uid}\r\n\r\n\r\n'
    crlf += b"def other():\r\n    return 1\r\n"
    git(repo, "config", "core.autocrlf", "true")
    init_repo(repo, {"app.py": crlf})
    assert (repo / "app.py").read_bytes() == crlf
    new = 'def fetch_user(uid):\n    return {"id": uid, "v": 2}\n'
    prop = _ask(repo, server, f"```python path=app.py\n{new}```\n")
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "app.py").read_bytes() == crlf.replace(b'{"id": uid}', b'{"id": uid, "v": 2}')
    assert tm(repo, "status", "--check").returncode == 0


def test_binary_files_get_no_text(repo: Path, server: ModelServer) -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    init_repo(repo, {"logo.dat": data})
    prop = _ask(repo, server, "```text path=logo.dat\nhello\n```\n")
    assert "binary" in str(prop["blocked"])
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 5 and "binary" in proc.stderr
    assert (repo / "logo.dat").read_bytes() == data


def test_files_too_large_to_read_as_code_get_no_model_text(repo: Path, server: ModelServer) -> None:
    # A minified bundle: one line past the size tm reads as code. It has no entities and was
    # never shown; splicing into it would parse megabytes on every ask and accept.
    line = "".join(f"var a{i}=function(x){{return x+{i}}};" for i in range(40_000))
    data = line.encode()[: (1 << 20) + 4096] + b"\n"
    init_repo(repo, {"bundle.js": data})
    for reply in (
        "```js\n// bundle.js\nfunction added(x) {\n  return x + 1;\n}\n```\n",
        "bundle.js\n```js\n<<<<<<< SEARCH\nvar a0=function(x){return x+0};\n=======\n"
        "var a0=function(x){return x};\n>>>>>>> REPLACE\n```\n",
    ):
        asked = len(server.chat_requests)
        prop = _ask(repo, server, reply)
        assert "larger than the 1 MB tm reads as code" in str(prop["blocked"])
        assert len(server.chat_requests) == asked + 1  # no repair round: the model cannot mend it
        proc = tm(repo, "accept", str(prop["id"]))
        assert proc.returncode == 5 and "larger than" in proc.stderr
        assert (repo / "bundle.js").read_bytes() == data


COOKIE_LATIN1 = (
    b"# -*- coding: latin-1 -*-\n# caf\xe9 cr\xe8me\n\n\n"
    b"def greet(name):\n    return 'bonjour ' + name\n\n\n"
    b"def other():\n    return '\xe0 bient\xf4t'\n"
)


def test_a_file_declaring_latin1_is_refused_alike_at_ask_and_accept(
    repo: Path, server: ModelServer
) -> None:
    """Model text is UTF-8; spliced into a file its coding line says is latin-1 it would read
    as other characters. Ask and accept refuse it in the same sentence, whatever the form."""
    init_repo(repo, {"app.py": COOKIE_LATIN1})
    whole = COOKIE_LATIN1.decode("latin-1").replace("bonjour", "salut")
    for reply in (
        "```python path=app.py\ndef greet(name):\n    return 'salut ' + name\n```\n",
        "```python path=app.py\ndef greet(name):\n    return 'salut ch\u00e8re ' + name\n```\n",
        f"```python path=app.py\n{whole}```\n",
        "app.py\n```python\n<<<<<<< SEARCH\n    return 'bonjour ' + name\n=======\n"
        "    return 'salut ' + name\n>>>>>>> REPLACE\n```\n",
    ):
        server.add(reply)
        proc = tm_ask(repo, server, "change greet", "--json", "--repair", "1")
        assert proc.returncode == 0, proc.stderr
        (prop,) = json.loads(proc.stdout)["proposals"]
        sentence = "app.py declares the latin-1 encoding in its coding line"
        assert sentence in str(prop["blocked"]), prop
        accepted = tm(repo, "accept", str(prop["id"]))
        assert accepted.returncode == 5 and sentence in accepted.stderr, accepted
        assert (repo / "app.py").read_bytes() == COOKIE_LATIN1
    # The model cannot mend the file's encoding: no repair round was asked for.
    assert len(server.chat_requests) == 4


def test_a_file_declaring_utf8_is_edited(repo: Path, server: ModelServer) -> None:
    source = "# -*- coding: utf-8 -*-\n# café\n\n\ndef greet(name):\n    return 'bonjour ' + name\n"
    init_repo(repo, {"app.py": source.encode()})
    prop = _ask(
        repo, server, "```python path=app.py\ndef greet(name):\n    return 'chère ' + name\n```\n"
    )
    assert prop["blocked"] is None, prop
    proc = tm(repo, "accept", str(prop["id"]))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "app.py").read_text() == source.replace("bonjour", "chère")


CRLF_APP = (
    b'import os\r\n\r\n\r\ndef fetch_user(uid):\r\n    return {"id": uid}\r\n\r\n\r\n'
    b"def other():\r\n    return 1\r\n"
)
BOM_APP = b'\xef\xbb\xbfimport os\n\n\ndef fetch_user(uid):\n    return {"id": uid}\n'


def _whole(repo: Path, server: ModelServer, path: str, text: str, added: str) -> bytes:
    """The file once a whole-file reply (`text` with `added` appended to its first line) is
    accepted."""
    first, rest = text.split("\n", 1)
    server.add(f"```{path.rsplit('.', 1)[-1]} path={path}\n{first}\n{added}\n{rest}```\n")
    proc = tm_ask(repo, server, "change it", "--json")
    assert proc.returncode == 0, proc.stderr
    (prop,) = json.loads(proc.stdout)["proposals"]
    done = tm(repo, "accept", str(prop["id"]))
    assert done.returncode == 0, done.stderr
    assert tm(repo, "status", "--check").returncode == 0
    return (repo / path).read_bytes()


def test_a_whole_file_reply_keeps_the_files_crlf_line_endings(
    repo: Path, server: ModelServer
) -> None:
    """No filter converts them (git stores the CRLF): the reply's lines get them, or every
    line of the file would change."""
    init_repo(repo, {"app.py": CRLF_APP, "notes.txt": b"one\r\ntwo\r\n"})
    text = CRLF_APP.decode().replace("\r\n", "\n")
    out = _whole(repo, server, "app.py", text, "import sys")
    assert out == CRLF_APP.replace(b"import os\r\n", b"import os\r\nimport sys\r\n")
    assert _whole(repo, server, "notes.txt", "one\ntwo\n", "one and a half") == (
        b"one\r\none and a half\r\ntwo\r\n"
    )


def test_a_whole_file_reply_keeps_the_files_bom(repo: Path, server: ModelServer) -> None:
    init_repo(repo, {"app.py": BOM_APP})
    out = _whole(repo, server, "app.py", BOM_APP[3:].decode(), "import sys")
    assert out == BOM_APP.replace(b"import os\n", b"import os\nimport sys\n")
