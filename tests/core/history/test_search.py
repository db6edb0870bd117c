"""Search over real SQLite history files: English and Chinese mid-sentence, short queries, restart, migration."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.search import make_snippet
from app.core.history.store import Store
from tests.helpers import CORPUS
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
    assert store.search("brown") == []                      # an autosave while it streams: not indexed yet
    reply.status = MessageStatus.DONE
    store.save_message(conv, reply)
    assert len(store.search("brown")) == 1                  # indexed when it ends
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


def _consistent(db: Any) -> None:
    """FTS5's own check that the index holds exactly the text of the content table's rows (rank 1: against the
    content table); raises ``sqlite3.DatabaseError`` otherwise. Valid while every row is finished."""
    db.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")


_STEP = st.tuples(st.sampled_from(["new", "append", "status", "delete"]), st.integers(0, 7),
                  st.sampled_from(list(MessageStatus)))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_STEP, min_size=1, max_size=30))
def test_only_finished_replies_are_indexed_through_any_saves(tmp_path_factory: Any, steps: list[Any]) -> None:
    """Replies created, autosaved, finished, restarted and deleted in any order: a reply is found exactly while it
    is finished, and once all are finished the index matches the messages exactly."""
    store = Store(tmp_path_factory.mktemp("h") / "h.sqlite3")
    conv = Conversation()
    live: list[Message] = []
    for op, k, status in steps:
        if op == "new" or not live:
            m = conv.add(Message(Role.ASSISTANT, f"zq{len(conv.messages)}x ", status=status))
            live.append(m)
        else:
            m = live[k % len(live)]
            if op == "append":
                m.append("more words ")
            elif op == "status":
                m.status = status
            else:
                store.delete_message(m.db_id or 0)
                live.remove(m)
                continue
        store.save_message(conv, m)
        for x in live:
            word = x.text.split()[0]
            assert len(store.search(word)) == (1 if x.status.final else 0), (word, x.status)
    for x in live:
        x.status = MessageStatus.STOPPED
        store.save_message(conv, x)
    _consistent(store.db)
    store.close()


def test_a_finished_reply_saved_again_unchanged_is_not_indexed_again(tmp_path: Path) -> None:
    """The save after a reply's end writes only its figures: its text is not taken out of the index and put back
    (a 1 MB reply: ~190 ms on the GUI thread). Counted in rows written, triggers' included (``total_changes``):
    the message and its chat's ``updated`` are 2."""
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation()
    reply = conv.add(Message(Role.ASSISTANT, "otters swim", status=MessageStatus.GENERATING))
    store.save_message(conv, reply)

    def written() -> int:
        before = store.db.total_changes
        store.save_message(conv, reply)
        return store.db.total_changes - before

    reply.status = MessageStatus.DONE
    assert written() > 2                                # finished: indexed
    reply.metrics = {"tokens_per_s": 12.5}
    assert written() == 2                               # only its figures changed
    reply.status = MessageStatus.STOPPED
    assert written() == 2                               # still finished, the same text
    reply.append(" and dive")
    assert written() > 2                                # a new text is indexed again
    assert len(store.search("dive")) == 1
    reply.status = MessageStatus.GENERATING
    assert written() > 2 and store.search("dive") == []  # unfinished again: out of the index
    reply.status = MessageStatus.DONE
    store.save_message(conv, reply)
    _consistent(store.db)


def test_a_file_whose_update_trigger_did_not_compare_gets_the_new_one(tmp_path: Path) -> None:
    """A history of the Brook before (its update trigger re-indexed a finished row at any save): reopened, it has
    the comparing trigger and the same, consistent index."""
    path = tmp_path / "h.sqlite3"
    store = _store_with_uncompared_trigger(path)
    store.close()
    again = Store(path)
    names = {r[0] for r in again.db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert "messages_fts_au_final" not in names and "messages_fts_au_changed" in names
    assert len(again.search("otters")) == 1
    _consistent(again.db)


def _store_with_uncompared_trigger(path: Path) -> Store:
    store = Store(path)
    conv = Conversation()
    store.save_message(conv, conv.add(Message(Role.ASSISTANT, "otters swim")))
    store.db.execute("DROP TRIGGER messages_fts_au_changed")
    store.db.execute("""CREATE TRIGGER messages_fts_au_final AFTER UPDATE OF content, status ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.status NOT IN ('waiting', 'prefill', 'generating');
    INSERT INTO messages_fts(rowid, content) SELECT new.id, new.content
        WHERE new.status NOT IN ('waiting', 'prefill', 'generating');
END""")
    return store


def test_a_reply_a_crash_left_unfinished_is_indexed_at_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    conv = Conversation()
    reply = conv.add(Message(Role.ASSISTANT, "half of an answer about otters", status=MessageStatus.GENERATING))
    store.save_message(conv, reply)
    assert store.search("otters") == []
    store.db.close()                                        # the app died mid-reply
    again = Store(path)
    [hit] = again.search("otters")
    assert hit.message_id == reply.db_id
    assert again.load_conversation(conv.id or 0).messages[0].status is MessageStatus.STOPPED
    assert again.db.execute("SELECT status FROM messages").fetchone()[0] == "stopped"
    _consistent(again.db)


def test_a_file_whose_index_took_every_autosave_is_moved_to_the_new_triggers(tmp_path: Path) -> None:
    """A history of the Brook before (its triggers indexed every save, unfinished replies too): after the upgrade
    no text is indexed twice or missing, and an unfinished reply's text is found once."""
    path = tmp_path / "h.sqlite3"
    shutil.copy(CORPUS / "history" / "brook-v2.sqlite3", path)
    db = sqlite3.connect(path)
    assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts_au'").fetchone()   # the old triggers
    db.execute("INSERT INTO messages(conversation_id, role, content, status, created) "
               "SELECT conversation_id, 'assistant', 'an interrupted reply on walruses', 'generating', 9.0 "
               "FROM messages LIMIT 1")
    db.commit()
    db.close()
    store = Store(path)
    assert len(store.search("walruses")) == 1
    names = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert "messages_fts_au" not in names and "messages_fts_au_changed" in names
    _consistent(store.db)
    conv = store.load_conversation(store.list_conversations()[0].id)
    reply = conv.add(Message(Role.ASSISTANT, "a new reply on narwhals", status=MessageStatus.GENERATING))
    store.save_message(conv, reply)
    assert store.search("narwhals") == []
