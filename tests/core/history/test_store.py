"""History in a real SQLite file: round trip, partial replies, crash recovery, corrupt files."""

from __future__ import annotations

from pathlib import Path

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.store import Store


def test_round_trip_keeps_provenance(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation(title="Reverse a string")
    u = conv.add(Message(Role.USER, "Reverse 'abc'"))
    r = conv.add(Message(Role.ASSISTANT, status=MessageStatus.GENERATING, model="SmolLM2"))
    store.save_message(conv, u)
    r.append("`'cba'`")
    store.save_message(conv, r)
    r.append(" done")
    r.status, r.stop_reason = MessageStatus.DONE, "stop"
    r.metrics = {"ttft_ms": 12.5, "decode_tokens_per_s": 40.0}
    r.params = {"temperature": 0.0}
    store.save_message(conv, r)
    store.close()

    again = Store(tmp_path / "h.sqlite3")
    [info] = again.list_conversations()
    assert (info.title, info.messages) == ("Reverse a string", 2)
    loaded = again.load_conversation(info.id)
    assert [m.text for m in loaded.messages] == ["Reverse 'abc'", "`'cba'` done"]
    reply = loaded.messages[1]
    assert reply.status is MessageStatus.DONE and reply.stop_reason == "stop" and reply.model == "SmolLM2"
    assert reply.metrics == {"ttft_ms": 12.5, "decode_tokens_per_s": 40.0} and reply.params == {"temperature": 0.0}


def test_reply_interrupted_by_a_crash_comes_back_stopped_with_its_text(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation()
    r = conv.add(Message(Role.ASSISTANT, status=MessageStatus.GENERATING))
    r.append("half of a rep")
    store.save_message(conv, r)
    # no close(): the process "dies" here
    loaded = Store(tmp_path / "h.sqlite3").load_conversation(conv.id or 0)
    assert loaded.messages[0].text == "half of a rep"
    assert loaded.messages[0].status is MessageStatus.STOPPED


def test_delete_cascades(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation()
    store.save_message(conv, conv.add(Message(Role.USER, "hi")))
    store.delete_conversation(conv.id or 0)
    assert store.list_conversations() == []
    assert store.db.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0


def test_corrupt_history_file_is_moved_aside_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    store = Store.open_or_recover(path)
    assert store.list_conversations() == []
    aside = list(tmp_path.glob("h.sqlite3.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not a database")
    assert store.problem and "set aside" in store.problem


def test_locked_history_is_not_mistaken_for_corruption(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "h.sqlite3"
    first = Store(path)
    first.save_message(Conversation(), Message(Role.USER, "keep me"))
    locker = sqlite3.connect(str(path), isolation_level=None, timeout=0.1)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        second = Store.open_or_recover(path)
        assert second.problem and "not saved" in second.problem
        assert [m.text for m in second.load_conversation(1).messages] == ["keep me"]   # still shown
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert not list(tmp_path.glob("*.corrupt-*"))             # nothing moved aside
    assert [m.text for m in Store(path).load_conversation(1).messages] == ["keep me"]


def test_unwritable_folder_keeps_chats_in_memory(tmp_path: Path) -> None:
    store = Store.open_or_recover(tmp_path / "missing-folder" / "h.sqlite3")
    assert store.problem and "can't be saved" in store.problem
    conv = Conversation()
    store.save_message(conv, conv.add(Message(Role.USER, "still works")))
    assert store.list_conversations()[0].messages == 1


def test_a_chat_with_invalid_utf8_text_loads_with_replacement_characters(tmp_path: Path) -> None:
    """Rows are decoded by SQLite's strict UTF-8 decoder; text another program wrote with bad bytes (a TEXT cell,
    not a blob) is read again with U+FFFD for them, and the chat's other messages are untouched."""
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation(title="mixed")
    store.save_message(conv, Message(Role.USER, "Grüße 😀 — fine"))
    bad = Message(Role.ASSISTANT, "placeholder")
    store.save_message(conv, bad)
    store.db.execute("UPDATE messages SET content = CAST(? AS TEXT) WHERE id = ?", (b"caf\xe9 ok \xff", bad.db_id))
    assert conv.id is not None
    loaded = store.load_conversation(conv.id)
    assert [m.text for m in loaded.messages] == ["Grüße 😀 — fine", "caf\ufffd ok \ufffd"]
    again = store.load_conversation(conv.id)             # and the connection keeps its own text factory
    assert again.messages[1].text == "caf\ufffd ok \ufffd" and store.db.text_factory is not str
