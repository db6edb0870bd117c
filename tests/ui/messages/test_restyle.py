"""Code colours that come for a piece already on screen are applied where it is (app/ui/messages/restyle.py):
the text after it never leaves the screen, and the documents end as a view built with the colours shows them."""

from __future__ import annotations

import time

import pytest
from PySide6.QtGui import QColor, QTextCursor, QTextDocument
from PySide6.QtWidgets import QApplication

from app.ui.messages.markdown_view import MarkdownView
from app.ui.messages.restyle import restyle_in_place, spans_only
from app.ui.messages.rich_text import set_up_document

pytestmark = pytest.mark.timeout(180)


def _reply(lines: int) -> str:
    stamp = time.monotonic_ns()                  # never lexed before: the colours come from the pool, later
    code = "".join(f"    value_{k} = compute_something({k}, 'text {stamp}')  # note {k}\n" for k in range(lines))
    return "Intro paragraph.\n\n```python\ndef f():\n" + code + "```\n\nAfter the code, a closing paragraph.\n"


def _shown(view: MarkdownView) -> int:
    return len(view.toPlainText())


def _runs(view: MarkdownView) -> list[tuple[str, str, bool, int]]:
    """The view's text as runs of one look (colour, italic, weight), over all its documents (cut anywhere)."""
    runs: list[tuple[str, str, bool, int]] = []
    for doc in view.documents():
        block = doc.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                fmt = frag.charFormat()
                look = (fmt.foreground().color().name(), fmt.fontItalic(), fmt.fontWeight())
                if runs and runs[-1][1:] == look:
                    runs[-1] = (runs[-1][0] + frag.text(), *look)
                else:
                    runs.append((frag.text(), *look))
                it += 1
            block = block.next()
    return runs


@pytest.mark.parametrize("lines", [60, 300])
def test_colours_that_come_after_the_end_leave_the_text_on_screen(qtbot, lines: int) -> None:
    text = _reply(lines)
    view = MarkdownView(theme="light")
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    for i in range(0, len(text), 64):            # one loop turn: the pool's colours are taken after the end
        view.append_text(text[i:i + 64])
        view.refresh()
    view.finish()
    whole = _shown(view)
    assert view.renderer.highlights_pending
    least = whole
    deadline = time.monotonic() + 60
    while (view.renderer.highlights_pending or view.behind) and time.monotonic() < deadline:
        QApplication.processEvents()
        least = min(least, _shown(view))
        time.sleep(0.005)
    assert not view.renderer.highlights_pending and not view.behind
    assert least == whole, f"the text on screen went down to {least} of {whole} characters"
    fresh = MarkdownView(theme="light")
    qtbot.addWidget(fresh)
    fresh.resize(700, 500)
    fresh.set_text(text)                         # the colours are known now: built coloured at once
    assert not fresh.renderer.highlights_pending
    runs = _runs(fresh)
    assert len({r[1] for r in runs}) >= 3 and len(runs) > lines                 # coloured
    assert _runs(view) == runs


def test_only_a_change_of_spans_is_applied_in_place(qapp) -> None:
    assert spans_only("<pre>x = 'a'</pre>", '<pre>x <span style="color: #666">=</span> &#x27;a&#x27;</pre>')
    assert spans_only('<pre>s = "a\'"</pre>', '<pre>s <span>=</span> &quot;a&#39;&quot;</pre>')   # the lexer's quotes
    assert not spans_only("<pre>x</pre>", "<pre>x</pre>")                      # nothing changed
    assert not spans_only("<p>a</p>", "<p>a<b>b</b></p>")                     # text and tags changed
    doc = QTextDocument()
    set_up_document(doc, qapp.font())
    cursor = QTextCursor(doc)
    cursor.insertHtml("<p>before</p><p>x = 1</p>")
    start = doc.find("x = 1").selectionStart()
    end = doc.characterCount() - 1
    cursor = QTextCursor(doc)
    assert not restyle_in_place(cursor, start, end, '<p>y <span style="color:#ff0000">=</span> 1</p>')   # text
    assert doc.toPlainText() == "before\nx = 1"
    assert restyle_in_place(cursor, start, end, '<p>x <span style="color:#ff0000">=</span> 1</p>')
    assert doc.toPlainText() == "before\nx = 1"                               # the text is as it was …
    eq = QTextCursor(doc)
    eq.setPosition(start + 3)                                                 # … and its "=" is red
    assert eq.charFormat().foreground().color().name() == "#ff0000"
    eq.setPosition(start + 1)
    assert eq.charFormat().foreground().color().name() != "#ff0000"


def test_colours_that_come_for_the_reasoning_keep_it_dimmed(qtbot) -> None:
    """The reasoning is shown dimmed while the model reasons: colours that come for its code are not copied over
    that (its pieces are inserted again, and dimmed)."""
    from app.core.render.markdown.thinking import THINK_DIM

    stamp = time.monotonic_ns()
    code = "".join(f"value_{k} = compute({k}, 'text {stamp}')\n" for k in range(8))
    text = f"<think>\nLet me write it:\n\n```python\n{code}```\n\nThat should do.\n"
    view = MarkdownView(theme="light")
    qtbot.addWidget(view)
    view.resize(700, 500)
    for i in range(0, len(text), 64):
        view.append_text(text[i:i + 64])
        view.refresh()
    assert view.renderer.highlights_pending

    def coloured() -> bool:
        view.refresh()
        return not view.renderer.highlights_pending
    qtbot.waitUntil(coloured, timeout=60_000)
    looks = {look for run in _runs(view) if "value_" in run[0] for look in [run[1]]}
    assert looks == {QColor(THINK_DIM).name()}
