"""Segmented highlighting: the streamed (incremental) result equals the one-shot one; limits; themes."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.render import highlight as hl
from app.core.render.highlight import IncrementalHighlighter, SegmentCache, highlight_code, split_segments

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
@given(batches=st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=40), reps=st.integers(4, 30))
def test_incremental_highlighter_matches_one_shot_at_segment_boundaries(batches: list[int], reps: int) -> None:
    code = PY * reps                     # ≥ 4 repetitions: ≥ 32 lines, so at least one segment is finished
    lines = code.split("\n")[:-1]
    inc = IncrementalHighlighter("python", "light", SegmentCache())
    i = n = 0
    while i < len(lines):
        step = batches[n % len(batches)]
        inc.add_lines(lines[i : i + step])
        i += step
        n += 1
    # the finished segments are exact: a prefix of the one-shot render, as long as the one-shot segments
    segments = split_segments(lines)
    assert len(segments) >= 2
    *finished, _open = segments
    one_shot = highlight_code(code, "python", "light")
    frozen = inc.frozen_html
    assert frozen.count("\n") == finished[-1][1]
    assert one_shot.startswith(frozen)
    # and the whole block (finished + provisional) has every line
    assert inc.html().count("\n") + 1 == one_shot.count("\n") == len(lines)


def test_cache_reuses_segments() -> None:
    cache = SegmentCache()
    code = "".join(PY.replace("x * 2", f"x * {i}") for i in range(20))    # no two segments alike
    n = len(split_segments(code.split("\n")[:-1]))
    assert n > 1
    first = highlight_code(code, "python", "light", cache)
    assert (cache.hits, cache.misses) == (0, n)
    assert highlight_code(code, "python", "light", cache) == first
    assert (cache.hits, cache.misses) == (n, n)                    # the second render lexed nothing
    assert highlight_code(code, "python", "dark", cache) != first
    assert cache.misses == 2 * n                                   # a theme is part of the key


def test_cache_is_bounded_and_forgets_the_least_recently_used() -> None:
    cache = SegmentCache(max_entries=2)
    a, b, c = "a = 1\n", "b = 2\n", "c = 3\n"
    for seg in (a, b, a, c):              # c evicts b (a was used more recently)
        cache.highlight(seg, "python", "light")
    misses = cache.misses
    cache.highlight(a, "python", "light")
    assert cache.misses == misses         # a is still there
    cache.highlight(b, "python", "light")
    assert cache.misses == misses + 1     # b was evicted
