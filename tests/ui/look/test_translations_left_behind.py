"""Texts that used to stay English in the Chinese UI: the stream inspector's labels, the load progress window, and
the core's notes and notices (``app.core.chat.notes``, ``app.core.chat.model_loading``), which the UI translates at its
boundary
(``app.ui.look.retranslate.core_text``) because the core never imports Qt."""

from __future__ import annotations

import re

import pytest

from app.core.chat import notes
from app.core.chat.model_loading import KEPT_CANCELLED
from app.core.conversation import Message, MessageStatus, Role
from app.ui.look import i18n
from app.ui.look.retranslate import core_text
from tests.ui.window.test_window_zh import untranslated, visible_strings

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def chinese(qapp):  # type: ignore[no-untyped-def]
    assert i18n.install("zh_CN") == "zh_CN"
    yield
    i18n.install("en")


def test_the_inspector_dock_is_chinese(chinese, qtbot) -> None:
    from app.ui.inspector.dock import StreamInspectorDock

    dock = StreamInspectorDock()
    qtbot.addWidget(dock)
    dock.show()
    strings = visible_strings(dock)
    assert len(strings) > 15                              # title, figure labels, buttons, hover line
    assert untranslated(strings, "") == []
    assert HAN.search(dock.windowTitle())


def test_the_load_progress_window_is_chinese(chinese, qtbot) -> None:
    from app.core.chat.session import ChatSession, ModelState
    from app.engine.scripted import ScriptedEngine
    from app.ui.window.load_progress import LoadProgressDialog

    dlg = LoadProgressDialog(ChatSession(ScriptedEngine(name="SmolLM2")))
    qtbot.addWidget(dlg)
    dlg.set_state(ModelState.LOADING)
    dlg.show()
    assert untranslated(visible_strings(dlg), "SmolLM2") == []


def test_core_notes_and_notices_reach_the_window_in_chinese(chinese) -> None:
    reply = Message(Role.ASSISTANT, "", status=MessageStatus.STOPPED)
    stopped = notes.unanswered_note(reply)
    assert stopped is not None and HAN.search(core_text(stopped)) and not re.search("[A-Za-z]{3,}", core_text(stopped))
    reply.left_out = 3
    many = notes.left_out_note(reply)
    assert many is not None and "3" in core_text(many) and HAN.search(core_text(many))
    kept = "⚠ " + KEPT_CANCELLED.replace("%1", "Qwen-7B").replace("%2", "Llama-8B")
    assert core_text(kept) == "⚠ 继续使用 Qwen-7B：已取消加载 Llama-8B。"
    assert core_text("Something no template knows") == "Something no template knows"


def test_the_unanswered_note_at_a_message_is_chinese(chinese, qtbot) -> None:
    from app.ui.messages.widget import MessageWidget

    reply = Message(Role.ASSISTANT, "", status=MessageStatus.STOPPED)
    widget = MessageWidget(reply)
    qtbot.addWidget(widget)
    assert widget.note.text().startswith("在回复之前就已停止") and "重新发送" in widget.note.text()
