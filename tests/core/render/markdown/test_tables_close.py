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
