"""The language changes live: English → 简体中文 → English while the window is open, and every visible string of
the main window follows (menus, buttons, placeholders, status, welcome state), by the same check as the window
started in Chinese (``test_window_zh``)."""

from __future__ import annotations

import asyncio
import re

import pytest
from PySide6.QtWidgets import QApplication

from app.core.conversation import Conversation, Message, Role
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.look import i18n
from app.ui.window.menus import MenuKey
from tests.helpers import until
from tests.ui.window.test_window_zh import untranslated, visible_strings

pytestmark = pytest.mark.timeout(90)
HAN = re.compile(r"[\u4e00-\u9fff]")


def _settle(qloop) -> None:  # type: ignore[no-untyped-def]
    QApplication.processEvents()                 # the LanguageChange events Qt posted
    qloop.run_until_complete(asyncio.sleep(0.05))


def test_switch_en_zh_en_at_run_time(qtbot, qloop, tmp_path) -> None:
    from app.ui.window.main_window import MainWindow

    assert i18n.install("en") == "en"
    engine = ScriptedEngine(tokens_per_s=0)
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation(title="JSON")              # a title that reads the same in every language
    store.save_message(conv, conv.add(Message(Role.USER, "Where shall we go?")))
    w = MainWindow(engine, store=store)
    qtbot.addWidget(w)
    w.show()
    try:
        assert qloop.run_until_complete(w.load_model())
        panel = w.search_panel
        panel.query.setText("json")                   # a plural summary ("1 chat title") and a "Chat" hit
        panel.run_query()
        english = visible_strings(w)
        assert not [t for _w, t in english if HAN.search(t)]
        assert w.language.apply("zh_CN") == "zh_CN"
        _settle(qloop)
        qloop.run_until_complete(until(lambda: not panel._timer.isActive()))   # the panel searched again
        chinese = visible_strings(w)
        assert HAN.search(panel.summary.text()), panel.summary.text()
        assert len(chinese) > 30
        assert untranslated(chinese, engine.name) == []
        assert w.menus[MenuKey.FILE].title() != "&File" and w.send_button.text() == "发送"
        assert HAN.search(w.input.placeholderText()) and HAN.search(w.status.state_label.text())
        assert w.language.apply("en") == "en"
        _settle(qloop)
        qloop.run_until_complete(until(lambda: not panel._timer.isActive()))
        back = visible_strings(w)
        assert not [t for _w, t in back if HAN.search(t)]
        timing = re.compile(r"^Search took ")            # a measured time, different each search
        assert {t for _w, t in back if not timing.match(t)} == {t for _w, t in english if not timing.match(t)}
    finally:
        i18n.install("en")
        qloop.run_until_complete(w.shutdown())
