"""How close each note's text is to a request, by embeddings (`tinymem.embedModel`).

One embedding call per ask: the request's text and, batched with it, the notes whose vectors
are not cached. Vectors are cached in `.git/tinymem/embeddings.json` by the SHA-256 of the
model's name and the text: a cache, never the truth (unreadable or corrupt: rebuilt).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from tinymem.config import Embedding
from tinymem.errors import TinymemError
from tinymem.notes.model import Note

__all__ = ["CACHE_NAME", "Similar", "cosine", "similar"]

CACHE_NAME = "embeddings.json"
_VERSION = 1


@dataclass(frozen=True)
class Similar:
    scores: dict[str, float]  # note id → cosine with the request
    notice: str | None = None  # why no score came (the ask goes on by words)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        return 0.0
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)


def _key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()


def _load(path: str) -> dict[str, list[float]]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    vectors = data.get("vectors") if isinstance(data, dict) else None
    if data.get("version") != _VERSION or not isinstance(vectors, dict):
        return {}
    out: dict[str, list[float]] = {}
    for key, vec in vectors.items():
        if isinstance(vec, list) and vec and all(isinstance(x, int | float) for x in vec):
            out[str(key)] = [float(x) for x in vec]
    return out


def _save(path: str, vectors: dict[str, list[float]]) -> None:
    """Temp file + rename: a reader sees the old cache or the new, never half of one. A cache
    that cannot be written is only a slower next ask."""
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".embeddings-", dir=directory)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"version": _VERSION, "vectors": vectors}, f)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def similar(
    notes: Sequence[Note], prompt: str, setting: Embedding, cache_dir: str | None
) -> Similar:
    """Each note's cosine with `prompt`. Never raises a model's failure: an endpoint that is
    down or refuses gives no scores and a one-line notice, and recall goes on by words."""
    if not notes:
        return Similar({})
    path = os.path.join(cache_dir, CACHE_NAME) if cache_dir else None
    cached = _load(path) if path else {}
    keys = {n.id: _key(setting.model, n.text) for n in notes}
    missing = list(dict.fromkeys(n.text for n in notes if keys[n.id] not in cached))
    from tinymem.llm import embed, endpoint_name

    try:
        vectors = embed(
            setting.model, [prompt, *missing], api_base=setting.api_base, timeout=setting.timeout
        )
    except TinymemError as exc:
        where = endpoint_name(setting.model, setting.api_base)
        return Similar(
            {},
            f"the embedding model {setting.model} at {where} failed, so notes are recalled by"
            f" their words only: {exc}",
        )
    asked, fresh = vectors[0], vectors[1:]
    for text, vec in zip(missing, fresh, strict=True):
        cached[_key(setting.model, text)] = vec
    if path and missing:
        # Only the vectors of notes that exist now: the cache never grows past the notes.
        _save(path, {k: cached[k] for k in set(keys.values())})
    return Similar({n.id: cosine(asked, cached[keys[n.id]]) for n in notes})
