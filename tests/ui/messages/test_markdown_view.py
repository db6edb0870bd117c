"""MarkdownView: incremental patching equals a one-shot render; selection, copy, link policy, thinking fold."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QTextCursor

from app.core.render.markdown import CODE_PIECE_LINES, render_markdown
from app.ui.messages.markdown_view import MarkdownView


def _stream(view: MarkdownView, text: str, seed: int = 0) -> None:
    rng = random.Random(seed)
    i = 0
    while i < len(text):
        n = rng.randint(1, 40)
        view.append_text(text[i : i + n])
        i += n
        if rng.random() < 0.6:
            view.refresh()
    view.finish()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_streaming_equals_one_shot(qtbot, corpus_dir: Path, theme: str) -> None:
    for path in sorted((corpus_dir / "answers").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        a = MarkdownView(theme=theme)
        b = MarkdownView(theme=theme)
        qtbot.addWidget(a)
        qtbot.addWidget(b)
        a.set_text(text)
        _stream(b, text, seed=len(text))
        _settle(qtbot, a)                 # code colours and formula images from the worker pools
        _settle(qtbot, b)
        assert b.toPlainText() == a.toPlainText(), path.name   # sealed segments included


def test_refresh_reports_changes(qtbot) -> None:
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    assert v.refresh() is False
    v.append_text("Hello")
    assert v.refresh() is True
    assert v.refresh() is False
    assert "Hello" in v.toPlainText()


def test_selection_kept_across_refresh(qtbot) -> None:
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.append_text("# Title\n\nFirst paragraph here.\n\nSecond")
    v.refresh()
    cur = v.textCursor()
    start = v.toPlainText().index("First")
    cur.setPosition(start)
    cur.setPosition(start + len("First paragraph"), QTextCursor.MoveMode.KeepAnchor)
    v.setTextCursor(cur)
    for chunk in [" paragraph", " grows.\n\n", "Third *one*", "\n\n- a\n- b\n"]:
        v.append_text(chunk)
        v.refresh()
        assert v.textCursor().selectedText() == "First paragraph"


def test_copy_puts_raw_code_on_clipboard(qtbot) -> None:
    v = MarkdownView(theme="dark")
    qtbot.addWidget(v)
    code = 'def f(x):\n    return "<b>" * x\n'
    v.set_text(f"Intro\n\n```python\n{code}```\n\n```\nsecond\n```\n")
    assert 'href="brook-copy:0"' in v.renderer.html
    v.anchorClicked.emit(QUrl("brook-copy:0"))
    assert QGuiApplication.clipboard().text() == code
    v.anchorClicked.emit(QUrl("brook-copy:1"))
    assert QGuiApplication.clipboard().text() == "second\n"


def test_copy_while_fence_is_open(qtbot) -> None:
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.append_text("```sh\necho hi\nls")
    v.refresh()
    v.anchorClicked.emit(QUrl("brook-copy:0"))
    assert QGuiApplication.clipboard().text() == "echo hi\n"


def test_link_policy_on_click(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url.toString())))
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.set_text("[js](javascript:alert(1)) [ok](https://example.org)")
    before = v.toPlainText()
    for url in ("javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "ftp://x"):
        v.anchorClicked.emit(QUrl(url))
    assert opened == []
    v.anchorClicked.emit(QUrl("https://example.org"))
    assert opened == ["https://example.org"]
    assert v.toPlainText() == before  # nothing navigated inside the view


def test_thinking_folds_when_answer_starts(qtbot) -> None:
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.append_text("<think>\nweighing options")
    v.refresh()
    assert "Thinking…" in v.toPlainText() and "weighing options" in v.toPlainText()
    v.append_text("\n</think>\n\nThe answer.")
    v.refresh()
    text = v.toPlainText()
    assert "▸ Thinking" in text and "weighing" not in text and "The answer." in text
    v.anchorClicked.emit(QUrl("brook-think:toggle"))
    assert "weighing options" in v.toPlainText() and "The answer." in v.toPlainText()
    v.finish()
    assert "The answer." in v.toPlainText()


def test_height_follows_document(qtbot) -> None:
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.resize(400, 100)
    heights: list[int] = []
    v.heightChanged.connect(heights.append)
    v.set_text("line\n\n" * 30)
    h = v.heightForWidth(400)
    assert h > 200 and heights
    assert v.sizeHint().height() >= h - 1


def test_a_view_not_shown_yet_hints_its_size_without_a_layout_at_a_guessed_width(qtbot) -> None:
    # A new message widget's layout asks its view's size hint before the view has its width: the hint's height
    # laid the document out at the default 100 px (5-10 ms for a 6.5 KB preview), then again at its width.
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.show_placeholder("A line of a long preview, wrapped at the view's width.\n" * 200)
    assert v.document().textWidth() <= 0          # not laid out yet
    v.sizeHint()
    assert v.document().textWidth() <= 0          # … nor by the hint
    h = v.heightForWidth(600)                      # the list asks at the real width: laid out there, once
    assert v.sizeHint().height() == h


def _settle(qtbot, view: MarkdownView) -> None:
    """Refresh until the lexer pool has delivered every pending code colour."""
    def done() -> bool:
        view.refresh()
        return not view.renderer.highlights_pending
    qtbot.waitUntil(done, timeout=120_000)


def test_only_changed_pieces_are_reinserted(qtbot) -> None:
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    n = CODE_PIECE_LINES
    last = 2 * n + n // 2 - 1                       # the last, partial piece holds lines 2n … last
    v.append_text("Intro\n\n```python\n" + "".join(f"x = {i}\n" for i in range(last + 1)))
    _settle(qtbot, v)                                # code colours come from the lexer pool a little later
    pieces, chars = v.pieces_inserted, v.html_chars_inserted
    assert pieces >= 4                               # intro + three code pieces
    v.append_text("y = 1\n")
    v.refresh()
    assert v.pieces_inserted - pieces == 1           # only the last piece ...
    assert v.html_chars_inserted - chars < chars / 2  # ... (about a fifth of the code), not the whole block
    assert v.toPlainText().endswith("y = 1")
    pieces = v.pieces_inserted
    v.append_text("```\n\nAfter.")
    v.refresh()  # the fence became stable: its unchanged pieces stay painted
    assert v.pieces_inserted - pieces <= 2 and v.toPlainText().endswith("After.")
    v.finish()
    one_shot = MarkdownView(theme="light")
    qtbot.addWidget(one_shot)
    one_shot.set_text(v.renderer.text)
    assert v.toPlainText() == one_shot.toPlainText()


def _blocks(view: MarkdownView) -> list[tuple[str, float, float, str]]:
    out = []
    for doc in view.documents():          # sealed segments of a long message, then the live document
        b = doc.begin()
        while b.isValid():
            f = b.blockFormat()
            out.append((b.text(), f.topMargin(), f.bottomMargin(), f.background().color().name()))
            b = b.next()
    return out


@pytest.mark.parametrize("name", [
    "01_python_code.md", "02_zh_mixed.md", "03_long_table.md", "04_nested_lists.md", "05_reasoning.md",
    "06_math.md", "07_inert_html.md", "08_fence_at_end.md", "09_unterminated.md",
])
@pytest.mark.parametrize("step", [1, 5])
def test_streamed_document_has_the_same_blocks_and_spacing_as_one_shot(qtbot, corpus_dir, name, step) -> None:
    text = (corpus_dir / "answers" / name).read_text("utf-8")
    streamed = MarkdownView(theme="light")
    qtbot.addWidget(streamed)
    for i in range(0, len(text), step):
        streamed.append_text(text[i:i + step])
        streamed.refresh()
    streamed.finish()
    once = MarkdownView(theme="light")
    qtbot.addWidget(once)
    once.set_text(text)
    _settle(qtbot, streamed)
    _settle(qtbot, once)
    assert _blocks(streamed) == _blocks(once)


def test_a_pathological_lexer_never_runs_on_the_loop(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    """An rst fence of ':' and 36 backslashes froze the window for ~7 s (pygments backtracks). Now no lexer runs
    in this process at all while it streams and after: the worker lexes, is killed at its deadline and the code
    stays plain. (The stall itself is measured by ``python -m app.bench lexing``.)"""
    import threading

    from pygments.lexer import RegexLexer

    from app.core.render.lexer_pool import default_pool

    on_loop: list[str] = []
    orig = RegexLexer.get_tokens_unprocessed

    def spy(self, text, stack=("root",)):
        if threading.current_thread() is threading.main_thread():
            on_loop.append(type(self).__name__)
        return orig(self, text, stack)

    monkeypatch.setattr(RegexLexer, "get_tokens_unprocessed", spy)
    pool = default_pool()
    fallbacks = pool.fallbacks
    body = ":" + "\\" * 36
    text = f"A field list:\n\n```rst\n{body}\n```\n\nAnd after it.\n"
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    for i in range(0, len(text), 3):
        v.append_text(text[i : i + 3])
        v.refresh()
    v.finish()
    qtbot.waitUntil(lambda: not v.renderer.highlights_pending, timeout=120_000)
    assert on_loop == []
    assert pool.fallbacks > fallbacks                     # the deadline fallback was taken
    assert body in v.toPlainText() and "And after it." in v.toPlainText()
    again = MarkdownView(theme="light")                   # reopening the chat: the verdict is remembered
    qtbot.addWidget(again)
    again.set_text(text)
    assert not again.renderer.highlights_pending and on_loop == []


def test_code_colours_arrive_after_the_stream_ended(qtbot) -> None:
    code = "".join(f"def f{i}(x):\n    return x * {i}\n\n" for i in range(12))
    text = f"Intro\n\n```python\n{code}```\n"
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.append_text(text)
    v.finish()
    qtbot.waitUntil(lambda: not v.renderer.highlights_pending, timeout=120_000)
    qtbot.waitUntil(lambda: v.renderer.html == render_markdown(text), timeout=120_000)
    once = MarkdownView(theme="light")
    qtbot.addWidget(once)
    once.set_text(text)
    qtbot.waitUntil(lambda: not once.renderer.highlights_pending, timeout=120_000)
    assert _blocks(v) == _blocks(once)


def _code_shown(view: MarkdownView) -> str:
    return view.document().toPlainText()


_BLANK_LINE_CODE = "".join(f"x{i} = {i}\n" if i % 8 else "\n" for i in range(40)) + "\n"  # blank first lines


@pytest.mark.parametrize("name", [
    "01_python_code.md", "02_zh_mixed.md", "03_long_table.md", "04_nested_lists.md", "05_reasoning.md",
    "06_math.md", "07_inert_html.md", "08_fence_at_end.md", "09_unterminated.md", "blank-lines",
])
def test_every_code_line_is_on_screen(qtbot, corpus_dir, name) -> None:
    """Blank lines inside code blocks vanished on screen (an HTML reader drops a newline after <pre>), while
    Copy gave the right code. The screen must show each code block's source, streamed and one-shot."""
    if name == "blank-lines":
        text = f"Two functions:\n\n```python\n{_BLANK_LINE_CODE}```\n\nand\n\n```\n\n\nplain\n\n```\n"
    else:
        text = (corpus_dir / "answers" / name).read_text("utf-8")
    once = MarkdownView(theme="light")
    qtbot.addWidget(once)
    once.set_text(text)
    streamed = MarkdownView(theme="light")
    qtbot.addWidget(streamed)
    for i in range(0, len(text), 5):
        streamed.append_text(text[i : i + 5])
        streamed.refresh()
    streamed.finish()
    for view in (once, streamed):
        _settle(qtbot, view)
        shown = view.toPlainText()
        codes = view.renderer.code_blocks + (view.renderer.thinking.code_blocks if view.renderer.thinking else [])
        for code in codes:
            assert code.rstrip("\n").strip("\n") in shown, (name, code)
            lines = code.rstrip("\n").split("\n")
            start = shown.find(lines[0]) if lines[0] else None
            if start is not None and start >= 0:
                assert shown[start:].startswith(code.rstrip("\n")), (name, code)


