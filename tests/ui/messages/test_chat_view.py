"""The virtual message list in the real window (offscreen): no blank space under the last message, only the
messages near the viewport hold widgets, the streaming reply is measured at its own width (no document clone per
tick), long words wrap inside narrow windows and the column stays readable in wide ones."""

from __future__ import annotations

import random

import pytest
from PySide6.QtWidgets import QApplication

from app.core.chat.session import ModelState
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.engine.scripted import ScriptedEngine
from app.ui.messages.chat_view import MAX_READING_WIDTH
from app.ui.window.main_window import MainWindow
from tests.helpers import until
from tests.helpers.window import scripted_window, show_chat

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def window(qtbot):  # type: ignore[no-untyped-def]
    return scripted_window(qtbot)


def chat_of(n: int, seed: int) -> Conversation:
    rng = random.Random(seed)
    conv = Conversation()
    for i in range(n):
        if i % 2 == 0:
            conv.add(Message(Role.USER, rng.choice(["Hi", "Why?", "Tell me more about rivers, please."])))
        else:
            kind = rng.randrange(3)
            text = ("ok" if kind == 0 else
                    "A short reply with **bold** text." if kind == 1 else
                    "\n\n".join(f"Paragraph {k}: " + "words " * rng.randrange(5, 60) for k in range(6))
                    + "\n\n```python\nprint('code')\n```\n")
            conv.add(Message(Role.ASSISTANT, text))
    return conv


def bottom_gap(w: MainWindow) -> int:
    """Pixels between the last message's bottom and the viewport's bottom."""
    chat = w.chat
    last = chat.widgets[-1]
    return chat.viewport().height() - (last.y() + last.height())


@pytest.mark.parametrize("n", [1, 2, 3, 14, 28, 40, 77, 200])
def test_scrolled_to_the_end_the_last_message_sits_at_the_bottom(window, n: int) -> None:
    show_chat(window, chat_of(n, n))
    QApplication.processEvents()
    chat = window.chat
    assert chat.widgets[-1].message is chat.items[-1].message
    total = chat.positions.tops[-1] + chat.widgets[-1].height() + 12           # content height
    if total > chat.viewport().height():
        assert 0 <= bottom_gap(window) <= 14                            # the bottom margin, no blank space
    else:
        assert chat.widgets[0].y() <= 14                                # short chats start at the top
    for wdg in chat.widgets:                                            # every widget shows all of its message
        assert abs(wdg.height() - wdg.heightForWidth(wdg.width())) <= 1   # its own height, no more, no less


def test_only_messages_near_the_viewport_have_widgets(window) -> None:
    made: list[object] = []
    window.chat.widget_added.connect(made.append)
    show_chat(window, chat_of(400, 7))
    QApplication.processEvents()
    assert 0 < len(window.chat.widgets) <= len(made) < 40           # opening made the last screen's only
    bar = window.chat.verticalScrollBar()
    bar.setValue(0)
    QApplication.processEvents()
    assert window.chat.widgets[0].message is window.chat.items[0].message
    assert len(window.chat.widgets) < 60


def test_the_streaming_reply_is_measured_at_its_own_width(window, qloop, monkeypatch) -> None:
    """The layout asks the reply's height at exactly the width it shows it at: no document clone per tick."""

    import app.ui.messages.markdown_view as mv
    import app.ui.messages.sealed_view as pv

    asked: list[tuple[int, int]] = []
    real = pv.height_for_width

    def spy(view, width, probes, lay_out_unset=True):  # type: ignore[no-untyped-def]
        if isinstance(view, mv.MarkdownView) and view.document().characterCount() > 1:   # text arrived
            asked.append((width, view.width()))
        return real(view, width, probes, lay_out_unset)

    monkeypatch.setattr(pv, "height_for_width", spy)
    window.session.engine = ScriptedEngine("Some words in a paragraph. " * 400, tokens_per_s=2000)
    window.session.engine.load()
    window.session._loaded.set()
    window.session.model_state = ModelState.IDLE
    reply = window.send("go")
    assert reply is not None
    qloop.run_until_complete(until(lambda: reply.status.final))
    assert len(asked) > 10
    assert all(width == shown for width, shown in asked), [a for a in asked if a[0] != a[1]][:5]


def test_narrow_and_wide_windows(window) -> None:
    conv = Conversation()
    conv.add(Message(Role.USER, "x" * 400))                          # one long word
    conv.add(Message(Role.ASSISTANT, "word " * 400, status=MessageStatus.DONE))
    show_chat(window, conv)
    window.resize(320, 600)
    QApplication.processEvents()
    chat = window.chat
    for wdg in chat.widgets:
        assert wdg.x() >= 0 and wdg.x() + wdg.width() <= chat.viewport().width()   # nothing cut at the right
    window.sidebar.hide()
    window.resize(2500, 800)
    QApplication.processEvents()
    for wdg in chat.widgets:
        assert wdg.width() <= MAX_READING_WIDTH
    x, width = chat.column()
    assert abs((x + width / 2) - chat.viewport().width() / 2) <= 1   # a centred column
