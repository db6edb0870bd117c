"""An open table that ends while streaming becomes a stable block from its rendered row groups, without a parse of
the whole table (``OpenTable.close``), and equals the one-shot render."""

from __future__ import annotations

from app.core.render.markdown import IncrementalMarkdown, render_markdown
from app.core.render.markdown import tables as tables_mod


def _table(rows: int) -> str:
    return "| # | name | value |\n|---:|:---|---|\n" + "".join(f"| {i} | row *{i}* | `v{i}` |\n" for i in range(rows))


def test_a_streamed_table_that_ends_is_closed_from_its_groups_and_equals_one_shot(monkeypatch) -> None:
    closed: list[int] = []
    real = tables_mod.OpenTable.close

    def spy(self, *a, **k):  # type: ignore[no-untyped-def]
        out = real(self, *a, **k)
        if out is not None:
            closed.append(out[2])
        return out

    monkeypatch.setattr(tables_mod.OpenTable, "close", spy)
    for rows, after in ((40, "\nAfter the table.\n"), (41, "# A heading after it\n"), (300, "\n- a list\n")):
        text = _table(rows) + after
        md = IncrementalMarkdown(theme="light")
        for i in range(0, len(text), 7):
            md.feed(text[i:i + 7])
            md.render()
        assert md.stable_blocks, rows                       # the table is stable before the stream ends
        md.finish()
        assert md.html == render_markdown(text), rows
    assert closed == [42, 302]       # header, delimiter and body rows; the heading took the ordinary path


def test_a_table_ending_in_the_same_feed_as_it_opens_takes_the_ordinary_path() -> None:
    text = _table(3) + "\nDone.\n"
    md = IncrementalMarkdown(theme="light")
    md.feed(text)
    md.render()
    md.finish()
    assert md.html == render_markdown(text)


def test_rows_that_a_formula_or_a_later_think_ends_are_left_to_a_reparse() -> None:
    # found by hypothesis: the fast path takes "\[", "x", "\]", "<think>" as rows; the reply's render ends the
    # table at the formula and folds the later reasoning, so closing from the rows taken would differ
    text = ("<think>r</think>| a |\n|---|\n| 1 |\nAnswer **a**.\nAnswer **a**.\n\\[\nx\n\\]\n"
            "<think>\nagain\n\n- item\n</think>\n")
    md = IncrementalMarkdown()
    for ch in text:
        md.feed(ch)
        md.render()
    md.finish()
    assert md.html == render_markdown(text)


def test_a_closed_tables_tokens_are_freed_a_part_a_render_not_in_the_one_that_closed_it() -> None:
    """Freeing a streamed 2,000-row table's tokens at once took 6-10 ms of the frame that closed it."""
    from app.core.render.markdown.incremental import FREE_ROWS_PER_RENDER

    rows = 2 * FREE_ROWS_PER_RENDER + 50
    table = _table(rows)
    md = IncrementalMarkdown(theme="light")
    for i in range(0, len(table), 300):
        md.feed(table[i:i + 300])
        md.render()
    stream = md._answer
    held = stream._table.rows                       # the open table's row tokens
    assert len(held) == rows
    md.feed("\nAfter the table.\n")
    md.render()                                     # the table closes: its tokens are not freed in this render
    assert stream._table is None and md.stable_blocks and len(held) == rows
    lengths = []
    for k in range(4):
        md.feed(f"More text {k}.\n\n")
        md.render()                                 # each render frees a part
        lengths.append(len(held))
    assert lengths == [rows - FREE_ROWS_PER_RENDER, rows - 2 * FREE_ROWS_PER_RENDER, 0, 0]
    md.finish()
    assert md.html == render_markdown(table + "\nAfter the table.\n" + "".join(f"More text {k}.\n\n" for k in range(4)))
