"""A catch-up slice is parsed once: an open table, list or quote that ends among a slice's lines is closed from the
parse its ``advance`` made (``ParseMemo``), and a table the tail's render opened is closed from that render's
pieces (``OpenTable.open`` with its HTML), not parsed again. Each still equals the one-shot render."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.render.markdown import IncrementalMarkdown, render_markdown
from app.core.render.markdown import parser as parser_mod
from app.core.render.markdown import tables as tables_mod
from app.core.render.markdown.html import TABLE_WIDTH_ROWS
from app.core.render.markdown.parser import ParseMemo
from tests.helpers.markdown import record_closes, stream_markdown


def _table(rows: int) -> str:
    return "| # | name | value |\n|---:|:---|---|\n" + "".join(f"| {i} | row *{i}* | `v{i}` |\n" for i in range(rows))


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every source the fast paths parse (they parse through ``parser.parse``; the tail's own parse does not)."""
    seen: list[str] = []
    real = parser_mod.parse

    def spy(src: str, env: dict) -> list:  # type: ignore[type-arg]
        seen.append(src)
        return real(src, env)

    monkeypatch.setattr(parser_mod, "parse", spy)
    return seen


def _table_closes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each ``OpenTable.close`` made the table stable (True) or left it to a parse of the tail."""
    return record_closes(monkeypatch, tables_mod.OpenTable)


def _two_slices(text: str, cut: str) -> IncrementalMarkdown:
    """A renderer fed ``text`` in two slices cut at a line end, up to ``cut`` (exclusive) then the rest, rendered
    after each (as catch-up slices are); not finished."""
    i = text.index(cut)
    md = IncrementalMarkdown(theme="light")
    for piece in (text[:i], text[i:]):
        md.feed(piece)
        md.render()
    return md


@pytest.mark.parametrize("block", [
    _table(30),
    "".join(f"- item {i} with *emphasis*\n" for i in range(30)),
    "".join(f"> line {i} of a quote with `code`\n" for i in range(30)),
], ids=["table", "list", "quote"])
def test_a_block_that_ends_in_a_slice_is_parsed_once_for_advance_and_close(
        block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "Intro.\n\n" + block + "\nAfter the block, a paragraph.\n\nAnd one more.\n"
    lines = block.splitlines(keepends=True)
    first, second = "".join(lines[:20]), "".join(lines[20:])
    seen = _spy(monkeypatch)
    md = IncrementalMarkdown(theme="light")
    md.feed("Intro.\n\n" + first)
    md.render()
    md.feed(lines[20])            # one more line: the fast path is open and advances
    md.render()
    del seen[:]
    md.feed(second[len(lines[20]):] + "\nAfter the block, a paragraph.\n\nAnd one more.\n")
    md.render()                   # the block ends among these lines: advance gives up, close makes it stable
    assert seen, "the fast path parsed nothing"
    assert len(seen) == len(set(seen)), [len(s) for s in seen]   # no source parsed twice
    md.finish()
    assert md.html == render_markdown(text)


def test_the_memo_gives_a_parse_back_once_and_only_when_kept() -> None:
    memo = ParseMemo()
    refs: dict = {}
    a, _ = memo.parse("| a |\n|---|\n| 1 |\n", refs)
    b, _ = memo.parse("| a |\n|---|\n| 1 |\n", refs)
    assert b is not a                                 # not kept: parsed again
    memo.keep()
    c, _ = memo.parse("| a |\n|---|\n| 1 |\n", refs)
    assert c is b                                     # kept: given back …
    d, _ = memo.parse("| a |\n|---|\n| 1 |\n", refs)
    assert d is not c                                 # … once
    memo.keep()
    e, _ = memo.parse("| a |\n|---|\n| 1 |\n", dict(refs))
    assert e is not d                                 # other references: parsed again
    memo.keep()
    f, _ = memo.parse("| a |\n|---|\n| 2 |\n", refs)
    assert f is not e                                 # another source: parsed again


def test_a_table_the_tail_opened_is_closed_from_its_pieces_in_the_next_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = 4 * TABLE_WIDTH_ROWS
    text = "Intro.\n\n" + _table(rows) + "\nAfter the table.\n"
    closed = _table_closes(monkeypatch)
    # the first slice: the tail's parse opens the table (no fast path ran yet); the second: it ends, and is
    # closed from the pieces the tail's render made
    md = _two_slices(text, f"| {rows - 4} |")
    assert closed == [True]
    md.finish()
    assert md.html == render_markdown(text)


@pytest.mark.parametrize(("after", "fast"), [
    ("\n$$\nx^2\n$$\n\nThe end.\n", True),                       # after the blank line that ends the table
    ("\nThen \\[ a \\] and $$b$$ inline.\n\nThe end.\n", True),
    ("$$\nx^2\n$$\n\nThe end.\n", False),                         # among its lines: no blank line between
])
def test_a_formula_after_a_table_leaves_it_to_its_fast_close_only_past_the_blank_line(
        after: str, fast: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = 4 * TABLE_WIDTH_ROWS
    text = "Intro.\n\n" + _table(rows) + after
    closed = _table_closes(monkeypatch)
    md = _two_slices(text, f"| {rows - 4} |")
    assert closed == [fast]
    md.finish()
    assert md.html == render_markdown(text)


# what may follow a table: formulas, reasoning tags, references, other blocks, blank lines
_AFTER = ["$$\nx^2\n$$\n", "$$", "\\[ a \\]\n", "\\[\n", "<think>hm</think>\n", "<think>\n", "\n", "para *x*\n",
          "- item\n", "> q\n", "| 9 | a | b |\n", "```\ncode\n```\n", "[r]: /u\n", "    indented\n", "# h\n",
          "text $$y$$ z\n"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.integers(min_value=0, max_value=40), after=st.lists(st.sampled_from(_AFTER), max_size=8),
       sizes=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=5),
       reads=st.lists(st.booleans(), min_size=1, max_size=3))
def test_a_streamed_table_and_what_follows_it_equal_the_one_shot_render(rows: int, after: list[str], sizes: list[int],
                                                                        reads: list[bool]) -> None:
    text = "Intro.\n\n" + "| # | name | value |\n|---:|:---|---|\n" + "".join(
        f"| {i} | row *{i}* [r] | `v{i}` |\n" for i in range(rows)) + "".join(after)
    assert stream_markdown(text, sizes, reads).html == render_markdown(text)
