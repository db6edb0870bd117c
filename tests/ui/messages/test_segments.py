"""Sealed segments (``app.ui.messages.segments``): a long message is cut into finished documents, so the document
being patched stays small, while its text, height, selection, copy and links are those of one message."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QTextCursor
from PySide6.QtTest import QTest

from app.ui.messages.markdown_view import MarkdownView
from app.ui.messages.segments import SEGMENT_TABLES


def _long_reply(corpus_dir: Path) -> str:
    parts = [p.read_text("utf-8") for p in sorted((corpus_dir / "answers").glob("*.md"))
             if p.name[:2] not in ("05", "06", "10")]      # no leading reasoning section, no formulas
    return "\n\n".join(parts * 2)


def _view(qtbot, text: str | None = None, shown: bool = False) -> MarkdownView:
    """A light ``MarkdownView`` of 700 × 400 px, holding ``text`` (set at once) and shown on screen if ``shown``."""
    view = MarkdownView(theme="light")
    qtbot.addWidget(view)
    view.resize(700, 400)
    if text is not None:
        view.set_text(text)
    if shown:
        view.show()
        qtbot.waitExposed(view)
    return view


def _settle(qtbot, view: MarkdownView) -> None:
    """Refresh until the colours and formulas came and the view shows all of its render: a refresh inserts at
    most its patch budget, measured on the patches so far (on a busy machine, less than the whole text)."""
    def done() -> bool:
        view.refresh()
        return not view.renderer.highlights_pending and not view.lagging()
    qtbot.waitUntil(done, timeout=120_000)


def _live_tables(view: MarkdownView) -> int:
    return len(view.document().rootFrame().childFrames())


def test_a_long_streamed_reply_is_sealed_and_the_live_document_stays_small(qtbot, corpus_dir, monkeypatch) -> None:
    # Code coloured at once (no lexer pool): code waiting for its colours stays in the tail, so with the pool
    # the live document's size would depend on how fast its worker answers this tight loop (it held 81-91
    # tables in 1 run of 6), not on the sealing this test is about.
    monkeypatch.setattr(MarkdownView, "lexer_pool", staticmethod(lambda: None))
    text = _long_reply(corpus_dir)
    view = _view(qtbot)
    most = 0
    for i in range(0, len(text), 64):
        view.append_text(text[i:i + 64])
        view.refresh()
        most = max(most, _live_tables(view))
    view.finish()
    _settle(qtbot, view)
    once = _view(qtbot, text)
    _settle(qtbot, once)
    assert len(view.segments) >= 3
    assert most <= 3 * SEGMENT_TABLES     # bounded (a segment and the tail)
    total = sum(len(d.rootFrame().childFrames()) for d in view.documents())
    assert total > 3 * SEGMENT_TABLES
    assert view.toPlainText() == once.toPlainText()
    assert [s.first for s in view.segments.items] == [s.first for s in once.segments.items]   # same cuts


def test_a_long_table_is_sealed_by_its_tables_not_by_its_html(qtbot) -> None:
    # A table's HTML is ~15 times its text (a row group of 2 rows: ~930 characters): counted towards
    # SEGMENT_CHARS, a streamed table was sealed every 9 row groups, 111 seals for 2,000 rows.
    table = "| # | name | value |\n|---:|:---|---|\n" + "".join(f"| {i} | row *{i}* | `v{i}` |\n" for i in range(200))
    view = _view(qtbot, table + "\nAfter the table.\n")
    _settle(qtbot, view)
    docs = view.documents()
    tables = [len(d.rootFrame().childFrames()) for d in docs[:-1]]
    assert len(tables) >= 3 and all(n == SEGMENT_TABLES for n in tables), tables


def test_segments_stack_into_one_height_and_follow_the_width(qtbot, corpus_dir) -> None:
    view = _view(qtbot, _long_reply(corpus_dir), shown=True)
    segs = view.segments.items
    assert len(segs) >= 3
    tops = [s.view.geometry().top() for s in segs]
    bottoms = [s.view.geometry().bottom() + 1 for s in segs]
    assert tops[0] == 0 and tops[1:] == bottoms[:-1]           # one under the other, no gap, no overlap
    live_top = view.document().rootFrame().frameFormat().topMargin()
    assert live_top == bottoms[-1]
    h700 = view.heightForWidth(700)
    assert h700 == round(view.document().size().height())      # the live document, the segments its margin
    assert bottoms[-1] < h700 < bottoms[-1] + 3000
    narrow = view.heightForWidth(400)                          # a probe width: measured on copies
    assert narrow > h700
    view.resize(400, 400)
    qtbot.waitUntil(lambda: view.segments.items[0].view.width() == view.viewport().width())
    assert abs(view.heightForWidth(400) - narrow) <= 2


def test_select_all_and_copy_cover_every_segment(qtbot, corpus_dir) -> None:
    view = _view(qtbot, _long_reply(corpus_dir))
    assert len(view.segments) >= 2
    view.selectAll()
    assert view.has_selection()
    view.copy()
    copied = QGuiApplication.clipboard().text()
    assert copied.strip() == view.toPlainText().replace("\u200b", "").strip()
    first = view.segments.items[0].view
    cur = QTextCursor(first.document())
    cur.setPosition(0)
    first.setTextCursor(cur)                   # a click somewhere else clears the other selections
    view.segments.clear_selections(keep=first)
    assert not view.has_selection()


def test_a_drag_from_one_segment_into_the_next_selects_across(qtbot, corpus_dir) -> None:
    view = _view(qtbot, _long_reply(corpus_dir), shown=True)
    a, b = view.segments.items[0].view, view.segments.items[1].view
    QTest.mousePress(a, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(5, 5))
    inside_b = b.geometry().top() + b.height() // 2
    view.segments.drag_to(a, QPoint(40, inside_b))
    assert a.textCursor().hasSelection() and b.textCursor().hasSelection()
    text = view.segments.selected_text()
    tail_of_a = a.document().toPlainText()[-20:]
    assert tail_of_a.strip() and tail_of_a.strip() in text
    assert not view.textCursor().hasSelection()        # the live document is below the drag's end


def test_a_link_in_a_sealed_segment_opens_through_the_view(qtbot, monkeypatch) -> None:
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()) or True)
    filler = "".join(f"Paragraph {i} with some words to fill the segment up quickly.\n\n" for i in range(200))
    view = _view(qtbot, "See [the site](https://example.org/a) now.\n\n" + filler, shown=True)
    seg = view.segments.items[0].view
    doc = seg.document()
    block = doc.begin()
    it = block.begin()
    x = None
    while not it.atEnd():
        frag = it.fragment()
        if frag.charFormat().anchorHref():
            line = block.layout().lineForTextPosition(frag.position() - block.position())
            x = line.cursorToX(frag.position() - block.position() + 2)[0]
            break
        it += 1
    assert x is not None
    rect = doc.documentLayout().blockBoundingRect(block)
    pos = QPointF(rect.left() + x, rect.top() + rect.height() / 2).toPoint()
    assert seg.anchorAt(pos) == "https://example.org/a"
    QTest.mouseClick(seg, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pos)
    assert opened == ["https://example.org/a"]
    assert view.anchor_texts("https://example.org/a") == ["the site"]
    assert QUrl(opened[0]).scheme() == "https"


def test_folding_the_reasoning_of_a_long_reply_re_shows_only_the_reasoning(qtbot, corpus_dir) -> None:
    """Unfolding or folding "Thinking" once the answer streams re-inserts the reasoning section only (it built
    the whole document again: O(reply) on a click); the text equals a view built from scratch in that state."""
    text = "<think>\nFirst I look at the question.\n\nThen at the answer.\n</think>\n\n" + _long_reply(corpus_dir)
    view = _view(qtbot)
    for i in range(0, len(text), 400):
        view.append_text(text[i:i + 400])
        view.refresh()
    view.finish()
    _settle(qtbot, view)
    assert len(view.segments) >= 2
    segments_before = [s.view for s in view.segments.items]
    for expanded in (True, False, True):
        inserted = view.pieces_inserted
        view.toggle_thinking()
        assert view.pieces_inserted - inserted <= 4          # the header and the reasoning's pieces
        assert [s.view for s in view.segments.items] == segments_before
        fresh = _view(qtbot, text)
        _settle(qtbot, fresh)
        if expanded:
            fresh.toggle_thinking()
        assert ("First I look" in view.toPlainText()) is expanded
        assert view.toPlainText() == fresh.toPlainText()


def test_a_long_code_block_that_closes_is_sealed_without_leaving_the_screen(qtbot, monkeypatch) -> None:
    """Its lines stay in the live document until the fence closes; then they are final, and cutting the document
    into segments of SEGMENT_CHARS re-inserted all but the first over several patches (PATCH_BUDGET_CHARS each):
    the code vanished from the screen and came back 8 KB a tick (at a reply's end, one every MORE_DELAY_MS)."""
    monkeypatch.setattr(MarkdownView, "lexer_pool", staticmethod(lambda: None))      # coloured at once
    code = "".join(f"    value_{k} = compute_something({k}, 'text')  # note {k}\n" for k in range(400))
    text = "Intro.\n\n```python\ndef f():\n" + code + "```\n\nAfter the code.\n"
    view = _view(qtbot)
    shown = 0
    for i in range(0, len(text), 64):
        view.append_text(text[i:i + 64])
        view.refresh()
        now = len(view.toPlainText())
        assert now >= shown, f"the text on screen went from {shown} to {now} characters"
        shown = now
    view.finish()
    assert not view.behind
    assert len(view.segments) >= 1
    assert view.toPlainText() == _view(qtbot, text).toPlainText()


def test_the_text_of_a_long_table_is_the_same_wherever_it_was_cut(qtbot, corpus_dir, monkeypatch) -> None:
    """A segment that ends with a table ends with the empty block Qt keeps after it: joining the segments' texts
    with a line break gave a blank line more at every cut (a streamed reply whose code colours came late is cut
    elsewhere than a loaded one: their texts differed)."""
    import app.ui.messages.sealed_view as patched

    text = (corpus_dir / "answers" / "03_long_table.md").read_text("utf-8") + "\n\nAfter the table.\n"
    monkeypatch.setattr(patched, "SEGMENT_TABLES", 8)        # its 40 row groups: cut four times
    cut = _view(qtbot, text)
    monkeypatch.setattr(patched, "SEGMENT_CHARS", 10 ** 9)
    monkeypatch.setattr(patched, "SEGMENT_TABLES", 10 ** 9)
    whole = _view(qtbot, text)
    assert len(cut.segments) >= 3 and len(whole.segments) == 0
    assert cut.toPlainText() == whole.toPlainText()
    cut.selectAll()
    whole.selectAll()
    assert cut.segments.selected_text() == whole.segments.selected_text()


def _images(doc) -> list[object]:  # type: ignore[no-untyped-def]
    """The resource Qt loads for each image of ``doc`` (None or a null image: shown as a broken icon)."""
    from PySide6.QtGui import QTextDocument

    out: list[object] = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                out.append(doc.resource(QTextDocument.ResourceType.ImageResource, QUrl(fmt.toImageFormat().name())))
            it += 1
        block = block.next()
    return out


def test_a_formula_sealed_before_it_was_ever_painted_still_loads_its_image(qtbot) -> None:
    # a burst streams past the screen: the piece with the formula is sealed before any paint asked for its image
    filler = "".join(f"Paragraph {i} with some words to fill the segment up quickly.\n\n" for i in range(200))
    view = _view(qtbot)                                  # never shown: nothing is painted
    view.append_text("The area is $\\pi r^2$ here.\n\n" + filler)
    view.refresh()
    view.finish()
    _settle(qtbot, view)                                 # the formula is drawn and its image put in the HTML
    assert view.segments.items, "nothing was sealed"
    images = [img for seg in view.segments.items for img in _images(seg.view.document())]
    assert images, "no formula image in the sealed segments"
    assert all(img is not None and not img.isNull() for img in images), images


def test_a_patch_that_seals_tells_its_new_height_once(qtbot, corpus_dir, monkeypatch) -> None:
    # Each new height lays the message list out again: a patch whose edit blocks (a seal makes several) each
    # changed the height tells only the last one, which is the view's height.
    import app.ui.messages.sealed_view as patched

    monkeypatch.setattr(MarkdownView, "lexer_pool", staticmethod(lambda: None))
    monkeypatch.setattr(patched, "SEGMENT_TABLES", 8)
    text = _long_reply(corpus_dir)
    view = _view(qtbot)
    heights: list[int] = []
    view.heightChanged.connect(heights.append)
    view.append_text(text[: len(text) // 2])
    view._budget.chars = lambda _ms: 10 ** 9        # the whole render in this one patch
    assert view.refresh()
    assert len(view.segments) >= 2                  # it sealed
    assert heights == [view.heightForWidth(700)]


def _lines(view: MarkdownView) -> list[tuple[str, int]]:
    """Every non-empty block of ``view`` (all its documents) with where it shows (px from the view's top)."""
    out = []
    views = [*(s.view for s in view.segments.items), None]
    for v in views:
        doc = view.document() if v is None else v.document()
        shift = 0.0 if v is None else v.geometry().top() - v.dy
        layout, block = doc.documentLayout(), doc.begin()
        while block.isValid():
            if block.text().strip():
                out.append((block.text(), round(shift + layout.blockBoundingRect(block).top())))
            block = block.next()
    return out


def test_a_reply_cut_into_segments_lays_out_like_one_document(qtbot, monkeypatch) -> None:
    # Stacked segments keep the space one document has between the pieces at a cut (a paragraph's margins, no
    # empty line before a table) and the first segment its top margin: every line where one document has it.
    import app.ui.messages.sealed_view as patched
    from app.bench.history import answers, realistic

    texts = answers()                      # (the history bench's realistic replies: tests/data/answers)
    monkeypatch.setattr(patched, "SEGMENT_CHARS", 3_000)     # cut often: between paragraphs, lists, tables
    monkeypatch.setattr(patched, "SEGMENT_TABLES", 8)
    for i in (101, 103):
        text = realistic(texts, i)
        cut = _view(qtbot, text)
        _settle(qtbot, cut)                # code colours and formulas in (they change the layout)
        with monkeypatch.context() as m:
            m.setattr(patched, "SEGMENT_CHARS", 10 ** 9)
            m.setattr(patched, "SEGMENT_TABLES", 10 ** 9)
            whole = _view(qtbot, text)
            _settle(qtbot, whole)
        assert len(cut.segments) >= 5 and not len(whole.segments)
        assert cut.heightForWidth(700) == whole.heightForWidth(700)
        a, b = _lines(cut), _lines(whole)
        assert [t for t, _ in a] == [t for t, _ in b]
        off = [(t[:30], ya, yb) for (t, ya), (_, yb) in zip(a, b, strict=True) if abs(ya - yb) > 1]
        assert not off, off[:5]


def test_a_formula_drawn_as_the_stream_ends_is_shown(qtbot) -> None:
    # Its image came between the stream's last refresh and its end: the renderer's finish() took it (a render of
    # its own), and the view's next refresh renders again, which forgets what the one before restyled — the
    # formula's piece, stable and sealed, stayed TeX for good.
    filler = "".join(f"Paragraph {i} with some words to fill the segment up quickly.\n\n" for i in range(200))
    view = _view(qtbot)
    view.append_text("The area is $\\tau r^3$ here.\n\n" + filler)
    view.refresh()                                       # shown as TeX: its image is asked for
    pool = MarkdownView.math_pool()
    qtbot.waitUntil(lambda: not pool.pending(), timeout=30_000)   # drawn — nothing has looked yet
    view.finish()
    _settle(qtbot, view)
    assert view.segments.items
    images = [img for seg in view.segments.items for img in _images(seg.view.document())]
    assert images and all(img is not None and not img.isNull() for img in images), images


def test_a_streamed_seal_finds_the_gap_at_its_cut_measured(qtbot, corpus_dir, monkeypatch) -> None:
    # Measuring the gap at a cut (2-5 ms: the pieces laid out alone and together) in the patch that seals made
    # those frames the slowest of a stream (12-18 ms of work): a streaming patch that leaves the live document
    # full, its pieces after the cut still open, measures it then; a seal of new pieces waits for the next patch.
    import app.ui.messages.cut_gap as cut_gap

    monkeypatch.setattr(MarkdownView, "lexer_pool", staticmethod(lambda: None))
    monkeypatch.setattr(cut_gap, "_GAPS", {})
    measured: list[int] = []
    real = cut_gap._measure
    monkeypatch.setattr(cut_gap, "_measure", lambda *a: measured.append(1) or real(*a))
    text = _long_reply(corpus_dir)
    view = _view(qtbot, shown=True)                 # (its width settled: a gap is measured for a width)
    view._budget.chars = lambda _ms: 10 ** 9        # streaming patches, never cut by the budget (no timing)
    both = seals = 0
    for i in range(0, len(text), 64):
        view.append_text(text[i:i + 64])
        before, n = len(view.segments), len(measured)
        view.refresh()
        sealed = len(view.segments) > before
        seals += sealed
        both += sealed and len(measured) > n
    assert seals >= 3 and measured
    assert both == 0
