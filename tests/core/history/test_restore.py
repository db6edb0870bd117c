"""Restoring a daily backup (``Store.restore_backup``) and reading an export off the store's thread
(``read_export``: progress, cancel). Real history files."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from app.core.conversation import Conversation, Message, Role
from app.core.errors import HistoryError
from app.core.history.export import ImportCancelled, export_json, read_export, write_import
from app.core.history.recovery import backup_daily
from app.core.history.store import Store
from tests.core.history.test_history_damage import make_history


def test_a_backup_restored_replaces_a_cut_history_and_keeps_it_aside(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    make_history(path, chats=12)
    backups = tmp_path / "backups"
    backup = backup_daily(path, backups, today=date(2026, 11, 30))
    assert backup is not None
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])                  # a history cut short
    store = Store.open_or_recover(path, backups)
    assert store.problem is not None and len(store.list_conversations()) < 12
    assert store.latest_backup() == (backup, 12)
    done = store.restore_backup(backup)
    assert (done.backup, done.chats) == (backup, 12) and store.problem is None
    assert done.aside is not None and done.aside.exists() and done.aside.name.startswith("history.sqlite3.before-")
    assert len(store.list_conversations()) == 12                 # the store works on the restored file at once
    conv = Conversation(title="after")
    store.save_message(conv, conv.add(Message(Role.USER, "written after the restore")))
    store.close()
    again = Store(path)
    assert len(again.list_conversations()) == 13 and again.search("written after")


def test_a_damaged_or_missing_backup_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    make_history(path, chats=3)
    store = Store(path)
    bad = tmp_path / "backups" / "history-2026-11-30.sqlite3"
    bad.parent.mkdir()
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 5000)
    for backup in (bad, tmp_path / "none.sqlite3"):
        with pytest.raises(HistoryError, match="nothing was changed"):
            store.restore_backup(backup)
        assert len(store.list_conversations()) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backups", "history.sqlite3", "history.sqlite3-shm",
                                                          "history.sqlite3-wal"]
    with pytest.raises(HistoryError, match="cannot be written"):
        Store(":memory:").restore_backup(bad)


def test_read_export_reports_progress_and_can_be_cancelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.core.history.export as export

    src = Store(tmp_path / "a.sqlite3")
    for i in range(30):
        conv = Conversation(title=f"chat {i}")
        src.save_message(conv, conv.add(Message(Role.USER, "x" * 3000)))
    file = tmp_path / "chats.json"
    file.write_text(json.dumps(export_json(src)), "utf-8")
    monkeypatch.setattr(export, "READ_BLOCK", 8192)
    seen: list[tuple[str, int, int]] = []
    chats = read_export(file, lambda *p: seen.append(p))
    size = file.stat().st_size
    reads = [p for p in seen if p[0] == "read"]
    assert len(reads) == -(-size // 8192) and reads[-1] == ("read", size, size) and seen[-1] == ("check", 0, 0)
    assert [d for _, d, _ in reads] == sorted(d for _, d, _ in reads)
    dst = Store(tmp_path / "b.sqlite3")
    assert len(write_import(dst, chats).ids) == 30
    calls: list[int] = []

    def cancel_on_the_fourth_ask() -> bool:
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(ImportCancelled):
        read_export(file, cancelled=cancel_on_the_fourth_ask)
    assert len(calls) == 4
