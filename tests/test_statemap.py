from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tinymem.records import Confidence, Source, State
from tinymem.statemap import EntityRecord, FileMeta

_TEXT = st.text(max_size=10)
_OID = st.text("0123456789abcdef", min_size=40, max_size=40)
_RECORD = st.builds(
    EntityRecord,
    symbol=_TEXT,
    kind=_TEXT,
    start=st.integers(0, 10**6),
    end=st.integers(0, 10**6),
    artifact=_OID,
    state=st.sampled_from(State),
    confidence=st.sampled_from(Confidence),
    source=st.sampled_from(Source),
    episode=_TEXT,
    time=_TEXT,
    reason=st.none() | _TEXT,
    base=st.none() | _OID,
    superseded=st.lists(_OID, max_size=3).map(tuple),
)


@given(
    st.lists(_RECORD, max_size=5),
    _TEXT,
    st.none() | _TEXT,
    st.booleans(),
    st.booleans(),
)
def test_a_file_record_reads_back_as_written_with_sorted_keys(
    records: list[EntityRecord], path: str, reason: str | None, deleted: bool, executable: bool
) -> None:
    meta = FileMeta(
        path=path,
        snapshot="0" * 40,
        kind="code",
        language="python",
        method="tree-sitter",
        clean=reason is None,
        reason=reason,
        deleted=deleted,
        executable=executable,
        entities={r.symbol: r for r in records},
    )
    data = meta.to_bytes()
    assert FileMeta.from_bytes(data) == meta
    # Written without sort_keys, in sorted order all the same (git show stays diffable).
    assert data == json.dumps(json.loads(data), sort_keys=True, ensure_ascii=False).encode() + b"\n"