def test_a_haiku_keeps_its_lines(qtbot) -> None:
    text = "A haiku:\n\nAn old silent pond\nA frog jumps into the pond—\nSplash! Silence again."
    for streamed in (False, True):
        v = MarkdownView(theme="light")
        qtbot.addWidget(v)
        if streamed:
            for i in range(0, len(text), 4):
                v.append_text(text[i : i + 4])
                v.refresh()
            v.finish()
        else:
            v.set_text(text)
        lines = v.toPlainText().replace("\u2028", "\n").split("\n")
        assert lines[-3:] == ["An old silent pond", "A frog jumps into the pond—", "Splash! Silence again."]


def test_reasoning_that_only_closes_folds_and_unclosed_reasoning_is_the_answer(qtbot) -> None:
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    for chunk in ["The user wants", " a greeting.\n</th", "ink>\n\nHello there."]:
        v.append_text(chunk)
        v.refresh()
    text = v.toPlainText()
    assert "▸ Thinking" in text and "Hello there." in text and "</think>" not in text and "greeting" not in text
    u = MarkdownView(theme="light")
    qtbot.addWidget(u)
    u.append_text("<think>\nThe answer is 42.")
    u.refresh()
    assert "Thinking…" in u.toPlainText()
    u.finish()                                             # it never closed: it was the answer
    assert "Thinking" not in u.toPlainText() and "The answer is 42." in u.toPlainText()
    reopened = MarkdownView(theme="light")
    qtbot.addWidget(reopened)
    reopened.set_text(u.renderer.text)
    assert reopened.toPlainText() == u.toPlainText()


