"""The chat session says what went wrong with the settings or the history file, in the window, never as a
traceback (issue 10, items 5 and 6)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from app.core.chat.session import ChatSession, NoticeKind, SessionListener
from app.core.conversation import Conversation, Message, Role
from app.core.history.store import Store
from app.core.settings import AppSettings
from app.engine.scripted import ScriptedEngine


class Notices(SessionListener):
    def __init__(self) -> None:
        self.notices: list[str] = []
        self.history_changes = 0

    def notice(self, text: str, kind: NoticeKind) -> None:
        self.notices.append(text)

    def history_changed(self) -> None:
        self.history_changes += 1


def test_a_settings_file_that_cannot_be_saved_is_a_notice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "cfg").write_text("a file where the config folder should be")
    monkeypatch.setenv("BROOK_CONFIG_DIR", str(tmp_path / "cfg"))
    seen = Notices()
    session = ChatSession(ScriptedEngine(), AppSettings(), Store(":memory:"), listener=seen)
    session.save_settings()
    assert len(seen.notices) == 1 and "Settings could not be saved" in seen.notices[0]
    assert "Traceback" not in caplog.text


def test_damage_found_while_opening_a_chat_is_repaired_and_said(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    store = Store(path)
    rnd = random.Random(3)
    for c in range(40):
        conv = Conversation(title=f"chat {c}")
        for i in range(4):
            text = f"MARK-{c}-{i} " + " ".join(rnd.choice(["river", "sea", "hill"]) for _ in range(100))
            store.save_message(conv, conv.add(Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, text)))
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    data = path.read_bytes()
    page = data.index(b"MARK-20-1 ") // 4096         # the page holding a message of chat 20
    with path.open("r+b") as fh:
        fh.seek(page * 4096)
        fh.write(bytes(rnd.getrandbits(8) for _ in range(4096)))
    seen = Notices()
    session = ChatSession(ScriptedEngine(), AppSettings(), Store(path), listener=seen)
    for conv_id in range(1, 41):
        session.open_conversation(conv_id)       # never raises
        assert all(isinstance(m.text, str) for m in session.conversation.messages)   # (read on first use)
    assert any("damaged" in n for n in seen.notices) and seen.history_changes >= 1
