"""A long paragraph is shown as several blocks (``rich_text.split_paragraph``), and a streaming refresh inserts
at most ``PATCH_BUDGET_CHARS``: a growing paragraph costs its new part, not its length; the text, a copy and the
renderer's HTML stay those of one paragraph, and a streamed view equals a loaded one."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.core.render.markdown import render_markdown
from app.ui.messages import rich_text
from app.ui.messages.markdown_view import MarkdownView
from app.ui.messages.rich_text import (
    CUT_LOOK_CHARS,
    JOIN,
    PARAGRAPH_PIECE_CHARS,
    RUN_PIECE_CHARS,
    joined,
    split_paragraph,
)
from app.ui.messages.segments import SEGMENT_CHARS

PROSE = " ".join(f"word{i} with *some emphasis {i}* and `code {i}`" for i in range(600))   # ~27 KB, one paragraph
WORD = "x" * 60_000


@pytest.fixture(autouse=True)
def _collect_here() -> Iterator[None]:
    """The views here are big and sealed (segments hold their view: a cycle); collect them on this thread now,
    not in a later test from whichever thread the collector happens to run on (a Qt object must die on its
    own thread)."""
    yield
    gc.collect()


def _inner(pieces: list[str]) -> str:
    """The text of the pieces' paragraphs put back together (their tags and the joiners dropped)."""
    return "".join(re.sub(r"^<p[^>]*>|</p>\n?$", "", p) for p in pieces).replace(JOIN, "")


def _blocks(view: MarkdownView) -> list[tuple[str, float, float]]:
    out = []
    for doc in view.documents():
        b = doc.begin()
        while b.isValid():
            out.append((b.text(), b.blockFormat().topMargin(), b.blockFormat().bottomMargin()))
            b = b.next()
    return out


def test_a_long_paragraph_is_cut_where_no_inline_element_is_open_and_joins_back() -> None:
    html = render_markdown(PROSE)
    pieces = split_paragraph(html)
    assert len(pieces) >= len(html) // PARAGRAPH_PIECE_CHARS - 1
    assert all(len(p) < PARAGRAPH_PIECE_CHARS + 200 for p in pieces)
    assert _inner(pieces) == html[len("<p>"):-len("</p>\n")]            # nothing lost or added
    for p in pieces:                                                     # every inline element closed inside
        assert p.count("<em>") == p.count("</em>") and p.count("<code") == p.count("</code>")
    assert all(p.startswith('<p style="margin-top:0') and p[p.index(">") + 1] == JOIN for p in pieces[1:])
    word = split_paragraph(f"<p>{WORD}</p>\n")                           # a run without spaces is cut too
    assert len(word) == -(-len(WORD) // RUN_PIECE_CHARS) and _inner(word) == WORD     # in shorter pieces
    short = "<p>short</p>\n"
    assert split_paragraph(short) == [short]
    code = "<pre>" + "y" * 10_000 + "</pre>"
    assert split_paragraph(code) == [code]                               # only paragraphs
    assert joined(f"ab\n{JOIN}cd\u2029{JOIN}ef") == "abcdef"


def test_a_streamed_long_paragraph_equals_a_loaded_one_and_copies_as_one(qtbot) -> None:
    for text in (f"Before.\n\n{PROSE}\n\nAfter.\n", f"A word: {WORD}\n\nafter\n"):
        streamed, loaded = MarkdownView(theme="light"), MarkdownView(theme="light")
        qtbot.addWidget(streamed)
        qtbot.addWidget(loaded)
        for i in range(0, len(text), 997):
            streamed.append_text(text[i:i + 997])
            streamed.refresh()
        streamed.finish()
        while streamed.behind:                          # the end is painted within the budget, over patches
            streamed.refresh()
        loaded.set_text(text)
        assert streamed.renderer.html == render_markdown(text, theme="light")
        assert _blocks(streamed) == _blocks(loaded)
        assert len(_blocks(loaded)) > len(text) // PARAGRAPH_PIECE_CHARS      # shown as several blocks
        plain = streamed.toPlainText()
        assert plain == loaded.toPlainText() and JOIN not in plain
        words = WORD if "A word" in text else "word599 with some emphasis 599 and code 599"
        assert words in plain.replace("\u200b", "")                           # one paragraph, whole
        streamed.selectAll()
        streamed.copy()
        from PySide6.QtGui import QGuiApplication
        copied = QGuiApplication.clipboard().text()
        assert JOIN not in copied and "\u200b" not in copied and words in copied


def test_a_growing_paragraph_re_inserts_its_end_and_a_refresh_stays_within_its_budget(qtbot) -> None:
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.resize(700, 400)
    word = WORD * 4                                     # 240 KB: the renderer re-parses it once it grew by a fifth
    v.append_text("A word: ")
    most = 0
    for i in range(0, len(word), 1_000):
        before = v.html_chars_inserted
        v.append_text(word[i:i + 1_000])
        v.refresh()
        if i >= 2 * PARAGRAPH_PIECE_CHARS:               # past the first sub-piece (the paragraph's start)
            most = max(most, v.html_chars_inserted - before)
    # a refresh re-inserts the new text and the sub-piece it goes on (the renderer appends the letters: .words),
    # not 20 % of 240 KB at a re-parse (before the append: up to the budget); in the run, a short sub-piece
    assert most <= 1_000 + 2 * RUN_PIECE_CHARS + CUT_LOOK_CHARS + 200          # (a seal: one more)
    while v.behind:                                     # what a refresh left is shown by the next ones
        v.refresh()
    before = v.html_chars_inserted
    v.finish()                                          # its sub-pieces but the last two were sealed meanwhile
    assert v.html_chars_inserted - before <= SEGMENT_CHARS + 3 * PARAGRAPH_PIECE_CHARS
    while v.behind:                                     # the end within the budget too
        v.refresh()
    assert v.toPlainText().replace("\u200b", "") == "A word: " + word


def test_pieces_a_patch_left_to_its_budget_are_painted_by_the_next_patches(qtbot, monkeypatch) -> None:
    """A patch cut by its budget leaves finished pieces unpainted; the next patches paint them first, even when
    more finished pieces came meanwhile (before: they were skipped for good — rows of a long table were missing
    from the streamed reply)."""
    from app.ui.messages import patch_budget

    monkeypatch.setattr(patch_budget, "PATCH_BUDGET_CHARS", 300)
    text = ("".join(f"Paragraph {i} with **bold** words.\n\n" for i in range(40))
            + "| a | b |\n|---|---|\n" + "".join(f"| {i} | x{i} |\n" for i in range(30)) + "\nThe end.\n")
    half = text.index("Paragraph 30")
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.append_text(text[:half])
    v.refresh()
    assert v.behind                        # the budget painted only the first pieces
    v.append_text(text[half:])
    v.refresh()
    v.finish()
    while v.behind:
        v.refresh()
    once = MarkdownView(theme="light")
    qtbot.addWidget(once)
    once.set_text(text)
    assert v.toPlainText() == once.toPlainText()
    assert "Paragraph 5 with" in v.toPlainText() and "| 29 |" not in v.toPlainText()


_PARTS = ["<em>", "</em>", "<code>", "</code>", "<br />", "&amp;", " ", "\n", "word", "x" * 30, "x" * 450, "x" * 900]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_PARTS), max_size=60), st.lists(st.integers(0, 60), max_size=6),
       st.sampled_from([40, 300, 1000, 4000]))
