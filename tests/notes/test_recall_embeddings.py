"""Recall by embeddings (`tinymem.embedModel`): against the loopback server's fake
`/v1/embeddings`, whose vectors come from hashed words and a synonym table the test sets."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.conftest import MODEL_ENV, tm
from tests.modelserver import ModelServer, embed_vector
from tinymem.hydration.memory import note_words, recall
from tinymem.notes.model import Anchor, Note
from tinymem.notes.store import add_note
from tinymem.notesimilar import CACHE_NAME, cosine
from tinymem.repository import open_repo

NOTE = "Tokens expire hourly."
ASK = "when do credentials lapse"
SYNONYMS = {"tokens": "token", "credentials": "token", "lapse": "expire"}


def _note(nid: str, kind: str, text: str, *on: str) -> Note:
    return Note(
        id=nid,
        kind=kind,
        text=text,
        anchors=tuple(Anchor(t, "0" * 40) for t in on),
        key=None,
        scope="project",
        created="2026-01-01T00:00:00Z",
        updated="2026-01-01T00:00:00Z",
        deleted=None,
        source="user",
        episode="e",
    )


def _dry(repo: Path, server: ModelServer, prompt: str, **env: str) -> tuple[dict[str, object], str]:
    proc = tm(
        repo,
        *("ask", "--dry-run", "--json", "-m", "openai/test", "--api-base", server.openai_base),
        prompt,
        env={**MODEL_ENV, **env},
    )
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc, proc.stderr


def _inputs(server: ModelServer) -> list[list[str]]:
    return [list(r.body["input"]) for r in server.embedding_requests]


def test_the_fake_vectors_are_close_only_through_shared_or_synonym_words() -> None:
    assert not note_words(NOTE) & note_words(ASK)  # nothing for word recall to find
    assert cosine(embed_vector(NOTE, SYNONYMS), embed_vector(ASK, SYNONYMS)) > 0.5
    assert cosine(embed_vector(NOTE), embed_vector(ASK)) < 0.5


def test_closeness_recalls_a_note_with_no_shared_word_and_ranks_with_words() -> None:
    far = _note("f2", "fact", "Ports are ints.")
    close = _note("f1", "fact", NOTE)
    assert recall([far, close], {}, [], ASK, 1000).shown == ()
    assert recall([far, close], {}, [], ASK, 1000, {"f1": 0.58, "f2": 0.1}).shown == ("f1",)
    # Below CLOSE, closeness adds nothing; a shared word and closeness beat a shared word.
    assert recall([close], {}, [], ASK, 1000, {"f1": 0.49}).shown == ()
    a, b = _note("a", "fact", "ports here"), _note("b", "fact", "ports there")
    assert recall([a, b], {}, [], "ports", 1000, {"b": 0.9}).shown == ("b", "a")
    # An anchored decision still comes by its anchor only, however close.
    anchored = _note("d1", "decision", NOTE, "app.py::fetch_user")
    assert recall([anchored], {}, [], ASK, 1000, {"d1": 0.99}).shown == ()


def test_embed_model_set_recalls_by_closeness_and_caches_note_vectors(
    inited: Path, server: ModelServer
) -> None:
    server.synonyms.update(SYNONYMS)
    store = open_repo(str(inited))
    fact = add_note(store, "fact", NOTE)
    add_note(store, "fact", "Ports are ints.")
    constraint = add_note(store, "constraint", "Keep every public function synchronous.")
    env = {"TM_EMBED_MODEL": "openai/embed"}
    doc, stderr = _dry(inited, server, ASK, **env)
    assert doc["notes"] == [constraint.id, fact.id]
    assert "embedding" not in stderr
    # One call: the request and, batched with it, every note recalled by words (not the
    # constraint, which always comes); the chat model's endpoint, as apiBase says.
    assert _inputs(server) == [[ASK, NOTE, "Ports are ints."]]
    assert server.embedding_requests[0].model == "embed"
    assert (Path(store.cache_dir) / CACHE_NAME).is_file()
    # A second ask embeds only its request: the notes' vectors come from the cache.
    doc, _ = _dry(inited, server, ASK, **env)
    assert doc["notes"] == [constraint.id, fact.id]
    assert _inputs(server)[1:] == [[ASK]]
    # A corrupt cache is rebuilt, never an error.
    (Path(store.cache_dir) / CACHE_NAME).write_text("{not json")
    doc, _ = _dry(inited, server, ASK, **env)
    assert doc["notes"] == [constraint.id, fact.id]
    assert _inputs(server)[2:] == [[ASK, NOTE, "Ports are ints."]]


def test_unset_makes_no_call_and_recalls_by_words(inited: Path, server: ModelServer) -> None:
    server.synonyms.update(SYNONYMS)
    store = open_repo(str(inited))
    add_note(store, "fact", NOTE)
    doc, stderr = _dry(inited, server, ASK)
    assert doc["notes"] == [] and stderr == ""
    assert server.embedding_requests == []
    assert not (Path(store.cache_dir) / CACHE_NAME).exists()


def test_an_unreachable_embedding_endpoint_falls_back_to_words_with_one_line(
    inited: Path, server: ModelServer
) -> None:
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    store = open_repo(str(inited))
    add_note(store, "fact", NOTE)
    worded = add_note(store, "fact", "Credentials live in the keyring.")
    env = {"TM_EMBED_MODEL": "openai/embed", "TM_EMBED_API_BASE": dead}
    doc, stderr = _dry(inited, server, ASK, **env)
    assert doc["notes"] == [worded.id]
    lines = stderr.splitlines()
    assert len(lines) == 1 and "recalled by their words only" in lines[0]
    assert "cannot reach" in lines[0]
    assert server.embedding_requests == []


def test_a_failing_embedding_endpoint_does_not_fail_the_ask(
    inited: Path, server: ModelServer
) -> None:
    server.embed_failure = "server_error"
    store = open_repo(str(inited))
    add_note(store, "fact", NOTE)
    doc, stderr = _dry(inited, server, ASK, TM_EMBED_MODEL="openai/embed")
    assert doc["notes"] == []
    assert len(stderr.splitlines()) == 1 and "words only" in stderr
