"""What the README promises, checked through the real window (scripted engine, offscreen): Continue on a
stopped reply, the ‹ k/n › version switcher after Ctrl+R, and the others of issue 24's list."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.core.chat import versions
from app.core.conversation import MessageStatus
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def window(qtbot, qloop, tmp_path: Path):
    made: list[MainWindow] = []

    def make(script: str = "One two three four five six seven eight nine ten.", tokens_per_s: float = 0,
             **kw) -> MainWindow:
        w = MainWindow(ScriptedEngine(script, tokens_per_s=tokens_per_s, **kw), store=Store(tmp_path / "h.db"))
        qtbot.addWidget(w)
        w.resize(1000, 700)
        w.show()
        qtbot.waitExposed(w)
        assert qloop.run_until_complete(w.load_model())
        made.append(w)
        return w

    yield make
    for w in made:
        qloop.run_until_complete(w.shutdown())


def _settle(qloop, cond, limit_s: float = 60.0) -> None:
    """Run the loop until ``cond()``; a hang fails here (an exception inside the qasync loop, as
    pytest-timeout's would be, is only logged)."""
    async def wait() -> bool:
        end = time.monotonic() + limit_s
        while not cond():
            if time.monotonic() > end:
                return False
            await asyncio.sleep(0.005)
        return True

    assert qloop.run_until_complete(wait()), "the window never got there"
    for _ in range(3):
        QApplication.processEvents()


def test_continue_on_a_stopped_reply_updates_its_bubble(window, qloop, caplog):
    script = "Alpha beta gamma delta. " * 8 + "THE END."
    w = window(script, tokens_per_s=200)
    reply = w.send("go")
    _settle(qloop, lambda: len(reply.text) > 20)
    w.stop()
    _settle(qloop, lambda: reply.status is MessageStatus.STOPPED and not w.session.generating)
    cut = reply.text
    assert "THE END." not in cut
    w.session.engine.tokens_per_s = 0
    caplog.set_level(logging.ERROR)
    assert w.messages.continue_reply(reply) is reply
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    view = w.chat.widget_for(reply).view
    _settle(qloop, lambda: "THE END." in view.toPlainText())
    assert view.toPlainText().startswith("Alpha beta gamma")
    assert "feed() after finish()" not in caplog.text


def test_regenerate_shows_its_version_switcher_at_once_and_the_arrows_switch(window, qloop):
    w = window("First answer.")
    reply = w.send("hello")
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    w.session.engine.script = ["Second ", "answer."]
    w.regenerate()                                        # Ctrl+R
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    widget = w.chat.widget_for(reply)
    assert versions.label(reply) == "2/2"
    assert "‹" in widget.status.text() and "2/2" in widget.status.text()
    assert widget.status.textFormat() == Qt.TextFormat.RichText and "href" in widget.status.text()
    widget.status.linkActivated.emit("version:prev")      # the ‹ arrow
    _settle(qloop, lambda: versions.label(reply) == "1/2")
    widget = w.chat.widget_for(reply)
    assert reply.text == "First answer." and "1/2" in widget.status.text()
    widget.status.linkActivated.emit("version:next")
    _settle(qloop, lambda: versions.label(reply) == "2/2")
    assert reply.text == "Second answer."


CODE_REPLY = "Here:\n\n```python\ndef add(a, b):\n    # sum\n    return a + 42 * b\n```\n\nDone."


def _code_colours(view) -> set[str]:
    """Foreground colours of the code's characters in ``view``'s document (the lexer's colours)."""
    doc = view.document()
    colours = set()
    block = doc.begin()
    while block.isValid():
        if "return a + 42" in block.text() or "def add" in block.text():
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                if frag.isValid() and frag.text().strip():
                    colours.add(frag.charFormat().foreground().color().name())
                it += 1
        block = block.next()
    return colours


@pytest.fixture
def restore_theme(qapp):
    from app.ui.look.theme import apply_theme

    yield
    apply_theme("system")


def test_settings_theme_applies_ticks_the_view_menu_and_code_keeps_colours(window, qloop, monkeypatch,
                                                                         restore_theme):
    from PySide6.QtWidgets import QMenu

    from app.ui.dialogs.settings import SettingsDialog
    from app.ui.look.style import is_dark

    w = window(CODE_REPLY)
    reply = w.send("code please")
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    view = w.chat.widget_for(reply).view
    _settle(qloop, lambda: len(_code_colours(view)) >= 3)             # highlighted by the lexer pool
    light = _code_colours(view)
    assert not is_dark()

    def choose_dark(dlg: SettingsDialog) -> int:
        dlg.theme.setCurrentIndex(dlg.theme.findData("dark"))
        return 1
    monkeypatch.setattr(SettingsDialog, "exec", choose_dark)
    w.edit_settings()
    assert is_dark()                                                  # applied, not only saved
    assert w.session.settings.theme == "dark"
    ticked = [a.text() for a in w.findChild(QMenu, "themeMenu").actions() if a.isChecked()]
    assert ticked == ["Dark"]
    view = w.chat.widget_for(reply).view
    _settle(qloop, lambda: len(_code_colours(view)) >= 3 and _code_colours(view) != light)
    w.appearance.set_theme("light")                                   # and back, from the View menu
    _settle(qloop, lambda: _code_colours(w.chat.widget_for(reply).view) == light)


def test_disabled_fields_look_disabled_in_dark(qtbot, restore_theme):
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QSpinBox

    from app.ui.look.theme import apply_theme

    apply_theme("dark")
    box = QSpinBox()
    qtbot.addWidget(box)
    box.setEnabled(False)
    pal = box.palette()
    G, R = QPalette.ColorGroup, QPalette.ColorRole
    assert pal.color(G.Disabled, R.Text) != pal.color(G.Active, R.Text)
    assert pal.color(G.Disabled, R.Text).lightness() < pal.color(G.Active, R.Text).lightness() - 60


def test_settings_show_the_context_memory_estimate_of_the_loaded_model(qtbot, qloop, monkeypatch, bundled_model,
                                                                       tmp_path):
    from app.engine.open import EngineSpec, open_engine
    from app.ui.dialogs.settings import SettingsDialog

    w = MainWindow(open_engine(EngineSpec(model_path=bundled_model, n_ctx=512)), store=Store(tmp_path / "h.db"))
    qtbot.addWidget(w)
    seen: list[str] = []

    def look(dlg: SettingsDialog) -> int:
        seen.append(dlg.memory.text())
        return 0
    monkeypatch.setattr(SettingsDialog, "exec", look)
    try:
        w.edit_settings()
    finally:
        qloop.run_until_complete(w.shutdown())
    assert seen and seen[0].startswith("≈ 94 MB for this context (KV cache)")     # SmolLM2 at 4,096 tokens


@pytest.fixture
def chinese(qapp):
    from app.ui.look import i18n

    yield lambda: i18n.install("zh_CN")
    i18n.install("en")


def _right_click(view, monkeypatch) -> list[str]:
    """Right-click ``view``'s text as a person does (a context-menu event on its viewport); the texts of the
    menu that opens ("" for a separator)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QMenu

    shown: list[QMenu] = []
    monkeypatch.setattr(QMenu, "popup", lambda self, *_a: shown.append(self))
    QApplication.sendEvent(view.viewport(), QContextMenuEvent(QContextMenuEvent.Reason.Mouse, QPoint(8, 8)))
    assert len(shown) == 1, "no menu, or Qt's own"
    return [a.text() for a in shown[0].actions()]


def test_right_click_on_a_messages_text_gives_brooks_menu_with_copy_and_select_all(window, qloop, monkeypatch,
                                                                                  chinese):
    w = window("A reply.")
    reply = w.send("hello")
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    view = w.chat.widget_for(reply).view
    texts = _right_click(view, monkeypatch)
    assert texts[:3] == ["Copy", "Select All", ""]
    assert "Copy (markdown)" in texts and "Regenerate (keeps this version)" in texts and "Delete message" in texts
    user = w.session.conversation.messages[0]
    assert _right_click(w.chat.widget_for(user).plain, monkeypatch)[:4] == ["Copy", "Select All", "",
                                                                              "Copy (markdown)"]
    chinese()
    texts = _right_click(w.chat.widget_for(reply).view, monkeypatch)
    assert texts[:2] == ["复制", "全选"] and "删除消息" in texts


def test_chinese_ui_code_copy_and_f1_close_and_f1_lists_every_shortcut(window, qloop, chinese):
    from PySide6.QtGui import QAction, QKeySequence
    from PySide6.QtWidgets import QDialogButtonBox

    from app.ui.window.help import SHORTCUTS, open_shortcuts

    w = window(CODE_REPLY)
    listed = {k.replace("−", "-").strip() for keys, _ in SHORTCUTS for k in keys.split(" / ")}
    listed |= {"Alt+Up", "Alt+Down"} if "Alt+↑" in listed else set()
    names = {"Del": "Delete"}
    for a in w.findChildren(QAction):
        for key in a.shortcuts():
            text = key.toString(QKeySequence.SequenceFormat.PortableText)
            assert names.get(text, text) in listed, f"F1 does not list {text} ({a.text()})"
    chinese()
    reply = w.send("code")
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    shown = w.chat.widget_for(reply).view.toPlainText()
    assert "复制" in shown and "Copy" not in shown
    dlg = open_shortcuts(w)
    close = dlg.findChild(QDialogButtonBox).buttons()[0]
    assert close.text() == "关闭"
    dlg.close()


def test_zoom_note_is_beside_the_model_name_not_over_it(window, qloop):
    w = window()
    try:
        w.appearance.zoom(1)
        for _ in range(3):
            QApplication.processEvents()
        bar = w.status
        assert bar.currentMessage() == ""                      # no temporary message painted over the widgets
        assert bar.note_label.isVisible() and bar.note_label.text().startswith("Text size 110")
        note = bar.note_label.geometry()
        for label in (bar.model_label, bar.state_label):
            assert label.isVisible() and not note.intersects(label.geometry())
    finally:
        w.appearance.zoom(0)


def test_the_inspector_dock_leaves_the_chat_room(window, qloop):
    w = window()
    reply = w.send("hello")
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    w.inspector_dock.toggleViewAction().trigger()
    _settle(qloop, lambda: w.inspector_dock.isVisible())
    assert w.chat.height() >= 0.25 * w.height(), (w.chat.height(), w.inspector_dock.height())


def test_the_sidebar_scrollbar_handle_is_not_black(window, qloop):
    w = window("Hi")
    for i in range(30):
        reply = w.send(f"chat {i}")
        _settle(qloop, lambda r=reply: r.status.final and not w.session.generating)
        w.new_chat()
    w.inspector_dock.toggleViewAction().trigger()
    _settle(qloop, lambda: w.history.verticalScrollBar().isVisible())
    image = w.history.verticalScrollBar().grab().toImage()
    dark = sum(1 for x in range(image.width()) for y in range(image.height())
               if image.pixelColor(x, y).lightness() < 40)
    assert dark == 0, f"{dark} near-black pixels in the sidebar's scrollbar"


def test_esc_clears_the_search(window, qloop, qtbot):
    w = window("Hi")
    reply = w.send("findable words")
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    w.activateWindow()
    w.search_panel.focus_query()
    qtbot.keyClicks(w.search_panel.query, "findable")
    assert w.search_panel.query.text() == "findable"
    qtbot.keyClick(w.search_panel.query, Qt.Key.Key_Escape)
    assert w.search_panel.query.text() == ""


def test_edit_and_resend_is_a_wide_wrapping_box(window, qloop, monkeypatch):
    from PySide6.QtWidgets import QPlainTextEdit

    from app.ui.dialogs.edit_message import EditMessageDialog

    w = window("Reply.")
    reply = w.send("a long message " * 30)
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    seen: list[tuple[int, QPlainTextEdit.LineWrapMode]] = []

    def look(dlg: EditMessageDialog) -> int:
        dlg.show()
        QApplication.processEvents()
        seen.append((dlg.editor.width(), dlg.editor.lineWrapMode()))
        dlg.editor.setPlainText("shorter")
        return 1
    monkeypatch.setattr(EditMessageDialog, "exec", look)
    new = w.messages.edit(w.session.conversation.messages[0])
    _settle(qloop, lambda: new is not None and new.status.final and not w.session.generating)
    width, wrap = seen[0]
    assert width >= 500 and wrap == QPlainTextEdit.LineWrapMode.WidgetWidth
    assert w.session.conversation.messages[0].text == "shorter"


def test_an_attachment_is_marked_with_an_icon_not_a_symbol_glyph(window, qloop):
    from PySide6.QtWidgets import QLabel

    from app.core.chat.attachments import Attachment

    w = window("Read it.")
    text = "What is this?\n\n" + Attachment("notes.txt", "hello\n", tokens=3).as_markdown()
    reply = w.send(text)
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    widget = w.chat.widget_for(w.session.conversation.messages[0])
    [chip] = [c for c in widget.findChildren(QLabel) if c.objectName() == "attachmentChip"]
    [icon] = [c for c in widget.findChildren(QLabel) if c.objectName() == "attachmentIcon"]
    assert chip.text().startswith("notes.txt") and not any(ord(ch) > 0x2000 for ch in chip.text().split(" · ")[0])
    assert icon.pixmap() is not None and not icon.pixmap().isNull()


def test_branch_from_a_message_and_duplicate_a_chat(window, qloop, monkeypatch, tmp_path):
    w = window("An answer.")
    first = w.send("one")
    _settle(qloop, lambda: first.status.final and not w.session.generating)
    second = w.send("two")
    _settle(qloop, lambda: second.status.final and not w.session.generating)
    original = w.session.conversation
    texts = [m.text for m in original.messages]
    assert texts == ["one", "An answer.", "two", "An answer."]
    widget = w.chat.widget_for(first)
    menu = _right_click(widget.view, monkeypatch)
    assert "Branch from here (new chat)" in menu
    assert w.messages.branch(first)                                  # what the menu item does
    branched = w.session.conversation
    assert branched is not original and branched.title.endswith("(branch)")
    assert [m.text for m in branched.messages] == ["one", "An answer."]
    assert [m.text for m in original.messages] == texts                # unchanged
    stored = Store(tmp_path / "h.db").load_conversation(int(branched.id))
    assert [m.text for m in stored.messages] == ["one", "An answer."]
    reply = w.send("three")                                           # the branch goes on by itself
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    assert len(Store(tmp_path / "h.db").load_conversation(int(original.id)).messages) == 4
    assert w.messages.branch(None)                                    # Chat → Duplicate chat
    dup = w.session.conversation
    assert [m.text for m in dup.messages] == ["one", "An answer.", "three", "An answer."]
    assert dup.title.endswith("(copy)")
    titles = w.history.titles()
    assert any(t.endswith("(copy)") for t in titles) and any(t.endswith("(branch)") for t in titles)
