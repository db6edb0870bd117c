"""Attachments: text files read safely, kept inside the message (so search and export keep them), split back."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.chat.attachments import Attachment, AttachmentError, compose, read_attachment, split_attachments
from app.core.conversation import Conversation, Message, Role
from app.core.history.store import Store


def test_files_round_trip_through_a_message_and_the_history(tmp_path: Path) -> None:
    code = tmp_path / "fence.md"
    code.write_text("# Notes\n\n```python\nprint('hi')\n```\n\nend 北京\n", "utf-8")
    log = tmp_path / "app.log"
    log.write_bytes(b"line 1\r\nline 2 ERROR\r\n")
    a, b = read_attachment(code), read_attachment(log)
    assert (a.name, a.language, b.text) == ("fence.md", "markdown", "line 1\nline 2 ERROR\n")
    a = Attachment(a.name, a.text, a.language, tokens=1234)
    text = compose("What is wrong here?", [a, b])
    assert text.splitlines()[2] == "📎 fence.md · 1,234 tokens" and "````markdown" in text   # longer fence
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation()
    store.save_message(conv, conv.add(Message(Role.USER, text)))
    loaded = Store(tmp_path / "h.sqlite3").load_conversation(conv.id or 0).messages[0].text
    own, atts = split_attachments(loaded)
    assert own == "What is wrong here?" and atts == [a, b]
    assert store.search("ERROR")[0].message_id == conv.messages[0].db_id


def test_binary_large_and_missing_files_are_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"\x00\x01\x02" * 10)
    with pytest.raises(AttachmentError, match="not a text file"):
        read_attachment(tmp_path / "x.bin")
    (tmp_path / "big.txt").write_text("a" * 2000, "utf-8")
    with pytest.raises(AttachmentError, match="too large"):
        read_attachment(tmp_path / "big.txt", max_bytes=1000)
    (tmp_path / "latin.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(AttachmentError, match="not UTF-8"):
        read_attachment(tmp_path / "latin.txt")
    with pytest.raises(AttachmentError, match="Cannot read"):
        read_attachment(tmp_path / "missing.txt")
    (tmp_path / "u16.txt").write_text("宽字符", "utf-16")
    assert read_attachment(tmp_path / "u16.txt").text == "宽字符"


def test_a_message_without_attachments_is_left_alone() -> None:
    assert split_attachments("just words\n```py\nx\n```") == ("just words\n```py\nx\n```", [])
