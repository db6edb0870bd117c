"""Quotes nested past ``QUOTE_DEEP_LEVEL`` show the rest as literal text: Qt lays nested tables (a quote's bar is a
table cell) out in time exponential in their depth, and a line of thousands of ``>`` froze the window."""

from __future__ import annotations

import re

from app.core.render.markdown import IncrementalMarkdown, render_markdown
from app.core.render.markdown.parser import QUOTE_DEEP_LEVEL


def _max_table_depth(html: str) -> int:
    depth = deepest = 0
    for tag in re.findall(r"</?table\b", html):
        depth += -1 if tag.startswith("</") else 1
        deepest = max(deepest, depth)
    return deepest


def _quote_bars(html: str) -> int:
    """Quotes drawn (each has one bar cell)."""
    return html.count('<td width="3"')


def test_thousands_of_nested_quotes_are_capped_for_display_and_keep_their_text() -> None:
    text = "Deep:\n\n" + "> " * 5_000 + "bottom\n\nafter\n"
    out = render_markdown(text)
    assert _quote_bars(out) == QUOTE_DEEP_LEVEL and _max_table_depth(out) <= 2   # one table of bars + code header
    plain = re.sub(r"<[^>]+>", "", out)
    assert "bottom" in plain and "after" in plain and plain.count("&gt;") >= 5_000 - QUOTE_DEEP_LEVEL
    md = IncrementalMarkdown()
    for i in range(0, len(text), 9):
        md.feed(text[i:i + 9])
        md.render()
        assert _quote_bars(md.html) <= QUOTE_DEEP_LEVEL           # while it streams too
    md.finish()
    assert md.html == out


def test_quotes_up_to_the_cap_are_quotes() -> None:
    text = "> " * (QUOTE_DEEP_LEVEL - 1) + "three levels in\n"
    out = render_markdown(text)
    assert _quote_bars(out) == QUOTE_DEEP_LEVEL - 1 and "<pre" not in out
    assert _max_table_depth(out) == 1                # one inside the other and nothing else: one table draws them


def test_a_quote_with_more_than_a_quote_inside_is_a_table_inside_a_table() -> None:
    """Only quotes that hold nothing but the next one share a table; the text and the quotes' order are kept."""
    first = render_markdown("> outer text\n>\n> > > inner\n>\n> after\n")
    assert re.sub(r"<[^>]+>", "", first).split() == ["outer", "text", "inner", "after"]
    assert _quote_bars(first) == 3 and _max_table_depth(first) == 2     # outer, then the two inner ones together
    then = render_markdown("> > inner\n>\n> outer after\n")        # a quote, then text after it
    assert re.sub(r"<[^>]+>", "", then).split() == ["inner", "outer", "after"]
    assert _quote_bars(then) == 2 and _max_table_depth(then) == 2
    second = render_markdown("> > > four\n")
    assert _quote_bars(second) == 3 and _max_table_depth(second) == 1
