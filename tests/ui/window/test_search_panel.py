"""The search panel over a real history file: typing finds English and Chinese, Enter opens the hit."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.core.conversation import Conversation, Message, Role
from app.core.history.store import Store
from app.ui.window.search_panel import SearchPanel, hit_html


def test_typing_shows_highlighted_hits_and_enter_opens_one(qtbot, tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation(title="长城 <history>")
    store.save_message(conv, conv.add(Message(Role.USER, "请介绍一下长城的历史和建造年代。")))
    store.save_message(conv, conv.add(Message(Role.ASSISTANT, "The Great Wall was built over many centuries.")))
    panel = SearchPanel(store)
    qtbot.addWidget(panel)
    panel.show()
    panel.query.insert("建造年代")          # as an input method would (QTest types ASCII only)
    qtbot.waitUntil(lambda: len(panel.hits) == 1)
    assert panel.results.count() == 1 and panel.summary.isVisible()
    label = panel.results.itemWidget(panel.results.item(0))
    assert "<b><u>建造年代</u></b>" in label.text() and "长城 &lt;history&gt;" in label.text()
    with qtbot.waitSignal(panel.open_requested) as sig:
        qtbot.keyClick(panel.query, Qt.Key.Key_Return)
    assert sig.args == [conv.id, conv.messages[0].db_id]
    panel.query.setText("many centuries")
    assert [h.message_id for h in panel.run_query()] == [conv.messages[1].db_id]
    panel.query.setText("zebra")
    assert panel.run_query() == [] and panel.summary.text() == "Nothing found"
    with qtbot.waitSignal(panel.closed):
        qtbot.keyClick(panel.query, Qt.Key.Key_Escape)
    assert panel.query.text() == ""


def test_snippet_html_is_escaped() -> None:
    from app.core.history.search import SearchHit

    hit = SearchHit(1, 2, "t", "user", "a <b> & needle", ((8, 14),), 0.0)
    assert hit_html(hit) == "a &lt;b&gt; &amp; <b><u>needle</u></b>"