def test_task_items_show_a_box_and_no_bullet_and_quotes_a_bar(qtbot) -> None:
    from PySide6.QtGui import QTextListFormat

    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.set_text("- [x] done\n- [ ] todo\n\n* plain\n\n> quoted *words*\n")  # "*": a list of its own
    styles = {}
    b = v.document().begin()
    while b.isValid():
        if b.textList() is not None:
            styles[b.text()] = b.textList().format().style()
        b = b.next()
    assert styles["☑ done"] == styles["☐ todo"] == QTextListFormat.Style.ListStyleUndefined   # no bullet
    assert styles["plain"] == QTextListFormat.Style.ListDisc
    cursor = QTextCursor(v.document())
    cursor.setPosition(v.toPlainText().index("quoted"))
    table = cursor.currentTable()
    assert table is not None                                  # the quote sits in a table …
    bar = table.cellAt(0, 0)
    assert bar.format().background().color().name() == "#d0d7de" and bar.firstCursorPosition().block().text() == ""


def test_the_view_follows_a_live_theme_switch(qtbot) -> None:
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    before = app.palette()
    app.setPalette(QPalette(QColor("#f0f0f0")))
    try:
        v = MarkdownView()                                    # follows the system (application) palette
        qtbot.addWidget(v)
        fixed = MarkdownView(theme="light")                   # an explicit theme stays
        qtbot.addWidget(fixed)
        v.set_text("Some `code` here.\n\n```python\nx = 1\n```\n")
        assert v.theme == "light"
        app.setPalette(QPalette(QColor("#202020")))           # the system switched to dark
        qtbot.waitUntil(lambda: v.theme == "dark")
        assert v.renderer.theme == "dark" and "#0d1117" in v.renderer.html and "x = 1" in v.toPlainText()
        assert fixed.theme == "light"
    finally:
        app.setPalette(before)


