"""Edit and delete keep the stored chat consistent after a restart (real SQLite file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.chat.message_ops import delete_message, edit_message
from app.core.conversation import Conversation, Message, Role
from app.core.history.store import Store


def _chat(store: Store) -> Conversation:
    conv = Conversation(title="t")
    for role, text in [(Role.USER, "q1"), (Role.ASSISTANT, "a1"), (Role.USER, "q2"), (Role.ASSISTANT, "a2")]:
        store.save_message(conv, conv.add(Message(role, text)))
    return conv


def test_edit_drops_what_followed_and_survives_a_restart(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv = _chat(store)
    removed = edit_message(store, conv, conv.messages[0], "q1, edited")
    assert [m.text for m in removed] == ["a1", "q2", "a2"]
    assert [m.text for m in conv.messages] == ["q1, edited"]
    store.close()
    again = Store(tmp_path / "h.sqlite3")
    assert [m.text for m in again.load_conversation(conv.id or 0).messages] == ["q1, edited"]
    assert again.search("a2") == [] and len(again.search("edited")) == 1
    with pytest.raises(ValueError, match="empty"):
        edit_message(again, conv, conv.messages[0], "  ")


def test_delete_one_message(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv = _chat(store)
    delete_message(store, conv, conv.messages[1])
    assert [m.text for m in Store(tmp_path / "h.sqlite3").load_conversation(conv.id or 0).messages] == \
        ["q1", "q2", "a2"]
    with pytest.raises(ValueError):
        delete_message(store, conv, Message(Role.USER, "stranger"))
