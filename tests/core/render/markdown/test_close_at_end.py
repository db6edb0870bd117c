"""A reply that ends inside a table, list or quote the fast paths hold: ``finish`` makes the block stable from its
rendered pieces (``close(..., at_end=…)``), without a parse of the whole block, and the HTML equals the one-shot
render — with or without a last line end, whatever the chunking."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.render.markdown import IncrementalMarkdown, render_markdown
from app.core.render.markdown import incremental as incremental_mod


def _table(n: int) -> str:
    return "| # | name | value |\n|---:|:---|---|\n" + "".join(f"| {i} | row *{i}* | `v{i}` |\n" for i in range(n))


SHAPES = {
    "table": _table,
    "bullets": lambda n: "".join(f"- item **{i}** with `code`\n" for i in range(n)),
    "tasks": lambda n: "".join(f"- [{'x' if i % 3 else ' '}] task {i} *done*\n" for i in range(n)),
    "ordered": lambda n: "".join(f"{i + 3}. step {i} of the plan\n" for i in range(n)),
    "loose": lambda n: "".join(f"* point {i}\n\n" for i in range(n)).rstrip("\n") + "\n",
    "quote": lambda n: "".join(f"> quoted line {i} with *words*\n" for i in range(n)),
}


def _stream(text: str, step: int, spy: list[int]) -> IncrementalMarkdown:
    md = IncrementalMarkdown(theme="light")
    for i in range(0, len(text), step):
        md.feed(text[i:i + step])
        md.render()
    spy.clear()                      # what finish parses of the tail
    md.finish()
    return md


@pytest.fixture
def tail_parses(monkeypatch) -> list[int]:
    """The characters of each tail ``_stabilize`` parses (the ordinary path at ``finish``)."""
    seen: list[int] = []
    real = incremental_mod.MarkdownStream._stabilize

    def spy(self, src, tokens=None):  # type: ignore[no-untyped-def]
        seen.append(len(src))
        return real(self, src, tokens)

    monkeypatch.setattr(incremental_mod.MarkdownStream, "_stabilize", spy)
    return seen


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("last_line_end", [True, False])
def test_a_reply_ending_in_a_long_block_is_closed_without_parsing_it_again(shape, last_line_end, tail_parses):
    text = "Intro paragraph.\n\n" + SHAPES[shape](120)
    if not last_line_end:
        text = text.rstrip("\n")
    md = _stream(text, 11, tail_parses)
    assert md.html == render_markdown(text)
    assert tail_parses == []                                 # the block was not parsed whole at the end


def test_a_short_table_at_the_end_takes_the_ordinary_path(tail_parses) -> None:
    text = _table(4)                 # fewer rows than set a table's widths: not split, no fast path
    md = _stream(text, 5, tail_parses)
    assert md.html == render_markdown(text)
    assert tail_parses == [len(text)]


@settings(max_examples=60, deadline=None)
@given(shape=st.sampled_from(sorted(SHAPES)), n=st.integers(1, 40), step=st.integers(1, 60),
       cut=st.integers(0, 30), before=st.sampled_from(["", "Intro.\n\n", "# Title\n\nSome *text*.\n\n"]))
def test_a_reply_cut_anywhere_in_a_block_equals_its_one_shot_render(shape, n, step, cut, before) -> None:
    text = before + SHAPES[shape](n)
    text = text[: max(1, len(text) - cut)]            # ends mid-line, mid-row, mid-marker (a stopped reply)
    md = IncrementalMarkdown(theme="light")
    for i in range(0, len(text), step):
        md.feed(text[i:i + step])
        md.render()
    md.finish()
    assert md.html == render_markdown(text)
