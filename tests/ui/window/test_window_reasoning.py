"""A reply whose chat template opened ``<think>`` (Qwen3-Thinking, QwQ, R1 distills) through the session and the
view: it streams as a Thinking section, ``</think>`` is never on screen, and a reopened chat shows the same."""

from __future__ import annotations

import pytest

from app.core.conversation import MessageStatus
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.helpers import run_on as _run
from tests.helpers import until as _until

#: What such a model writes: its reasoning (which mentions the tag itself), the closing tag, the answer.
REASONING = "The user asks what the <think> tag is for. I will explain it briefly."
ANSWER = "The `<think>` tag marks a model's **reasoning**; the answer follows it."
SCRIPT = f"{REASONING}\n</think>\n\n{ANSWER}\n"


@pytest.fixture
def window(qtbot, qloop, tmp_path):
    store = Store(tmp_path / "h.sqlite3")
    w = MainWindow(ScriptedEngine(SCRIPT, tokens_per_s=60, reasoning_open=True), store=store)
    qtbot.addWidget(w)
    w.show()
    assert _run(qloop, w.load_model())
    yield w, store
    qloop.run_until_complete(w.shutdown())


def test_reasoning_opened_by_the_template_streams_folds_and_reopens(window, qloop) -> None:
    w, store = window
    reply = w.send("What is the think tag?")
    seen: list[str] = []

    def shown() -> str:
        widget = w.chat.widget_for(reply)
        view = widget.view if widget is not None else None
        return view.toPlainText() if view is not None else ""

    def record() -> bool:
        seen.append(shown())
        return reply.status.final and not w.session.generating

    _run(qloop, _until(lambda: "I will explain" in shown() or reply.status.final))
    live = shown()
    assert live.startswith("▾ Thinking…") and "I will explain" in live    # reasoning, shown as such, while it streams
    _run(qloop, _until(record))
    _run(qloop, _until(lambda: "follows it" in shown()))
    assert reply.status is MessageStatus.DONE
    assert all("</think>" not in s for s in seen)
    final = shown()
    assert final.startswith("▸ Thinking") and "reasoning; the answer follows it." in final
    assert "I will explain" not in final                                   # folded once the answer came
    assert reply.text.startswith("<think>")                                # stored as the model's turn holds it

    view = w.chat.widget_for(reply).view
    view.toggle_thinking()                                                  # the fold shows the reasoning
    assert "I will explain it briefly." in view.toPlainText() and "</think>" not in view.toPlainText()

    conv_id = w.session.conversation.id
    w.new_chat()
    w.open_conversation(conv_id)                                            # reopened from the store
    _run(qloop, _until(w.chat.fully_rendered))                              # a preview first, then rendered
    again = w.chat.widgets[-1].view
    assert again is not None and again.toPlainText() == final
    assert store.load_conversation(conv_id).messages[-1].text == reply.text
