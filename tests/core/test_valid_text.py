"""Invalid Unicode is made valid once, at every boundary (issue 10, item 3).

The whole kind: text that cannot be encoded as UTF-8 (lone UTF-16 surrogates, from a JSON ``\\ud83d`` escape, a
clipboard, a file) or bytes that are not UTF-8 (a settings file or history row written by another program).
Covered inputs: settings.json with lone surrogates in the system prompt / recent models / stop strings and with a
Latin-1 byte; a surrogate pair written as two escapes; typed and edited message text; an engine chunk from JSON;
a history row with invalid UTF-8 bytes; a renamed chat title.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.store import Store
from app.core.settings import AppSettings
from app.core.streaming.generation import generate
from app.core.streaming.scheduler import FairScheduler
from app.core.text import valid_text
from app.core.types import Chunk, GenerationParams
from app.engine.scripted import ScriptedEngine


def test_valid_text() -> None:
    assert valid_text("plain") == "plain"
    assert valid_text("a\ud83db") == "a\ufffdb"
    assert valid_text("\ud83d\ude00!") == "😀!"
    assert valid_text("\ude00\ud83d") == "\ufffd\ufffd"
    s = "héllo 😀"
    assert valid_text(s) is s


def test_settings_with_a_lone_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"system_prompt": "Be nice \\ud83d", "recent_models": ["/m\\udc80.gguf"], '
                    '"generation": {"stop": ["\\ud83d\\ude00", "x\\udfff"]}, "n_ctx": 2048}', "ascii")
    s = AppSettings.load(path)
    assert s.system_prompt == "Be nice \ufffd"
    assert s.recent_models == ["/m\ufffd.gguf"]
    assert s.generation.stop == ("😀", "x\ufffd")
    assert s.n_ctx == 2048
    s.save(path)                                  # and it can be written back
    assert json.loads(path.read_text("utf-8"))["system_prompt"] == "Be nice \ufffd"


def test_settings_with_bytes_that_are_not_utf8_keep_the_other_values(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"system_prompt": "caf\xe9", "n_ctx": 2048}')
    s = AppSettings.load(path)
    assert (s.system_prompt, s.n_ctx) == ("caf\ufffd", 2048)


def test_message_text_typed_or_edited_is_valid_and_saves(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    c = Conversation(system_prompt=AppSettings().system_prompt or None)
    m = c.add(Message(Role.USER, "paste \ud83d here"))
    store.save_message(c, m)
    m.set_text("edited \udc00")
    store.save_message(c, m)
    store.rename_conversation(c.id or 0, "title \ud800")
    assert store.load_conversation(c.id or 0).messages[0].text == "edited \ufffd"
    assert store.list_conversations()[0].title == "title \ufffd"
    store.close()


def test_history_row_with_invalid_utf8_loads(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    c = Conversation()
    store.save_message(c, c.add(Message(Role.USER, "x")))
    store.db.execute("UPDATE messages SET content = CAST(X'6361669A' AS TEXT)")   # written by another program
    assert store.load_conversation(c.id or 0).messages[0].text == "caf\ufffd"
    store.close()


def test_engine_chunk_with_a_lone_surrogate_is_made_valid_and_saved(tmp_path: Path) -> None:
    engine = ScriptedEngine([Chunk("Hi \ud83d"), Chunk(" there")], tokens_per_s=0)
    engine.load()
    c = Conversation()
    c.add(Message(Role.USER, "hello"))
    reply = c.add(Message(Role.ASSISTANT))
    asyncio.run(generate(engine, FairScheduler(), c, reply, GenerationParams(max_tokens=10)))
    assert reply.status is MessageStatus.DONE and reply.text == "Hi \ufffd there"
    store = Store(tmp_path / "h.sqlite3")
    store.save_message(c, reply)
    store.close()
