"""Row heights of the message list (app/ui/messages/positions.py): ``heights_in`` gives each row the height
``ListItem.height`` gives at the row's own width in the column (user messages indented, replies, notices)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.conversation import Message, Role
from app.ui.messages.positions import ListItem, Positions, heights_in, row_box


@pytest.mark.parametrize("col", [(16, 900), (0, 300), (5, 61)])
def test_heights_in_the_column_are_each_rows_own(col: tuple[int, int]) -> None:
    rows = [ListItem(message=Message(Role.USER, "a question\nof two lines")),
            ListItem(message=Message(Role.ASSISTANT, "a reply " * 300 + "\n" * 40)),
            ListItem(notice=("a notice line", "notice"))]
    rows[1].heights[row_box(rows[1], col)[1]] = 777          # measured once with its widget
    height = heights_in(col)
    for _ in range(2):                                       # (the second time from the kept estimates)
        assert [height(it) for it in rows] == [it.height(row_box(it, col)[1]) for it in rows]
    assert height(rows[1]) == 777 and height(rows[0]) != height(rows[2])


def test_positions_from_heights_in() -> None:
    rows = [ListItem(message=Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, "text " * (i * 40)))
            for i in range(20)]
    pos, col = Positions(), (16, 700)
    total = pos.update(rows, heights_in(col))
    assert pos.tops == sorted(pos.tops) and total == pos.tops[-1] + pos.placed[-1] + 12
    assert pos.placed == [it.height(row_box(it, col)[1]) for it in rows]


@pytest.mark.parametrize("col", [(16, 900), (0, 300)])
def test_a_saved_message_not_read_yet_is_estimated_from_its_stored_size_as_if_read(tmp_path: Path,
                                                                                col: tuple[int, int]) -> None:
    from app.core.conversation import Conversation
    from app.core.history.lazy import StoredMessage
    from app.core.history.store import Store

    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation()
    for text in ("a question\nof two lines", "a reply " * 300 + "\n" * 40, "", "x" * 5000):
        store.save_message(conv, conv.add(Message(Role.ASSISTANT, text)))
    assert conv.id is not None
    unread = [ListItem(message=m) for m in store.load_conversation(conv.id).messages]
    read = [ListItem(message=Message(m.role, m.text)) for m in conv.messages]
    height = heights_in(col)
    assert [height(it) for it in unread] == [height(it) for it in read]
    assert all(type(it.message) is StoredMessage for it in unread)          # (estimated without reading)
    assert [it.estimate(row_box(it, col)[1] + 1) for it in unread] == [it.estimate(row_box(it, col)[1] + 1)
                                                                      for it in read]
    store.close()
