"""Search finds chats by their title too (``Store.search_titles``), in English and Chinese, after a restart; the
message search (``Store.search``) is unchanged by it. Real SQLite history files."""

from __future__ import annotations

from pathlib import Path

from app.core.conversation import Conversation, Message, Role
from app.core.history.store import Store


def _chat(store: Store, title: str, text: str) -> Conversation:
    conv = Conversation(title=title)
    store.save_message(conv, conv.add(Message(Role.USER, text)))
    return conv


def test_titles_in_english_and_chinese_are_found_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    rust = _chat(store, "Learning Rust lifetimes", "What does 'a mean?")
    wall = _chat(store, "关于长城的建造年代", "请介绍一下。")
    other = _chat(store, "Groceries", "milk, eggs, Rust-Oleum paint")
    store.rename_conversation(other.id, "Weekend shopping")
    store.close()

    again = Store(path)
    [hit] = again.search_titles("rust LIFETIMES")                 # every term, any case, any order
    assert (hit.conversation_id, hit.title) == (rust.id, "Learning Rust lifetimes")
    assert [hit.title[s:e] for s, e in hit.spans] == ["Rust", "lifetimes"]
    [hit] = again.search_titles("长城")                            # 2 characters, mid-title, no spaces around
    assert hit.conversation_id == wall.id and hit.title[slice(*hit.spans[0])] == "长城"
    assert [h.conversation_id for h in again.search_titles("建造年代")] == [wall.id]
    assert [h.conversation_id for h in again.search_titles("shopping")] == [other.id]   # the new title
    assert again.search_titles("Groceries") == []                                       # not the old one
    assert again.search_titles("rust shopping") == []                                  # every term must match
    assert again.search_titles("   ") == [] and again.search_titles("rust", limit=0) == []
    # the message search is what it was: titles are not messages
    assert again.search("lifetimes") == [] and [h.conversation_id for h in again.search("Rust")] == [other.id]


def test_most_recently_changed_chat_first(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    older = _chat(store, "Notes on Python", "one")
    newer = _chat(store, "More Python", "two")
    assert [h.conversation_id for h in store.search_titles("python")] == [newer.id, older.id]
    store.save_message(older, older.add(Message(Role.USER, "three")))       # older changes last
    assert [h.conversation_id for h in store.search_titles("python")] == [older.id, newer.id]
