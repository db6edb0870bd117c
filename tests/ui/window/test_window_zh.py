"""The whole window in Simplified Chinese: after switching the language, no visible string of the main window
(menus, buttons, labels, placeholders, tooltips, status bar, welcome state) is left in English."""

from __future__ import annotations

import re

import pytest
from PySide6.QtWidgets import QAbstractButton, QLabel, QLineEdit, QMenu, QPlainTextEdit, QWidget

from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.look import i18n

pytestmark = pytest.mark.timeout(60)
#: Words that are the same in every language: names, units, keys.
NEUTRAL = re.compile(r"\b(Brook|TTFT|GGUF|SHA-256|Top-[pk]|Min-p|Esc|Enter|Ctrl|Shift|Alt|F\d+|Tab|ms|s|tok/s|"
                     r"tokens?/s|KB|MB|GB|JSON|Markdown|token|llama\.cpp)\b")


def visible_strings(window: QWidget) -> list[tuple[str, str]]:
    """(where, text) of every string a person can see or hear in ``window``."""
    out: list[tuple[str, str]] = [("title", window.windowTitle())]
    for w in window.findChildren(QWidget):
        if not w.isVisibleTo(window) and not isinstance(w, QMenu):
            continue
        name = type(w).__name__ + ":" + (w.objectName() or "")
        if isinstance(w, QLabel) and w.text():
            out.append((name, re.sub(r"<[^>]+>", "", w.text())))
        if isinstance(w, QAbstractButton) and w.text():
            out.append((name, w.text()))
        if isinstance(w, (QLineEdit, QPlainTextEdit)) and w.placeholderText():
            out.append((name + " placeholder", w.placeholderText()))
        if w.toolTip():
            out.append((name + " tooltip", w.toolTip()))
        if w.accessibleName():
            out.append((name + " accessible name", w.accessibleName()))
    for menu in window.findChildren(QMenu):
        out.append(("menu", menu.title()))
        for a in menu.actions():
            if a.text():
                out.append(("menu item", a.text()))
    return [(where, t) for where, t in out if t.strip()]


def untranslated(strings: list[tuple[str, str]], model_name: str) -> list[tuple[str, str]]:
    bad = []
    for where, text in strings:
        rest = NEUTRAL.sub("", text.replace("&", "").replace(model_name, ""))
        if re.search(r"[A-Za-z]{2,}", rest) and not re.search(r"[\u4e00-\u9fff]", rest):   # Chinese may name Python
            bad.append((where, text))
    return bad


def test_no_visible_string_of_the_window_stays_english(qtbot, qloop, tmp_path) -> None:
    from app.ui.window.main_window import MainWindow

    assert i18n.install("zh_CN") == "zh_CN"
    try:
        engine = ScriptedEngine(tokens_per_s=0)
        w = MainWindow(engine, store=Store(tmp_path / "h.sqlite3"))
        qtbot.addWidget(w)
        w.show()
        assert qloop.run_until_complete(w.load_model())
        strings = visible_strings(w)
        assert len(strings) > 30                   # the walk really sees the window
        assert untranslated(strings, engine.name) == []
        qloop.run_until_complete(w.shutdown())
    finally:
        i18n.install("en")


def test_the_check_itself_catches_english(qtbot) -> None:
    label = QLabel("Send")
    assert untranslated([("x", label.text()), ("y", "发送"), ("z", "TTFT 12 ms")], "m") == [("x", "Send")]
