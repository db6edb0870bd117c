"""Search over real SQLite history files: English and Chinese mid-sentence, short queries, restart, migration."""

from __future__ import annotations

from pathlib import Path

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.search import make_snippet
from app.core.history.store import Store
from tests.helpers.history import write_v1_history


def _chat(store: Store, title: str, *texts: str) -> Conversation:
    conv = Conversation(title=title)
    for i, t in enumerate(texts):
        store.save_message(conv, conv.add(Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, t)))
    return conv


def test_finds_english_and_chinese_mid_sentence_and_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    a = _chat(store, "Rust", "How do I reverse a string in Rust?", "Use s.chars().rev().collect::<String>().")
    b = _chat(store, "天气", "今天北京的天气怎么样？", "我无法获取实时天气，但你可以查看天气预报网站。")
    store.close()

    again = Store(path)
    [hit] = again.search("chars().rev")
    assert (hit.conversation_id, hit.message_id) == (a.id, a.messages[1].db_id)
    assert hit.snippet[slice(*hit.spans[0])] == "chars().rev"
    [hit] = again.search("实时天气")                        # in the middle of a sentence, no spaces around it
    assert (hit.conversation_id, hit.message_id, hit.conversation_title) == (b.id, b.messages[1].db_id, "天气")
    assert hit.snippet[slice(*hit.spans[0])] == "实时天气"
    assert {h.message_id for h in again.search("天气")} == {m.db_id for m in b.messages}   # 2 chars: scanned
    assert again.search("REVERSE")[0].message_id == a.messages[0].db_id                    # case-insensitive
    assert again.search("reverse 北京") == []                                              # every term must match


def test_short_blank_and_odd_queries(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv = _chat(store, "x", 'say "hi" AND (maybe) * NEAR', "ok")
    assert store.search("") == [] and store.search("   ") == []
    assert [h.message_id for h in store.search("ok")] == [conv.messages[1].db_id]
    assert [h.message_id for h in store.search('"hi" AND (maybe) *')] == [conv.messages[0].db_id]
    assert store.search("NEAR(") == []


def test_index_follows_edits_deletes_and_limit_newest_first(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation()
    reply = conv.add(Message(Role.ASSISTANT, status=MessageStatus.PREFILL))
    store.save_message(conv, reply)
    reply.append("the quick brown fox")
    store.save_message(conv, reply)
    assert len(store.search("brown")) == 1
    reply.set_text("a slow green turtle")
    store.save_message(conv, reply)
    assert store.search("brown") == [] and len(store.search("green")) == 1
    store.delete_message(reply.db_id or 0)
    assert store.search("green") == []
    c2 = _chat(store, "many", *[f"note number {i}" for i in range(10)])
    hits = store.search("number", limit=3)
    assert [h.message_id for h in hits] == [m.db_id for m in reversed(c2.messages[-3:])]
    store.delete_conversation(c2.id or 0)                    # cascade delete leaves no stale index rows
    assert store.search("number") == []
    assert store.db.execute("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'number'").fetchone()[0] == 0


def test_migration_indexes_a_history_file_written_before_search(tmp_path: Path) -> None:
    """A version-1 file (no index, no provenance column) keeps its chats and becomes searchable."""
    path = tmp_path / "old.sqlite3"
    write_v1_history(path, """
        INSERT INTO messages VALUES (1, 1, 'user', '请用中文解释递归函数的原理', 'done',
            NULL, NULL, NULL, NULL, NULL, 1.5);
        INSERT INTO messages VALUES (2, 1, 'assistant', 'Recursion: a function calling itself.', 'done', 'm',
            '{"temperature": 0.2}', 'stop', NULL, NULL, 1.6);
    """)

    store = Store(path)
    [info] = store.list_conversations()
    assert (info.id, info.title, info.messages) == (1, "old chat", 2)
    conv = store.load_conversation(1)
    assert [m.text for m in conv.messages][1] == "Recursion: a function calling itself."
    assert conv.messages[1].params == {"temperature": 0.2} and conv.messages[1].created == 1.6
    assert [h.message_id for h in store.search("递归函数")] == [1]
    assert [h.message_id for h in store.search("calling itself")] == [2]
    store.close()
    assert Store(path).search("递归函数")[0].conversation_title == "old chat"   # idempotent on the next open


def test_snippet_is_cut_around_the_match_with_spans() -> None:
    text = "word " * 50 + "needle in the haystack " + "tail " * 50
    snippet, spans = make_snippet(text, ["NEEDLE", "hay"])
    assert snippet.startswith("…") and snippet.endswith("…") and len(snippet) < 200
    assert [snippet[s:e] for s, e in spans] == ["needle", "hay"]
    assert make_snippet("line one\nline two", ["two"]) == ("line one line two", ((14, 17),))
