"""Regression: whatever is in place of the history file — garbage, an empty file, a folder, a file cut short — or
a disk that fills up, the window opens, says what happened, and a reply still streams and finishes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.conversation import MessageStatus
from app.core.history.store import Store
from app.core.settings import AppSettings
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.helpers import run_on, until

pytestmark = pytest.mark.timeout(120)


def _garbage(p: Path) -> None:
    p.write_bytes(b"\x00\xffnot a database at all" * 500)


def _empty(p: Path) -> None:
    p.write_bytes(b"")


def _folder(p: Path) -> None:
    p.mkdir()
    (p / "inside").write_text("x")


def _cut(p: Path) -> None:
    s = Store(p)
    for i in range(40):
        s.db.execute("INSERT INTO conversations(title, created, updated) VALUES (?, 1, 1)", (f"chat {i}" * 50,))
    s.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    s.close()
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("spoil", [_garbage, _empty, _folder, _cut], ids=["garbage", "empty", "folder", "cut"])
def test_a_spoiled_history_file_never_stops_the_window(qtbot, qloop, tmp_path: Path, spoil) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "history.sqlite3"
    spoil(path)
    store = Store.open_or_recover(path)
    w = MainWindow(ScriptedEngine(["Still", " here."], tokens_per_s=0), AppSettings.load(), store)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    try:
        assert run_on(qloop, w.load_model())
        reply = w.send("hello")
        assert reply is not None
        run_on(qloop, until(lambda: reply.status.final))
        assert reply.status is MessageStatus.DONE and reply.text == "Still here."
        assert w.isVisible()
    finally:
        run_on(qloop, w.shutdown())
        store.close()


def test_a_disk_that_fills_up_mid_chat_is_a_notice_and_the_reply_finishes(qtbot, qloop, tmp_path: Path) -> None:
    store = Store(tmp_path / "history.sqlite3")
    w = MainWindow(ScriptedEngine(["Still", " here."], tokens_per_s=0), AppSettings.load(), store)
    qtbot.addWidget(w)
    w.show()
    try:
        assert run_on(qloop, w.load_model())
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages}")         # SQLite's "database or disk is full"
        with pytest.raises(sqlite3.OperationalError, match="full"):
            store.db.execute("INSERT INTO conversations(title, created, updated) VALUES (?, 1, 1)", ("x" * 9000,))
        reply = w.send("hello " + "x" * 20_000)
        assert reply is not None
        run_on(qloop, until(lambda: reply.status.final))
        assert reply.status is MessageStatus.DONE and reply.text == "Still here." and w.isVisible()
        assert any("can't be saved" in it.notice[0] for it in w.chat.items if it.notice is not None)
    finally:
        run_on(qloop, w.shutdown())
