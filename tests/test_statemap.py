from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tinymem.paths import fsck_wants_blob
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
    st.none() | _TEXT,
    _TEXT,
)
def test_a_file_record_reads_back_as_written_with_sorted_keys(
    records: list[EntityRecord],
    path: str,
    reason: str | None,
    deleted: bool,
    executable: bool,
    language: str | None,
    method: str,
) -> None:
    meta = FileMeta(
        path=path,
        snapshot="0" * 40,
        kind="code",
        language=language,
        method=method,
        clean=reason is None,
        reason=reason,
        deleted=deleted,
        executable=executable,
        entities={r.symbol: r for r in records},
    )
    data = meta.to_bytes()
    assert FileMeta.from_bytes(data) == meta
    # Written by hand, byte for byte what json.dumps writes with sorted keys (git show stays
    # diffable), in the documented shape.
    doc = json.loads(data)
    indent = 1 if fsck_wants_blob(path.rpartition("/")[2]) else None
    assert data == json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=indent).encode() + (
        b"\n"
    )
    for record in meta.entities.values():  # the last of equal symbols
        assert doc["entities"][record.symbol]["span"] == [record.start, record.end]
        assert set(doc["entities"][record.symbol]) == {
            "artifact", "base", "confidence", "episode", "kind", "reason", "source", "span",
            "state", "superseded", "time",
        }  # fmt: skip


def test_the_record_of_a_gitattributes_file_has_no_line_git_fsck_refuses() -> None:
    # fsck reads any blob named .gitattributes as attributes: no line over 2048 bytes.
    record = EntityRecord(
        symbol="@file",
        kind="file",
        start=0,
        end=10,
        artifact="1" * 40,
        state=State.AUTHORITATIVE,
        confidence=Confidence.CONFIRMED,
        source=Source.USER,
        episode="e" * 12,
        time="2026-11-21T00:00:00.000000Z",
        superseded=tuple(f"{i:040x}" for i in range(200)),
    )
    for path in ("docs/.gitattributes", ".GitAttributes", "sub/.gitmodules", "GITATT~1"):
        meta = FileMeta(
            path, "1" * 40, "text", None, "none", True, None, entities={"@file": record}
        )
        data = meta.to_bytes()
        assert max(map(len, data.split(b"\n"))) < 2048
        assert FileMeta.from_bytes(data) == meta
    plain = FileMeta("docs/gitattributes.md", "1" * 40, "text", None, "none", True, None)
    assert plain.to_bytes().count(b"\n") == 1
