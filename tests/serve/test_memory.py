"""What `tm serve` does about its memory: the first build of a large relevance index runs in a
child process, and a request's freed heap pages go back to the system (glibc only)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import tinymem.hydration.index as index_module
from tinymem.serve import memory


@pytest.fixture
def settled() -> Iterator[None]:
    memory.settle()
    try:
        yield
    finally:
        index_module.build_in_child(None)


def test_serve_builds_a_large_index_in_a_child(settled: None) -> None:
    assert index_module._CHILD_MIN_FILES == memory._CHILD_MIN_FILES
    # One batch of the in-process build is no larger than what the child would spare.
    assert memory._CHILD_MIN_FILES >= index_module._FILES_PER_BATCH


def test_short_lived_commands_build_in_their_own_process() -> None:
    assert index_module._CHILD_MIN_FILES is None


def test_giving_memory_back_is_safe_everywhere() -> None:
    memory.give_back()
    if Path("/proc/self/maps").exists() and memory._LIBC is not None:
        assert memory._LIBC.malloc_trim(0) in (0, 1)


def test_a_request_s_cycles_are_collected_once_it_is_answered() -> None:
    """With litellm's ~390,000 objects in the collector's oldest generation, a full collection
    took ~1 s and so ran rarely: the cycles requests left (their frames, blobs, repositories)
    piled up between them. They are set aside (`preload`), and `give_back` collects."""
    import gc
    import weakref

    class Node:
        pass

    gone: list[bool] = []
    gc.disable()  # no automatic collection in between
    try:
        a, b = Node(), Node()
        a.other, b.other = b, a  # type: ignore[attr-defined]
        weakref.finalize(a, gone.append, True)
        del a, b
        assert gone == []
        memory.give_back()
        assert gone == [True]
    finally:
        gc.enable()