def test_a_font_change_keeps_the_ui_font_families(qtbot) -> None:
    """Zoom sets a larger font on the view; Qt then gives the document the widget's font, which would drop the
    UI families (with their CJK fallbacks): the view puts them back and keeps the new size."""
    from PySide6.QtGui import QFont

    from app.ui.messages.markdown_view import UI_FONT_FAMILIES

    view = MarkdownView(theme="light")
    qtbot.addWidget(view)
    view.set_text("Some text, 中文")
    bigger = QFont(view.font())
    bigger.setFamilies(["Serif"])
    bigger.setPointSizeF(view.font().pointSizeF() * 1.5)
    view.setFont(bigger)
    font = view.document().defaultFont()
    assert font.families() == UI_FONT_FAMILIES
    assert font.pointSizeF() == bigger.pointSizeF()


def test_a_long_run_without_break_opportunities_gets_them_in_the_view_only(qtbot) -> None:
    """Qt lays a run with no break opportunity out in superlinear time: the view adds zero-width spaces to it
    (not to tags: a long link target stays whole); the renderer's HTML and a copied selection keep none."""
    from app.ui.messages.markdown_view import RUN_BREAK_CHARS

    word = "x" * 5_000
    url = "https://example.org/" + "y" * 1_000
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.set_text(f"A word: {word} and [a link]({url})\n")
    shown = v.toPlainText()
    assert shown.count("\u200b") >= 5_000 // RUN_BREAK_CHARS - 1        # break opportunities in the view …
    assert "\u200b" not in v.renderer.html and word in v.renderer.html   # … not in the renderer's HTML
    assert url in v.document().toHtml()                                   # the link's target is untouched
    v.selectAll()
    copied = v.createMimeDataFromSelection().text()
    assert "\u200b" not in copied and word in copied                      # a copy has the text as written


def test_a_view_made_in_a_zoomed_window_takes_its_text_size(qtbot) -> None:
    """The zoom is a ``font-size`` stylesheet rule on the window (``app.ui.window.appearance``): a view made under
    it gets a FontChange while it sets its own stylesheet, which its ``changeEvent`` handles like any other (it
    once came before the view's state was set: an AttributeError for every message widget made after a zoom)."""
    from PySide6.QtWidgets import QWidget

    top = QWidget()
    qtbot.addWidget(top)
    top.setStyleSheet("QWidget { font-size: 31.0pt; }")
    top.show()
    view = MarkdownView(top)
    assert view.font().pointSizeF() == 31.0
    assert view.document().defaultFont().pointSizeF() == 31.0
