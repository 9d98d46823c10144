from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tinymem.ledger import Episode, Transition, encode_files, encode_transitions
from tinymem.records import State

_TEXT = st.text(max_size=12)
_TRANSITION = st.builds(
    Transition,
    entity=_TEXT,
    from_state=st.none() | st.sampled_from(State),
    to_state=st.sampled_from(State),
    artifact=st.text("0123456789abcdef", min_size=40, max_size=40),
    reason=_TEXT,
)


_FILE = st.builds(lambda s, m: {"snapshot": s, "meta": m}, st.none() | _TEXT, _TEXT)
_FILES = st.dictionaries(_TEXT, _FILE, max_size=5)


@given(
    st.lists(_TRANSITION, max_size=6),
    st.lists(st.lists(_TRANSITION, max_size=4), max_size=4),
    _FILES,
    st.lists(_FILES, max_size=4),
    st.booleans(),
    st.dictionaries(_TEXT, st.integers() | _TEXT),
    _TEXT,
)
def test_records_encoded_elsewhere_are_recorded_as_if_encoded_here(
    own: list[Transition],
    batches: list[list[Transition]],
    own_files: dict[str, dict[str, str | None]],
    file_batches: list[dict[str, dict[str, str | None]]],
    in_path_order: bool,
    details: dict[str, object],
    summary: str,
) -> None:
    # Worker processes encode their transitions and file entries (`tm init`); the record
    # must be the one a single json.dumps of everything gives, and read back the same. The
    # file parts of `tm init` come in path order; any other order or overlap is merged.
    files = dict(own_files)
    if in_path_order:  # as from consecutive chunks of sorted paths, and nothing else
        merged = {p: v for b in file_batches for p, v in b.items()}
        ordered = sorted(merged)
        size = -(-len(ordered) // 3) or 1
        file_batches = [
            {p: merged[p] for p in ordered[i : i + size]} for i in range(0, len(ordered), size)
        ]
        files = {}
    episode = Episode(
        kind="init",
        summary=summary,
        files=dict(files),
        transitions=list(own),
        encoded_transitions=[encode_transitions(b) for b in batches],
        encoded_files=[encode_files(b) for b in file_batches],
        details=dict(details),
    )
    for batch in file_batches:
        files.update(batch)  # a later part wins, as dict.update would
    everything = own + [t for b in batches for t in b]
    expected = {
        "version": 1,
        "id": episode.id,
        "kind": "init",
        "time": episode.time,
        "who": "",
        "summary": summary,
        "outcome": "ok",
        "branch": "",
        "head": None,
        "files": {p: files[p] for p in sorted(files)},
        "proposals": {},
        "transitions": [t.to_json() for t in everything],
        "details": details,
    }
    data = episode.to_bytes()
    assert data == json.dumps(expected, ensure_ascii=False).encode() + b"\n"
    assert Episode.from_bytes(data).transitions == everything