@example(parts=["x" * 900, " ", "word"], ends=[1], size=40)       # a long run, then a space after it
@example(parts=["word", " ", *["x" * 900] * 12, " ", "word"], ends=[7, 13], size=4000)   # short pieces in a run
def test_a_growing_paragraph_is_cut_as_a_whole_scan_cuts_it(parts: list[str], ends: list[int], size: int) -> None:
    """A growing paragraph keeps its cuts, and the cuts of a body that extends one cut before (resumed at that
    one's last cut) are those of a scan of the whole body; a body that is not an extension is scanned whole."""
    rich_text._RECENT.clear()
    before: list[int] = []
    for end in [*sorted(ends), len(parts)]:
        body = "".join(parts[:end])
        whole = rich_text._scan_cuts(body, size, [])
        assert rich_text._paragraph_cuts(body, size) == whole, (end, body)
        assert whole[:len(before)] == before, (end, body)      # the cuts before are kept as it grows
        before = whole
    other = "y" * 500 + "".join(parts)                      # not an extension of the bodies before
    assert rich_text._paragraph_cuts(other, size) == rich_text._scan_cuts(other, size, [])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(_PARTS), max_size=60), st.lists(st.integers(0, 60), max_size=6),
       st.sampled_from([40, 300, 1000, 4000]))
def test_a_growing_paragraphs_sub_pieces_are_those_of_a_split_from_scratch(parts: list[str], ends: list[int],
                                                                           size: int) -> None:
    """The sub-pieces of a paragraph that extends one split before reuse that one's up to its last cut: they are
    the sub-pieces a split with nothing remembered gives."""
    rich_text._RECENT.clear()
    for end in [*sorted(ends), len(parts), len(parts)]:
        html = "<p>" + "".join(parts[:end]) + "</p>\n"
        pieces = split_paragraph(html, size)
        remembered = list(rich_text._RECENT)
        rich_text._RECENT.clear()
        assert pieces == split_paragraph(html, size), (end, html)
        rich_text._RECENT[:] = remembered


