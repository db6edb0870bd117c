"""A damaged history file never stops the app and loses only what cannot be read (issue 10, items 5 and 6).

The whole kind: a history file whose SQLite header is intact but some pages are garbage (a bad disk sector, a
copy cut short, another program writing into it), found at start or by any later read; plus a history that
cannot be written (locked by another program, read-only). Covered: garbage pages at the start, middle and end
of the file and at several places at once (each time every row SQLite can still read by id is kept, and the app's
first calls — list and open every chat — work), damage reported by a later read (repaired, then the call
succeeds), rolling daily backups with the online backup API, and a locked file (old chats shown, the write
refused with a sentence, not a traceback).
"""

from __future__ import annotations

import random
import sqlite3
import time
from datetime import date
from pathlib import Path

import pytest

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.errors import HistoryError
from app.core.history.recovery import backup_daily, damage
from app.core.history.store import Store

PAGE = 4096


def make_history(path: Path, chats: int = 60) -> dict[int, list[str]]:
    store = Store(path)
    rnd = random.Random(1)
    for c in range(chats):
        conv = Conversation(title=f"chat {c}")
        for i in range(6):
            role = Role.USER if i % 2 == 0 else Role.ASSISTANT
            text = f"chat {c} message {i} " + " ".join(rnd.choice(["river", "sea", "mountain", "东京", "🙂"])
                                                      for _ in range(rnd.randint(10, 400)))
            store.save_message(conv, conv.add(Message(role, text, status=MessageStatus.DONE)))
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    db = sqlite3.connect(path)
    out: dict[int, list[str]] = {}
    for cid, content in db.execute("SELECT conversation_id, content FROM messages ORDER BY id"):
        out.setdefault(cid, []).append(content)
    db.close()
    return out


def corrupt(path: Path, pages: list[int], seed: int = 7) -> None:
    rnd = random.Random(seed)
    with path.open("r+b") as fh:
        for p in pages:
            fh.seek(p * PAGE)
            fh.write(bytes(rnd.getrandbits(8) for _ in range(PAGE)))


def readable_by_id(path: Path) -> dict[int, str]:
    """The oracle: every message SQLite can still read with a point lookup by its id."""
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    db.text_factory = lambda b: b.decode("utf-8", "replace")
    out = {}
    for mid in range(1, 2000):
        try:
            row = db.execute("SELECT content FROM messages WHERE id = ?", (mid,)).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row is not None:
            out[mid] = row[0]
    db.close()
    return out


def pages_of(path: Path) -> int:
    return path.stat().st_size // PAGE


