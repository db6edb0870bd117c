"""zh-CN and English UI: Qt's translation tools, the language choice, and every source string translated."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.ui.look import i18n
from app.ui.window.help import ShortcutsDialog
from app.ui.window.search_panel import SearchPanel


@pytest.fixture
def chinese(qapp):  # type: ignore[no-untyped-def]
    assert i18n.install("zh_CN") == "zh_CN"
    yield
    i18n.install("en")


def test_language_follows_the_setting_then_the_system_locale() -> None:
    assert i18n.choose_language("zh_CN", "en_US") == "zh_CN"
    assert i18n.choose_language("en", "zh_CN") == "en"
    assert i18n.choose_language("system", "zh_TW") == "zh_CN"
    assert i18n.choose_language("system", "de_DE") == "en"
    assert i18n.choose_language("klingon", "en_GB") == "en"


def test_qt_tools_ship_with_pyside6() -> None:
    assert i18n.pyside_tool("lrelease") is not None and i18n.pyside_tool("lupdate") is not None


def test_widgets_made_after_install_are_chinese_and_english_again_after(qtbot, chinese) -> None:
    panel = SearchPanel(None)
    qtbot.addWidget(panel)
    assert panel.query.placeholderText() == "搜索所有对话…"
    dlg = ShortcutsDialog()
    qtbot.addWidget(dlg)
    assert dlg.windowTitle() == "键盘快捷键" and "重新生成上一条回复" in dlg.label.text()
    i18n.install("en")
    assert SearchPanel(None).query.placeholderText() == "Search all chats…"


def test_every_source_string_has_a_chinese_translation() -> None:
    tree = ET.parse(i18n.TRANSLATIONS / "brook_zh_CN.ts")
    unfinished = [m.findtext("source") for m in tree.iter("message")
                  if m.find("translation").get("type") in ("unfinished", "obsolete", "vanished")
                  or not ("".join(m.find("translation").itertext())).strip()]
    assert unfinished == []


def test_english_plurals_come_from_the_plural_only_translation(qapp) -> None:
    from PySide6.QtCore import QCoreApplication

    assert i18n.install("en") == "en"
    found = [QCoreApplication.translate("SearchPanel", "%n message(s) found", "", n) for n in (1, 2)]
    assert found == ["1 message found", "2 messages found"]
    tree = ET.parse(i18n.TRANSLATIONS / "brook_en.ts")
    sources = {m.findtext("source") for m in ET.parse(i18n.TRANSLATIONS / "brook_zh_CN.ts").iter("message")
               if m.get("numerus") == "yes"}
    assert {m.findtext("source") for m in tree.iter("message")} == sources      # every plural, nothing else
    assert all(m.find("translation").get("type") is None and all(f.text for f in m.iter("numerusform"))
               for m in tree.iter("message"))


def test_lupdate_sees_every_string_under_a_class_context(tmp_path) -> None:
    """A string lupdate files under no class (``tr = QCoreApplication.translate; tr("Ctx", "text")`` reads as a
    tr() call with "Ctx" as its text; ``self.w.tr(…)`` is filed under "self.w") is never found at run time: the
    next ``python -m app.ui.look.i18n update`` would drop its translation."""
    import re
    import shutil
    import subprocess

    tool = i18n.pyside_tool("lupdate")
    assert tool is not None
    ts = tmp_path / "check.ts"
    shutil.copy(i18n.TRANSLATIONS / "brook_zh_CN.ts", ts)
    subprocess.run([str(tool), "-silent", "-no-obsolete", "-locations", "none", *i18n.source_files(), "-ts", str(ts)],
                   check=True, capture_output=True, timeout=120)
    contexts = {c.findtext("name") or "" for c in ET.parse(ts).iter("context")}
    assert [c for c in contexts if not re.fullmatch(r"[A-Z]\w*", c)] == []
