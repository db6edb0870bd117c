"""An open paragraph that grows by letters is appended to, not parsed again (``words.OpenWord``): each render
while it does shows the one-shot render of the text so far, and any chunking still ends in the one-shot render."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.core.render.markdown import IncrementalMarkdown, render_markdown
from app.core.render.markdown import incremental as incremental_mod
from app.core.render.markdown.oneshot import render_blocks
from app.core.render.markdown.words import OpenWord


def _fast(md: IncrementalMarkdown) -> bool:
    return isinstance(md._answer._block, OpenWord)


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every source the tail parser is given from now on (``incremental.parse_tail``)."""
    parses: list[int] = []
    real = incremental_mod.parse_tail

    def counted(src: str, env: dict[str, Any]) -> Any:
        parses.append(len(src))
        return real(src, env)

    monkeypatch.setattr(incremental_mod, "parse_tail", counted)
    return parses


def test_a_growing_word_is_appended_to_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    parses = _count_parses(monkeypatch)
    text = "A word: " + "x" * 60_000
    md = IncrementalMarkdown(theme="light")
    for i in range(0, len(text), 400):
        md.feed(text[i:i + 400])
        md.render()
        assert md.html == render_markdown(text[:i + 400])
    assert _fast(md)
    assert len(parses) <= 2, parses            # the first renders, until it ends in 16 letters
    md.feed(" and more\n\nafter\n")             # anything but letters: parsed again, as before
    md.render()
    md.finish()
    assert md.html == render_markdown(text + " and more\n\nafter\n")


def test_a_word_that_ends_its_paragraph_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its line end, then a blank line: the paragraph is stable as it was shown; only what follows is parsed."""
    parses = _count_parses(monkeypatch)
    text = "A word: " + "x" * 60_000 + "\n\nafter *it*\n\nmore\n"
    md = IncrementalMarkdown(theme="light")
    for i in range(0, len(text), 7):
        md.feed(text[i:i + 7])
        md.render()
    md.finish()
    assert md.html == render_markdown(text)
    assert max(parses[2:]) < 100, parses[:4]    # after the first renders, only the lines after the word


#: Pieces of text where letters after letters might (but must not) change the parse: amounts of money, formulas,
#: emphasis and ``_`` inside words, entities, code spans, line ends, a table or heading to come.
_PARTS = ["x" * 20, "abc", "bn", "$4", "$", "_", "*", "**", "`", "&amp", ";", " ", "\n", "\n\n", "---", "|", "#",
          "- ", "~~", "[", "](", ")", "\\", "<think>", "</think>", "1."]


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_PARTS), min_size=1, max_size=30), st.lists(st.integers(1, 40), min_size=1,
                                                                             max_size=5))
@example(parts=["*", "x" * 20, "*"], sizes=[1])                  # a closer after the letters
@example(parts=["x" * 20, "\n---\n\n"], sizes=[20, 6])       # a line end, then a setext underline
@example(parts=["x" * 20, "\n\n", "x" * 20], sizes=[3])              # a blank line: the paragraph is done
def test_any_text_streamed_shows_the_one_shot_render_while_appended_to(parts: list[str], sizes: list[int]) -> None:
    text = "".join(parts)
    md = IncrementalMarkdown(theme="light")
    i = n = 0
    while i < len(text):
        size = sizes[n % len(sizes)]
        md.feed(text[i:i + size])
        md.render()
        i, n = i + size, n + 1
        if _fast(md):                            # (a possible reasoning tag is held back by the reply: the
            answer = md._answer                  # answer's own text is what it shows)
            fed = "".join(run.src for run in answer._runs) + answer._tail_source()
            assert answer.html == "".join(render_blocks(fed, "light")[0]), (text[:i], fed)
    md.finish()
    assert md.html == render_markdown(text)
