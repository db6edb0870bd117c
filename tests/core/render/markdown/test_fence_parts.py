"""An open fence's HTML is made in parts (``fences.OpenFence``): the parts of lines whose colours are final are
made once and kept as the same objects, and the parts always join to the one-shot grouping of what the
highlighter shows (``code_block_html`` of its ``html``) — whatever the cut of the chunks, blank lines at the
block's end, long lines, a switch to plain text, or colours still pending in the lexer pool."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.core.render.highlight import MAX_LINE_CHARS, SEGMENT_MIN_LINES, SegmentCache
from app.core.render.lexers import format_segment, get_lexer
from app.core.render.markdown import render_markdown
from app.core.render.markdown.code_html import CODE_PIECE_LINES, code_block_html
from app.core.render.markdown.fences import OpenFence
from app.core.render.markdown.incremental import MarkdownStream


class _LatePool:
    """A lexer pool whose answers come only once :meth:`deliver` was called (``SegmentCache.lookup`` asks it)."""

    def __init__(self) -> None:
        self.open = False

    def request(self, lang: str, theme: str, code: str) -> str | None:
        if not self.open:
            return None
        lexer = get_lexer(lang)
        assert lexer is not None
        return format_segment(code, lexer, theme)

    def deliver(self) -> None:
        self.open = True


@contextmanager
def _checking() -> Iterator[list[list[str]]]:
    """Every ``OpenFence._parts`` call is checked against the one-shot grouping; the parts of each are kept."""
    seen: list[list[str]] = []
    original = OpenFence._parts

    def parts(self: OpenFence, partial: str) -> list[str]:
        out = original(self, partial)
        assert "".join(out) == code_block_html(self.hl.html(partial), self.lang, self.href, self.colors)
        seen.append(out)
        return out

    OpenFence._parts = parts  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        OpenFence._parts = original  # type: ignore[method-assign]


def _stream(text: str, cuts: list[int], pool: _LatePool | None = None, deliver_at: int = -1) -> MarkdownStream:
    s = MarkdownStream()
    if pool is not None:
        s._cache = SegmentCache(pool=pool)      # the renderer's highlighters ask this cache
    at = 0
    for k, cut in enumerate([*sorted(cuts), len(text)]):
        if k == deliver_at and pool is not None:
            pool.deliver()
        s.feed(text[at:cut])
        s.render()
        at = max(at, cut)
    return s


_LINES = ["def f(x):", "    return x + 1", "", "   ", "x = '<&>'", "# comment", "y" * 1_500, "z " * 700, "}", "\t"]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(["python", "", "nosuchlang"]), st.lists(st.sampled_from(_LINES), max_size=40),
       st.lists(st.integers(0, 3_000), max_size=25), st.booleans())
@example(lang="python", lines=["a", "", ""], cuts=[12, 13, 14], close=False)     # blank lines at the end
@example(lang="python", lines=["a"] * 17, cuts=[40], close=False)               # groups close on the 9th line
@example(lang="python", lines=["a"] * 159 + [""], cuts=[], close=False)   # a segment ends on a blank last line:
@example(lang="", lines=["a"] * 159 + [""], cuts=[], close=False)         # the block's end drops it and its newline
def test_the_parts_join_to_the_one_shot_grouping(lang: str, lines: list[str], cuts: list[int], close: bool) -> None:
    text = f"```{lang}\n" + "".join(line + "\n" for line in lines) + ("```\n" if close else "")
    with _checking() as checked:
        s = _stream(text, [c for c in cuts if c < len(text)])
    if not close:
        assert checked                                  # an open fence takes the fence's path
    s.finish()
    assert s.html == render_markdown(text)


def test_a_line_long_enough_for_plain_text_makes_the_kept_parts_again() -> None:
    code = "".join(f"v{i} = {i}\n" for i in range(40)) + "w" * (MAX_LINE_CHARS + 10) + "\n" + "tail = 1\n"
    text = "```python\n" + code
    with _checking() as checked:
        _stream(text, list(range(0, len(text), 97)))
    assert any("<span" in "".join(p[1:]) for p in checked)      # coloured (the header, part 0, has spans too) …
    assert "<span" not in "".join(checked[-1][1:])              # … and plain once the long line came


def test_colours_pending_in_the_pool_are_kept_only_once_known() -> None:
    code = "".join(f"def f{i}(x):\n    return x * {i}\n\n" for i in range(60))
    text = "```python\n" + code
    pool = _LatePool()
    with _checking() as checked:
        _stream(text, list(range(61, len(text), 61)), pool=pool, deliver_at=20)
    before = checked[19]
    assert "<span" not in "".join(before[1:])           # pending: shown plain, nothing kept but the header
    assert len(before) > 3 and all(p is not q for p, q in zip(before[1:], checked[18][1:], strict=False))
    assert "<span" in "".join(checked[-1][1:])          # delivered: coloured …
    assert checked[-1][3] is checked[-2][3]             # … and kept


def test_the_parts_of_finished_lines_are_the_same_objects_from_tick_to_tick() -> None:
    code = "".join(f"def f{i}(x, y):\n    return x * {i} + y  # line {i}\n\n" for i in range(400))
    text = "```python\n" + code
    with _checking() as checked:
        _stream(text, list(range(400, len(text), 400)))
    last, before = checked[-1], checked[-2]
    assert len(last) > 140                               # 1,200 lines: 150 groups and the header
    same = 0
    while same < len(before) and last[same] is before[same]:
        same += 1
    # made again: the parts of the open highlighting segment (24-160 lines) and the held line only
    assert same >= len(last) - (SEGMENT_MIN_LINES + 8) // CODE_PIECE_LINES - 2
