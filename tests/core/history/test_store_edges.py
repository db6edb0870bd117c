"""The history store round trip, field by field (mutation testing found fields that no test read back:
``BROOK_MUTATE=app.core.history.store python3 -m mutmut run "app.core.history.store*"``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.store import Store


def test_every_field_of_a_chat_and_its_messages_comes_back(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    t0 = time.time()
    conv = Conversation(title="Rivers", system_prompt="Be terse.", preset="Precise", params={"temperature": 0.2})
    user = conv.add(Message(Role.USER, "Name a river.", created=1_700_000_000.5))
    reply = conv.add(Message(Role.ASSISTANT, "The Nile.", status=MessageStatus.ERROR, model="SmolLM2",
                             params={"seed": 3}, stop_reason="error", error="The model failed: boom",
                             metrics={"ttft_ms": 9.5}, provenance={"model_sha256": "ab" * 32}))
    store.save_message(conv, user)
    store.save_message(conv, reply)
    store.close()

    again = Store(path)
    [info] = again.list_conversations()
    assert (info.id, info.title, info.messages) == (conv.id, "Rivers", 2)
    assert t0 - 1 <= info.updated <= time.time() + 1
    loaded = again.load_conversation(info.id)
    assert (loaded.id, loaded.title, loaded.system_prompt, loaded.preset, loaded.params) == (
        conv.id, "Rivers", "Be terse.", "Precise", {"temperature": 0.2})
    u, r = loaded.messages
    assert (u.role, u.text, u.status, u.created) == (Role.USER, "Name a river.", MessageStatus.DONE, 1_700_000_000.5)
    assert (r.role, r.text, r.status, r.model, r.params, r.stop_reason, r.error, r.metrics, r.provenance) == (
        Role.ASSISTANT, "The Nile.", MessageStatus.ERROR, "SmolLM2", {"seed": 3}, "error", "The model failed: boom",
        {"ttft_ms": 9.5}, {"model_sha256": "ab" * 32})
    assert r.db_id is not None and u.db_id is not None and r.db_id != u.db_id


def test_rename_delete_and_a_missing_chat(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    a, b = Conversation(title="a"), Conversation(title="b")
    store.save_message(a, a.add(Message(Role.USER, "one")))
    store.save_message(b, b.add(Message(Role.USER, "two")))
    store.rename_conversation(a.id or 0, "renamed")
    assert store.load_conversation(a.id or 0).title == "renamed"
    assert store.load_conversation(b.id or 0).title == "b"                  # only the one named
    store.delete_conversation(b.id or 0)
    assert [i.title for i in store.list_conversations()] == ["renamed"]
    with pytest.raises(KeyError) as info:
        store.load_conversation(b.id or 0)
    assert info.value.args == (b.id,)
    m = store.load_conversation(a.id or 0).messages[0]
    store.delete_message(m.db_id or 0)
    assert store.load_conversation(a.id or 0).messages == [] and store.list_conversations()[0].messages == 0