@pytest.mark.parametrize("where", ["early", "middle", "late", "several"])
def test_damaged_pages_keep_every_readable_chat(tmp_path: Path, where: str) -> None:
    path = tmp_path / "history.sqlite3"
    original = make_history(path)
    n = pages_of(path)
    assert n > 40
    pages = {"early": [3, 4], "middle": [n // 2, n // 2 + 1, n // 2 + 2], "late": [n - 3, n - 2],
             "several": [5, n // 3, n // 2, 2 * n // 3, n - 2]}[where]
    corrupt(path, pages)
    before = sqlite3.connect(path)
    assert damage(before) is not None           # the file really is damaged
    before.close()
    expected = readable_by_id(path)

    store = Store.open_or_recover(path)         # the app starts: no exception
    assert store.problem and "damaged" in store.problem and "saved" in store.problem
    assert list(tmp_path.glob("history.sqlite3.damaged-*"))       # the damaged file is kept
    got: dict[int, str] = {}
    for info in store.list_conversations():    # what the window does first: list, then open chats
        conv = store.load_conversation(info.id)
        for m in conv.messages:
            assert m.db_id is not None
            got[m.db_id] = m.text
    assert expected.items() <= got.items()      # every readable message is kept, unchanged
    assert len(got) >= len(expected)
    all_texts = {t for texts in original.values() for t in texts}
    assert set(got.values()) <= all_texts       # nothing invented
    assert damage(store.db) is None
    conv = Conversation()
    store.save_message(conv, conv.add(Message(Role.USER, "the history works again")))
    assert store.search("works again")
    store.close()


def test_damage_found_by_a_later_read_is_repaired(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    make_history(path)
    n = pages_of(path)
    corrupt(path, [n // 2, n // 2 + 1])
    seen: list[str] = []
    store = Store(path)                         # opened without the start-up check: damage shows up later
    store.on_problem = seen.append
    chats = store.list_conversations()
    loaded = [store.load_conversation(info.id) for info in chats]
    texts = [m.text for conv in loaded for m in conv.messages]      # reaches the bad pages: repaired, retried
    assert texts and seen and "damaged" in seen[0] and store.problem == seen[0]
    assert damage(store.db) is None and len(loaded) == len(chats)
    store.close()


def test_every_later_read_of_a_damaged_file_is_repaired_or_explained(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    make_history(path)
    corrupt(path, list(range(2, pages_of(path) - 1)))      # nearly everything
    store = Store(path)
    problems: list[str] = []
    store.on_problem = problems.append
    explained = []
    for call in (store.list_conversations, lambda: store.load_conversation(1), lambda: store.search("river")):
        try:
            call()
        except HistoryError as exc:             # a sentence for the user instead of the data
            explained.append(str(exc))
        except KeyError:                        # the chat was not recoverable: the window says "not found"
            pass
    assert all(explained)
    # the first read found the damage and repaired the file once, saying so and where the damaged copy is kept
    assert len(problems) == 1 and "damaged" in problems[0], problems
    kept = list(tmp_path.glob("history.sqlite3.damaged-*"))
    assert len(kept) == 1 and kept[0].name in problems[0]
    assert damage(store.db) is None                                   # later reads find a sound file
    assert store.list_conversations() == store.list_conversations()
    store.close()


def test_daily_backups_keep_three_days(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    original = make_history(path, chats=5)
    folder = tmp_path / "backups"
    for day in range(1, 6):
        assert backup_daily(path, folder, today=date(2026, 11, day)) is not None
    assert backup_daily(path, folder, today=date(2026, 11, 5)) is None          # once a day
    names = sorted(p.name for p in folder.glob("history-*.sqlite3"))
    assert names == ["history-2026-11-03.sqlite3", "history-2026-11-04.sqlite3", "history-2026-11-05.sqlite3"]
    copy = Store(folder / names[-1])
    assert len(copy.list_conversations()) == len(original)
    copy.close()


def test_opening_a_sound_history_starts_todays_backup(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    make_history(path, chats=3)
    store = Store.open_or_recover(path)
    assert store.problem is None
    target = tmp_path / "backups" / f"history-{date.today().isoformat()}.sqlite3"
    deadline = time.monotonic() + 60
    while not target.exists() and time.monotonic() < deadline:   # a background thread: wait for it
        time.sleep(0.02)
    assert target.exists()
    store.close()


def test_a_locked_history_shows_the_old_chats_and_refuses_writes_with_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    make_history(path, chats=2)
    locker = sqlite3.connect(str(path), isolation_level=None, timeout=0.1)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        store = Store.open_or_recover(path)
        assert store.read_only and store.problem and "not saved" in store.problem
        assert len(store.list_conversations()) == 2                      # the old history is shown
        conv = Conversation()
        with pytest.raises(HistoryError, match="not saved"):
            store.save_message(conv, conv.add(Message(Role.USER, "new")))
    finally:
        locker.execute("ROLLBACK")
        locker.close()


@pytest.mark.parametrize("keep", [0.5, 0.25, 0.9, 2 * PAGE])
def test_a_history_cut_short_offers_the_newest_backup(tmp_path: Path, keep: float) -> None:
    path = tmp_path / "history.sqlite3"
    make_history(path, chats=30)
    backups = tmp_path / "backups"
    backup_daily(path, backups, today=date(2026, 11, 29))
    backup_daily(path, backups, today=date(2026, 11, 30))
    (backups / "history-2026-12-01.sqlite3").write_bytes(b"not a backup")      # unreadable: passed over
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep) if keep < 1 else int(keep)])
    store = Store.open_or_recover(path)
    assert store.problem is not None
    assert (f"A backup of 2026-11-30 with 30 chat(s) exists: {backups / 'history-2026-11-30.sqlite3'}. "
            f"To go back to it, quit Brook and copy it over {path}.") in store.problem
    store.close()
