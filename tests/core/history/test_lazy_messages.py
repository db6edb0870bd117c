"""Messages of a saved chat read on first use (``app.core.history.lazy``), in real SQLite files: opening a chat
reads no text; whatever reads a message (its text, figures, versions; a prompt, an export, a worker thread)
sees exactly what was saved, and nothing is lost when rows go (deleted, the store closed)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.export import conversation_to_dict
from app.core.history.lazy import StoredMessage
from app.core.history.store import SCHEMA_VERSION, Store
from tests.helpers.history import write_v1_history


def _chat(store: Store, pairs: int = 3) -> Conversation:
    conv = Conversation(title="long")
    for i in range(pairs):
        store.save_message(conv, conv.add(Message(Role.USER, f"question {i}\nsecond line")))
        r = conv.add(Message(Role.ASSISTANT, f"answer {i} é😀\n\n```py\nprint({i})\n```\n", model="m",
                             metrics={"ttft_ms": 10.0 + i, "decode_tokens_per_s": 40.0, "left_out": i},
                             params={"temperature": 0.5}, provenance={"model_file": "m.gguf"}))
        r.versions, r.version_index = [{"content": f"older {i}", "status": "done"}], 1
        store.save_message(conv, r)
    return conv


def _statements(store: Store) -> list[str]:
    seen: list[str] = []
    store.db.set_trace_callback(seen.append)
    return seen


def test_opening_a_chat_reads_no_text_and_first_use_reads_exactly_what_was_saved(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    saved = _chat(store)
    assert saved.id is not None
    sql = _statements(store)
    loaded = store.load_conversation(saved.id)
    assert all(type(m) is StoredMessage for m in loaded.messages)
    assert not any("content" in s for s in sql), sql            # no statement touched a text
    assert [m.stored_shape() for m in loaded.messages] == [(len(m.text), m.text.count("\n")) for m in saved.messages]
    for was, m in zip(saved.messages, loaded.messages, strict=True):
        assert (m.role, m.status, m.db_id) == (was.role, MessageStatus.DONE, was.db_id)
        assert m.text == was.text and type(m) is Message and m.stored_shape() is None   # read: a plain Message
        assert (m.model, m.metrics, m.params, m.provenance) == (was.model, was.metrics, was.params, was.provenance)
        assert (m.version_index, m.left_out) == (was.version_index, was.left_out)
        assert [(v["content"], v["status"]) for v in m.versions or []] == [
            (v["content"], v["status"]) for v in was.versions or []]
    store.close()


def test_any_detail_reads_the_message_and_an_edit_before_reading_is_kept(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    saved = _chat(store, 2)
    assert saved.id is not None
    a, b, c, d = store.load_conversation(saved.id).messages
    assert b.metrics == saved.messages[1].metrics and type(b) is Message          # figures first
    c.set_text("edited before it was read")                                       # an edit first
    assert c.text == "edited before it was read"
    d.versions = None                                                             # a version dropped first
    assert d.text == saved.messages[3].text and d.versions is None
    store.save_message(saved, c)
    again = store.load_conversation(saved.id).messages
    assert again[2].stored_shape() == (len("edited before it was read"), 0)      # the trigger kept the size
    assert again[2].text == "edited before it was read" and a.text == saved.messages[0].text
    store.close()


def test_a_prompt_or_an_export_reads_the_whole_chat_in_one_query(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    saved = _chat(store, 4)
    assert saved.id is not None
    loaded = store.load_conversation(saved.id)
    sql = _statements(store)
    assert loaded.prompt_messages() == saved.prompt_messages()
    assert len([s for s in sql if s.lstrip().upper().startswith("SELECT")]) == 1, sql
    assert all(type(m) is Message for m in loaded.messages)
    exported = conversation_to_dict(store, saved.id)
    assert [m["content"] for m in exported["messages"]] == [m.text for m in saved.messages]
    assert exported["messages"][1]["versions"]["others"][0]["content"] == "older 0"
    store.close()


def test_deleting_a_chat_or_a_message_or_closing_keeps_the_text_of_the_messages_handed_out(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    saved = _chat(store)
    other = _chat(store)
    assert saved.id is not None and other.id is not None
    loaded, kept = store.load_conversation(saved.id), store.load_conversation(other.id)
    store.delete_message(loaded.messages[0].db_id or 0)
    store.delete_conversation(saved.id)                          # (undo saves them again from memory)
    assert [m.text for m in loaded.messages] == [m.text for m in saved.messages]
    assert all(type(m) is StoredMessage for m in kept.messages)  # another chat's stay unread
    orphans = "SELECT COUNT(*) FROM sizes WHERE message_id NOT IN (SELECT id FROM messages)"
    assert store.db.execute(orphans).fetchone()[0] == 0          # the sizes went with their messages
    store.close()
    assert [m.text for m in kept.messages] == [m.text for m in other.messages]


def test_a_worker_thread_reads_through_its_own_connection(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    saved = _chat(store)
    assert saved.id is not None
    loaded = store.load_conversation(saved.id)
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(loaded.prompt_messages()))
    t.start()
    t.join()
    assert got == [saved.prompt_messages()]
    store.close()


def test_an_old_file_gets_the_sizes_of_its_messages_and_opens_without_reading_them(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    write_v1_history(path, """
        INSERT INTO messages VALUES (1, 1, 'user', 'hi
there', 'done', NULL, NULL, NULL, NULL, NULL, 1.5);
        INSERT INTO messages VALUES (2, 1, 'assistant', 'hello', 'generating', 'm', NULL, NULL, NULL, NULL, 1.6);
        INSERT INTO messages VALUES (3, 1, 'wizard', 'odd', 'done', NULL, NULL, NULL, NULL, NULL, 1.7);
    """)
    store = Store(path)
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    a, b, c = store.load_conversation(1).messages
    assert (a.stored_shape(), b.stored_shape()) == ((8, 1), (5, 0))
    assert b.status is MessageStatus.STOPPED                       # a reply the app died in, as before
    assert type(c) is Message and c.status is MessageStatus.ERROR  # a damaged row is read at once
    assert [a.text, b.text, c.text] == ["hi\nthere", "hello", "odd"]
    store.close()


def test_a_row_deleted_behind_the_stores_back_reads_as_an_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    saved = _chat(store, 1)
    assert saved.id is not None
    loaded = store.load_conversation(saved.id)
    other = sqlite3.connect(path)                                # another program
    other.execute("DELETE FROM messages WHERE id = ?", (loaded.messages[1].db_id,))
    other.commit()
    other.close()
    gone = loaded.messages[1]
    assert gone.text == "" and gone.status is MessageStatus.ERROR and "could not be read" in (gone.error or "")
    assert gone.db_id is None                    # saved again it is a new row, never over another's text
    store.close()


def test_a_failed_import_of_the_schema_ahead_only_logs(monkeypatch, caplog) -> None:
    """The window imports the history schema (pydantic) on a thread of its own at start (``rows.warm_schema``); an
    import that fails there is logged, not raised: the first chat read imports it again."""
    from app.core.history import rows

    def broken() -> None:
        raise ImportError("cannot import name 'import_string' from partially initialized module")

    monkeypatch.setattr(rows, "schema_module", broken)
    with caplog.at_level("WARNING", logger="brook.store"):
        rows.warm_schema()
    assert "importing the history schema ahead failed" in caplog.text
