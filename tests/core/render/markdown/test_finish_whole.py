"""A finished text fed in one piece (a saved reply, a render-ahead job) is parsed once at ``finish``, not once as
the tail and again as stable blocks (app/core/render/markdown/incremental.py, ``MarkdownStream.finish``); the
HTML equals the one-shot render, and a stream's open table or list still closes from its pieces."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.render.markdown import IncrementalMarkdown, incremental, render_markdown, stable_runs


@pytest.fixture
def parses(monkeypatch) -> list[int]:
    """The length of each source the renderer parses (whole-tail or stable parses, or a stable run's again)."""
    seen: list[int] = []
    real_parse, real_tail = incremental.parse, incremental.parse_tail

    def parse(src: str, *a: Any, **k: Any) -> Any:
        seen.append(len(src))
        return real_parse(src, *a, **k)

    def parse_tail(src: str, *a: Any, **k: Any) -> Any:
        seen.append(len(src))
        return real_tail(src, *a, **k)

    monkeypatch.setattr(incremental, "parse", parse)
    monkeypatch.setattr(incremental, "parse_tail", parse_tail)
    monkeypatch.setattr(stable_runs, "parse", parse)
    return seen


def test_a_text_fed_whole_is_parsed_once_and_equals_the_one_shot_render(parses, corpus_dir) -> None:
    for path in sorted((corpus_dir / "answers").glob("*.md")):
        text = path.read_text(encoding="utf-8") + "\n\nThe end.\n"      # ends in a paragraph: no open block
        parses.clear()
        md = IncrementalMarkdown(final_text=True)
        md.feed(text)
        md.finish()
        assert md.html == render_markdown(text), path.name
        assert sum(parses) <= len(text), (path.name, parses)


HEADS = {"table": "| n | sq |\n|---:|---:|\n" + "".join(f"| {k} | {k * k} |\n" for k in range(9)),
         "list": "".join(f"- item {k}\n" for k in range(9)),
         "quote": "".join(f"> line {k}\n" for k in range(9)),
         "fence": "```python\n" + "".join(f"x_{k} = {k}\n" for k in range(9))}
ENDS = {"table": "| 9 | 81 |\n", "list": "- item nine\n", "quote": "> the last line\n", "fence": "x_9 = 9\n```\n"}


@pytest.mark.parametrize("shape", sorted(HEADS))
def test_a_block_open_in_a_stream_still_ends_right_when_more_came_before_the_end(parses, shape: str) -> None:
    end = ENDS[shape]
    text = "Intro.\n\n" + HEADS[shape] + end
    md = IncrementalMarkdown()
    md.feed(text[: len(text) - len(end)])
    md.render()                                  # the open block's pieces are rendered
    md.feed(end)
    md.finish()
    assert md.html == render_markdown(text)


def test_finish_keeps_the_open_tails_state_until_release_spent() -> None:
    """Freeing a streamed table's open state took 6-10 ms of the reply's last frame: finish keeps it, and the
    view frees it later (``release_spent``)."""
    import weakref

    text = "Intro.\n\n| k | v |\n|---|---:|\n" + "".join(f"| {k} | {k * k} |\n" for k in range(300))
    md = IncrementalMarkdown()
    for i in range(0, len(text), 200):
        md.feed(text[i : i + 200])
        md.render()
    table = md._answer._table
    assert table is not None
    gone = weakref.ref(table)
    del table
    md.finish()
    assert gone() is not None                     # kept past the last frame
    assert md.html == render_markdown(text)
    md.release_spent()
    assert gone() is None                         # freed now
    md.release_spent()                            # idempotent
