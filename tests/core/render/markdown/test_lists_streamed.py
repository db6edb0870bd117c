"""A long top-level list is cut into pieces of ``LIST_GROUP_ITEMS`` items, and while it streams only its last items
are parsed and rendered again (``lists.OpenList``) — and any chunking still gives the one-shot render."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.render.markdown import PIECE, IncrementalMarkdown, render_markdown
from app.core.render.markdown import lists as lists_mod
from app.core.render.markdown.list_html import LIST_GROUP_ITEMS
from tests.helpers.markdown import record_closes, stream_markdown

K = LIST_GROUP_ITEMS


def _tasks(n: int) -> str:
    return "".join(f"- [{'x' if i % 3 == 0 else ' '}] task number {i}, with **bold** text\n" for i in range(n))


#: Shapes whose later lines change what the earlier items of the list look like, or end it oddly.
CASES = {
    "task list": _tasks(40) + "\nAfter the list.\n",
    "lazy continuation lines": "".join(f"- item {i}\nlazy line {i}\n" for i in range(30)) + "\nAfter.\n",
    "tight, then loose": "".join(f"- item {i}\n" for i in range(20)) + "\n" + "- more\n" * 9,
    "loose from the start": "".join(f"- item {i}\n\n" for i in range(30)) + "end\n",
    "loose, one item in the last piece": "".join(f"- item {i}\n\n" for i in range(4 * K + 1)) + "end\n",
    "loose inside an item": "".join(f"- item {i}\n" for i in range(10)) + "- para\n\n  second\n- x\n- y\n",
    "nested lists": "".join(f"- item {i}\n  - sub a\n  - sub b\n" for i in range(20)) + "\nAfter.\n",
    "ordered, starting at 3": "Steps:\n" + "".join(f"{i + 3}. item {i}\n" for i in range(30)) + "\nAfter.\n",
    "ordered with )": "".join(f"{i + 1}) item {i}\n" for i in range(20)),
    "code in items": "".join(f"- item {i}\n  ```py\n  x = {i}\n  ```\n" for i in range(20)) + "\nAfter.\n",
    "quote in items": "".join(f"- item {i}\n  > quoted {i}\n  > more\n" for i in range(20)),
    "a first task late": "".join(f"- item {i}\n" for i in range(20)) + "- [ ] task\n" + "- last\n",
    "another marker": "".join(f"- item {i}\n" for i in range(10)) + "".join(f"* star {i}\n" for i in range(10)),
    "a late reference": "".join(f"- item [{i}][r]\n" for i in range(10)) + "\n[r]: /url\n",
    "a reference in an item": "".join(f"- [{i}][r]\n" for i in range(9)) + "- [r]: /u\n" + "- [x][r]\n" * 9,
    "a paragraph then a rule": "".join(f"- item {i}\n" for i in range(10)) + "para\n---\n",
    "a thematic break": "".join(f"* item {i}\n" for i in range(10)) + "* * *\n" + "* it\n" * 9,
    "ends while open": "".join(f"- item {i}\n" for i in range(30)),
    "a heading after": "".join(f"- item {i}\n" for i in range(30)) + "# Head\ntext\n",
    "formulas": "".join(f"- item $x_{i}$\n" for i in range(10)) + "- $$\n  y\n  $$\n" + "- item\n" * 10,
    "empty items": "".join("-\n" if i % 5 == 0 else f"- item {i}\n" for i in range(30)),
    "a list in a quote": "> " + "".join(f"- q {i}\n> " for i in range(20)) + "\n\nafter\n",
}


def test_long_top_level_lists_are_pieces_of_k_items_with_the_list_margins_at_the_ends() -> None:
    out = render_markdown("".join(f"{i + 3}. item {i}\n" for i in range(2 * K + 1)))
    pieces = out.split(PIECE)
    assert len(pieces) == 3
    assert [p.count("<li>") for p in pieces] == [K, K, 1]
    assert pieces[0].startswith('<ol start="3" style="margin-bottom:0">')
    assert pieces[1].startswith(f'<ol start="{3 + K}" style="margin-top:0;margin-bottom:0">')
    assert pieces[2].startswith(f'<ol start="{3 + 2 * K}" style="margin-top:0">')
    assert PIECE not in render_markdown("".join(f"- item {i}\n" for i in range(K)))    # short: one piece
    nested = render_markdown("- top\n" + "".join(f"  - sub {i}\n" for i in range(3 * K)))
    assert PIECE not in nested                                                          # nested: never cut
    tasks = render_markdown("- plain\n" * K + "- [ ] task\n").split(PIECE)
    assert all("list-style-type:none" in p.split(">")[0] for p in tasks)                # no bullets in any piece


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(sizes=st.lists(st.integers(min_value=1, max_value=48), min_size=1, max_size=12),
       reads=st.lists(st.booleans(), min_size=1, max_size=6))
def test_streamed_lists_equal_the_one_shot_render_at_any_chunking(sizes: list[int], reads: list[bool]) -> None:
    for name, text in CASES.items():
        assert stream_markdown(text, sizes, reads).html == render_markdown(text), name


def test_streamed_lists_equal_the_one_shot_render_one_char_at_a_time() -> None:
    for name, text in CASES.items():
        assert stream_markdown(text, [1], [True]).html == render_markdown(text), name


def test_streamed_lists_equal_the_one_shot_render_line_by_line() -> None:
    for name, text in CASES.items():
        md = IncrementalMarkdown(theme="light")
        for line in text.splitlines(keepends=True):
            md.feed(line)
            md.render()
        md.finish()
        assert md.html == render_markdown(text), name


_item = st.sampled_from([
    "- item *{i}*\n", "- [ ] task {i}\n", "- [x] done {i}\n", "- item {i}\nlazy {i}\n", "- item {i}\n\n",
    "- item {i}\n  - sub {i}\n", "- item {i}\n  ```\n  c{i}\n  ```\n", "- item `{i}`\n  > q\n", "- \n",
    "- item [{i}]\n", "* star {i}\n", "para {i}\n", "\n", "1. one {i}\n", "- item {i}\n  second line\n",
])


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(items=st.lists(_item, min_size=1, max_size=40),
       sizes=st.lists(st.integers(min_value=1, max_value=32), min_size=1, max_size=12),
       reads=st.lists(st.booleans(), min_size=1, max_size=6))
def test_random_lists_equal_the_one_shot_render(items: list[str], sizes: list[int], reads: list[bool]) -> None:
    text = "".join(item.format(i=i) for i, item in enumerate(items)) + "\n[3]: /three\n"
    assert stream_markdown(text, sizes, reads).html == render_markdown(text)


def test_an_open_list_costs_its_new_items_per_render_not_all_of_them(monkeypatch) -> None:
    text = _tasks(400) + "\nAfter the list.\n"
    md = IncrementalMarkdown(theme="light")
    per_render = []
    for line in text.splitlines(keepends=True):
        before = md.items_rendered
        md.feed(line)
        md.render()
        per_render.append(md.items_rendered - before)
    md.finish()
    assert md.html == render_markdown(text)
    assert max(per_render[20:-2]) <= 2 * K + 1      # the last group, the one before it, the new item
    closed = record_closes(monkeypatch, lists_mod.OpenList)
    md = stream_markdown(text, [40], [True])
    assert closed and closed[-1]                 # the list ended while streaming: made from its pieces
    assert md.html == render_markdown(text)


def test_the_final_groups_of_an_open_list_are_final_pieces_of_the_tail() -> None:
    md = IncrementalMarkdown(theme="light")
    md.feed("Intro:\n" + "".join(f"- item {i}\n" for i in range(10 * K)) + "- last")
    md.render()
    pieces = md.tail_html.split(PIECE)
    final = md.tail_final_pieces
    assert 1 + 8 * K // K <= final < len(pieces)     # the intro, and every group but the last two or one
    md.feed(" item\n" + "".join(f"- more {i}\n" for i in range(3 * K)))
    md.render()
    assert md.tail_html.split(PIECE)[:final] == pieces[:final]     # final pieces never changed
    assert md.tail_final_pieces > final


def test_a_loose_list_shows_every_item_with_a_paragraph_while_it_streams() -> None:
    md = IncrementalMarkdown(theme="light")
    for i in range(6 * K):
        md.feed(f"- item {i}\n\n")
        md.render()
        if i > 1:
            assert len(re.findall(r"<li>\s*<p>", md.tail_html)) == md.tail_html.count("<li>") == i + 1


def test_a_list_turning_loose_renders_every_item_with_paragraphs() -> None:
    text = "".join(f"- item {i}\n" for i in range(6 * K)) + "\n- loose now\n"
    md = IncrementalMarkdown(theme="light")
    for line in text.splitlines(keepends=True):
        md.feed(line)
        md.render()
    assert len(re.findall(r"<li>\s*<p>", md.tail_html)) == 6 * K + 1
    md.finish()
    assert md.html == render_markdown(text)


def test_when_the_fast_path_gives_up_the_list_is_re_parsed_under_the_big_tail_throttle() -> None:
    """A last item too long for the fast path (a long code block in it) leaves the list to the full parse of
    the tail, which waits like any big tail's (here the clock stands still: only growth lets it run)."""
    text = "".join(f"- item {i}\n" for i in range(100)) + "- code:\n\n  ```\n" + "  x = 1\n" * 1500 + "  ```\n"
    md = IncrementalMarkdown(theme="light", clock=lambda: 0.0)
    full = renders = 0
    for line in text.splitlines(keepends=True):
        before = md.items_rendered
        md.feed(line)
        md.render()
        renders += 1
        full += md.items_rendered - before > 50
    md.finish()
    assert md.html == render_markdown(text)
    assert renders > 1500 and full < 40


def test_a_list_that_arrives_with_the_blocks_before_it_in_one_chunk() -> None:
    """The render that cuts the finished blocks off the tail also opens the list's fast path (its items' lines
    must count from the list, not from where the tail began)."""
    text = "First paragraph.\n\nSecond one.\n\n" + _tasks(5 * K + 1) + "\nAfter the list.\n"
    for size in (300, 500, 700):
        assert stream_markdown(text, [size], [True]).html == render_markdown(text), size
