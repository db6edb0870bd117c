"""Pathological markdown (runs of emphasis and link openers, markdown-it's slow shapes): the streamed tail's
inline parse is bounded, the final render is still the one-shot one, and ordinary markdown is untouched."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.render.markdown import IncrementalMarkdown, render_markdown
from app.core.render.markdown.bounded import DELIMITERS, TAIL_DELIMITERS, _delimiters, parse_tail
from app.core.render.markdown.parser import normalize, parse
from tests.helpers import ANSWERS

SHAPES = {
    "emphasis": "**_* ",
    "link_openers": "[](",
    "mixed": "*_[*](_",
    "backticks": "` ``",
    "images": "![[(",
}


def _tokens_equal(a: list, b: list) -> bool:
    return [t.as_dict() for t in a] == [t.as_dict() for t in b]


@pytest.mark.parametrize("path", ANSWERS, ids=lambda p: p.stem)
def test_ordinary_markdown_parses_token_for_token_as_before(path) -> None:  # type: ignore[no-untyped-def]
    text = normalize(path.read_text(encoding="utf-8"))
    tokens, bounded = parse_tail(text, {})
    assert not bounded and _tokens_equal(tokens, parse(text, {}))


def test_a_long_list_dense_with_ordinary_markup_is_not_bounded() -> None:
    text = "".join(f"- item {i}: **bold** and `code`, see [doc](https://x.org/{i})\n" for i in range(800))
    tokens, bounded = parse_tail(text, {})
    assert not bounded and _tokens_equal(tokens, parse(text, {}))


@pytest.mark.parametrize("unit", SHAPES.values(), ids=SHAPES.keys())
def test_a_costly_shape_is_parsed_up_to_the_bound_and_shown_as_text_after(unit: str) -> None:
    text = (unit * (40_000 // len(unit) + 1))[:40_000]
    tokens, bounded = parse_tail(text, {})
    assert bounded
    inline = next(t for t in tokens if t.type == "inline")
    assert inline.content == text.strip()                           # nothing lost: the rest is plain text
    shown = "".join(c.content for c in inline.children if c.type == "text")
    assert shown.endswith(text.strip()[-200:])


@pytest.mark.parametrize("unit", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("step", [16, 333])
def test_streamed_equals_one_shot_for_costly_shapes(unit: str, step: int) -> None:
    text = "Intro.\n\n" + (unit * (12_000 // len(unit)))[:12_000] + "\n\nAfter **it**.\n"
    md = IncrementalMarkdown()
    for i in range(0, len(text), step):
        md.feed(text[i : i + step])
        md.render()
    while_streaming = md.tail_html
    md.finish()
    assert md.html == render_markdown(text)
    assert while_streaming or md.stable_blocks


def test_while_streaming_the_tail_past_the_bound_is_text_and_the_end_renders_it() -> None:
    head = "**_* " * (3 * TAIL_DELIMITERS)
    md = IncrementalMarkdown()
    md.feed(head + "then **bold**")
    md.render()
    assert "then **bold**" in md.tail_html                           # past the bound: as written
    md.feed("\n")
    md.finish()
    assert "<strong>bold</strong>" in md.html and md.html == render_markdown(md.text)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(parts=st.lists(st.sampled_from([*(u * 700 for u in SHAPES.values()), "\n\n", "# H\n", "text **b**\n",
                                       "```\ncode\n```\n", "| a |\n|---|\n| 1 |\n", "\n"]), min_size=1, max_size=8),
       size=st.integers(min_value=40, max_value=400))
def test_streamed_equals_one_shot_with_costly_shapes_mixed_in(parts: list[str], size: int) -> None:
    text = "".join(parts)
    md = IncrementalMarkdown()
    for i in range(0, len(text), size):
        md.feed(text[i : i + size])
        md.render()
    md.finish()
    assert md.html == render_markdown(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("*_[]()!`<>~\\$^-.a \n]")) | st.characters(), max_size=200))
def test_delimiters_are_counted_one_by_one(text: str) -> None:
    """The delimiter count that decides whether a tail is bounded is the number of characters of ``DELIMITERS``
    in the text (counted by one scan, not character by character)."""
    assert _delimiters(text) == sum(1 for c in text if c in DELIMITERS)
