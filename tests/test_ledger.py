from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tinymem.ledger import Episode, Transition, encode_transitions
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


@given(
    st.lists(_TRANSITION, max_size=6),
    st.lists(st.lists(_TRANSITION, max_size=4), max_size=4),
    st.dictionaries(_TEXT, st.fixed_dictionaries({"snapshot": st.none() | _TEXT, "meta": _TEXT})),
    st.dictionaries(_TEXT, st.integers() | _TEXT),
    _TEXT,
)
def test_transitions_encoded_elsewhere_are_recorded_as_if_encoded_here(
    own: list[Transition],
    batches: list[list[Transition]],
    files: dict[str, dict[str, str | None]],
    details: dict[str, object],
    summary: str,
) -> None:
    # Worker processes encode their transitions (`tm init`); the record must be the one a
    # single json.dumps of every transition gives, and read back to the same transitions.
    episode = Episode(
        kind="init",
        summary=summary,
        files=files,
        transitions=list(own),
        encoded_transitions=[encode_transitions(b) for b in batches],
        details=dict(details),
    )
    everything = own + [t for b in batches for t in b]
    expected = {
        "version": 1,
        "id": episode.id,
        "kind": "init",
        "time": episode.time,
        "who": "",
        "summary": summary,
        "outcome": "ok",
        "files": {p: files[p] for p in sorted(files)},
        "proposals": {},
        "transitions": [t.to_json() for t in everything],
        "details": details,
    }
    data = episode.to_bytes()
    assert data == json.dumps(expected, ensure_ascii=False).encode() + b"\n"
    assert Episode.from_bytes(data).transitions == everything