def test_lagging_is_what_the_last_refresh_left_out_and_a_refresh_that_patched_nothing_clears_it(qtbot) -> None:
    """``lagging`` holds the render tick back from feeding more (``Coalescer``): true only while the last refresh's
    patch left rendered pieces out, so a refresh that cannot patch (the reasoning folded) never holds it for good."""
    rows = "| a | b |\n|---|---|\n" + "".join(f"| {i} | `x{i}` and *y* |\n" for i in range(150)) + "\n"
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.append_text("<think>\nFirst:\n\n")
    v.refresh()                                          # the reasoning's header, built at once
    v.append_text(rows)
    v.refresh()
    assert v.lagging() and v.behind                      # more than one patch's budget of HTML
    v.toggle_thinking()                                  # folded while it reasons: nothing is patched
    v.append_text("more")
    v.refresh()
    assert not v.lagging()
    v.toggle_thinking()
    while v.lagging():
        v.refresh()
    assert "| 149 |" not in v.toPlainText() and "149" in v.toPlainText()


def test_a_render_before_the_refresh_counts_against_its_patch_budget(qtbot, monkeypatch) -> None:
    """A catch-up slice rendered in parts (``render_fed``) is patched by the next ``refresh``: the patch budget is
    what is left after all of that render time (and a frame's paint that ran over, ``spend``), not only after the
    refresh's own render."""
    import app.ui.messages.markdown_view as mv

    class Clock:                                   # every reading of the view's clock is 5 ms after the last
        t = 0.0

        @classmethod
        def perf_counter(cls) -> float:
            cls.t += 0.005
            return cls.t

    view = MarkdownView(theme="light")
    qtbot.addWidget(view)
    asked: list[float] = []
    chars = view._budget.chars
    monkeypatch.setattr(view._budget, "chars", lambda ms: asked.append(round(ms, 6)) or chars(ms))
    monkeypatch.setattr(mv, "time", Clock)
    view.append_text("First part.\n\n")
    view.render_fed()                              # 5 ms
    view.append_text("Second part.\n\n")
    view.render_fed()                              # 5 ms more
    view.spend(2.5)                                # the frame's paint ran 2.5 ms over
    view.refresh()                                 # its own render: 5 ms
    view.append_text("Third part.\n\n")
    view.refresh()
    assert asked == [17.5, 5.0]                    # all three renders and the paint, then only its own
    assert "Third part." in view.toPlainText()


def test_a_patch_budget_fits_its_time_less_the_render_between_its_bounds() -> None:
    from app.ui.messages.patch_budget import (
        PATCH_BUDGET_CHARS,
        PATCH_BUDGET_MAX_CHARS,
        PATCH_BUDGET_MIN_CHARS,
        PATCH_BUDGET_MS,
        PATCH_COST_WINDOW,
        PatchBudget,
    )

    b = PatchBudget()
    assert b.chars(0.0) == PATCH_BUDGET_CHARS                           # nothing measured yet
    b.measured(PATCH_BUDGET_CHARS - 1, 1.0)                             # a small patch is not a measurement
    assert b.chars(0.0) == PATCH_BUDGET_CHARS
    b.measured(16_000, PATCH_BUDGET_MS / 1000)                          # 16,000 characters in the whole budget
    assert b.chars(0.0) == 16_000
    assert b.chars(PATCH_BUDGET_MS / 2) == 8_000                        # a tick that parsed patches less
    assert b.chars(PATCH_BUDGET_MS * 2) == PATCH_BUDGET_MIN_CHARS
    b.measured(32_000, PATCH_BUDGET_MS / 1000)                          # cheaper: the dearer one still counts
    assert b.chars(0.0) == 16_000
    for _ in range(PATCH_COST_WINDOW - 1):
        b.measured(32_000, PATCH_BUDGET_MS / 1000)
    assert b.chars(0.0) == 32_000                                       # … for the last PATCH_COST_WINDOW
    b.measured(8_000, PATCH_BUDGET_MS / 1000)                           # dearer: at once
    assert b.chars(0.0) == 8_000
    b.ms_per_char = PATCH_BUDGET_MS / 10**7
    assert b.chars(0.0) == PATCH_BUDGET_MAX_CHARS


def test_break_long_runs_breaks_long_runs_of_text_only() -> None:
    """A zero-width space every ``RUN_BREAK_CHARS`` in a run of text of at least twice that; a tag's long attribute,
    a shorter run and whitespace stay as they are (the quick check before the substitution says the same)."""
    run = "y" * (2 * rich_text.RUN_BREAK_CHARS)
    link = f'<a href="https://example.org/{run}">link</a> '
    broken = rich_text.break_long_runs(f"<p>{link}{run}</p>")
    assert broken == f"<p>{link}{rich_text.ZWSP.join([run[:rich_text.RUN_BREAK_CHARS]] * 2)}</p>"
    short = f"<p>{'z ' * 300}{run[1:]}</p>"
    assert rich_text.break_long_runs(short) == short
    blank = " \n" * 300
    assert rich_text.break_long_runs(blank) == blank
