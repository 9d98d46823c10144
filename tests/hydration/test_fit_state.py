"""Fitting the rendered state to the room (`hydrate.fit_state`, #29): the drops it makes
without rendering are those rendering after each drop makes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tinymem.hydration.hydrate import _framed, estimate_tokens, fit_state


def _candidate(path: str, key: str) -> Any:
    return SimpleNamespace(meta=SimpleNamespace(path=path), key=key)


def _renderer(sizes: dict[str, int], header: dict[str, int], renders: list[int]) -> Any:
    """A file's part depends only on its own chosen entities, as `_state_section`'s does
    (its header, each entity's text, a `⋮` line between two)."""

    def render(chosen: list[Any]) -> dict[str, str]:
        renders.append(len(chosen))
        parts: dict[str, str] = {}
        for c in chosen:
            parts[c.meta.path] = parts.get(c.meta.path, "x" * header[c.meta.path]) + "y" * (
                sizes[c.key] + 3
            )
        return parts

    return render


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 400)), max_size=40),
    st.lists(st.integers(0, 60), min_size=6, max_size=6),
    st.integers(0, 3000),
)
def test_the_drops_are_those_of_rendering_after_each(
    entities: list[tuple[int, int]], headers: list[int], room: int
) -> None:
    sizes = {f"e{k}": size for k, (_, size) in enumerate(entities)}
    header = {f"f{f}.py": h for f, h in enumerate(headers)}
    chosen = [_candidate(f"f{f}.py", f"e{k}") for k, (f, _) in enumerate(entities)]
    want_chosen, want_mapped = list(chosen), []
    renders: list[int] = []
    render = _renderer(sizes, header, renders)
    state = _framed(render(want_chosen))
    while want_chosen and estimate_tokens(state) > room:
        want_mapped.insert(0, want_chosen.pop())
        state = _framed(render(want_chosen))
    linear = len(renders)
    renders.clear()
    got_chosen, got_mapped = list(chosen), []
    got = fit_state(got_chosen, got_mapped, room, render)
    assert got == state
    assert got_chosen == want_chosen
    assert got_mapped == want_mapped
    assert len(renders) <= linear
