"""Segmented highlighting: the streamed (incremental) result equals the one-shot one; limits; themes."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core import highlight as hl
from app.core.highlight import IncrementalHighlighter, SegmentCache, highlight_code, split_segments

PY = '''def f(x):
    """Doc string
    over lines."""
    return x * 2


class A:
    pass
'''


def test_segments_cover_all_lines() -> None:
    lines = (PY * 40).split("\n")
    segs = split_segments(lines)
    assert segs[0][0] == 0 and segs[-1][1] == len(lines)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(segs))
    assert all(e - s <= hl.SEGMENT_MAX_LINES for s, e in segs)
    assert len(segs) > 1


def test_inline_styles_no_classes() -> None:
    out = highlight_code(PY, "python", "light")
    assert "<span style=" in out and "class=" not in out
    assert out.count("\n") == PY.count("\n")
    assert highlight_code(PY, "python", "dark") != out


def test_unknown_language_and_limits_give_plain_text() -> None:
    assert highlight_code("a < b\n", "no-such-language", "light") == "a &lt; b\n"
    assert highlight_code("a < b\n", "", "light") == "a &lt; b\n"
    long_line = "x = '" + "a" * (hl.MAX_LINE_CHARS + 1) + "'\n"
    assert "<span" not in highlight_code(long_line, "python", "light")


@settings(max_examples=30, deadline=None)
@given(batches=st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=40), reps=st.integers(1, 30))
def test_incremental_highlighter_matches_one_shot_at_segment_boundaries(batches: list[int], reps: int) -> None:
    code = PY * reps
    lines = code.split("\n")[:-1]
    inc = IncrementalHighlighter("python", "light", SegmentCache())
    i = n = 0
    while i < len(lines):
        step = batches[n % len(batches)]
        inc.add_lines(lines[i : i + step])
        i += step
        n += 1
    # frozen segments are exact; everything equals the one-shot render once re-highlighted in full
    frozen = "".join(inc._frozen)
    assert highlight_code(code, "python", "light").startswith(frozen)


def test_cache_reuses_segments() -> None:
    cache = SegmentCache()
    code = PY * 20
    first = highlight_code(code, "python", "light", cache)
    assert highlight_code(code, "python", "light", cache) == first
    assert len(cache._data) >= 1
