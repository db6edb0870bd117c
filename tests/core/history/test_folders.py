"""Pinned chats and folders in the history file (``app.core.history.folders``, schema version 3): an older file
upgrades without losing anything, the grouping survives a restart, export/import and a repair, and what another
program wrote into the new columns reads as no grouping, never as an error."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.export import ChatImportError, export_json, import_file, import_json
from app.core.history.folders import MAX_NAME, FolderNameError, folder_name
from app.core.history.recovery import recover
from app.core.history.store import SCHEMA_VERSION, Store
from tests.helpers import CORPUS

OLD = CORPUS / "history" / "brook-v2.sqlite3"


def _rows(path: Path, table: str) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(path)
    try:
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
        return [tuple(r) for r in db.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY rowid")]
    finally:
        db.close()


def _chat(store: Store, title: str, n: int = 1) -> int:
    conv = Conversation(title=title)
    for i in range(n):
        store.save_message(conv, conv.add(Message(Role.USER, f"{title} question {i}")))
        store.save_message(conv, conv.add(Message(Role.ASSISTANT, f"{title} answer {i}", status=MessageStatus.DONE)))
    assert conv.id is not None
    return conv.id


def _group(store: Store, into: dict[int, int], pinned: tuple[int, ...] = (), collapsed: tuple[int, ...] = ()) -> None:
    """Chat id → folder id moves, then the ``pinned`` chats pinned and the ``collapsed`` folders closed; the store
    is closed (what a restart or a repair reads next)."""
    for conv_id, folder_id in into.items():
        store.move_to_folder(conv_id, folder_id)
    for conv_id in pinned:
        store.set_pinned(conv_id, True)
    for folder_id in collapsed:
        store.set_folder_collapsed(folder_id, True)
    store.close()


def test_a_version_2_history_upgrades_without_losing_anything(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    shutil.copy(OLD, path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2        # the file a Brook before folders wrote
    assert "folders" not in {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    db.close()
    before = {t: _rows(path, t) for t in ("conversations", "messages", "timelines")}
    assert len(before["conversations"]) == 3 and len(before["messages"]) == 18 and len(before["timelines"]) == 3

    store = Store(path)
    old_chats = {c.id: c for c in store.list_conversations()}
    loaded = {cid: store.load_conversation(cid) for cid in old_chats}
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 3
    assert [(c.pinned, c.folder_id) for c in old_chats.values()] == [(False, None)] * 3
    assert store.list_folders() == []
    # every old row is still there, every old column unchanged; the new columns are empty
    for table, rows in before.items():
        after = _rows(path, table)
        assert [r[:len(rows[0])] for r in after] == rows
        assert all(x is None for r in after for x in r[len(rows[0]):])
    trip = loaded[1].messages[5]
    assert trip.versions and trip.version_index == 1 and trip.metrics and trip.metrics["ttft_ms"] == 122.5
    assert store.load_timeline(loaded[1].messages[1].db_id) is not None
    assert [h.conversation_id for h in store.search("长城")] == [2] * 3      # the search index still answers

    work = store.create_folder("Work")
    _group(store, {1: work}, pinned=(2,))
    again = Store(path)                                                     # a restart keeps the grouping
    grouped = {c.id: (c.pinned, c.folder_id) for c in again.list_conversations()}
    assert grouped == {1: (False, work), 2: (True, None), 3: (False, None)}
    assert [m.text for m in again.load_conversation(1).messages] == [m.text for m in loaded[1].messages]
    again.close()


def test_folders_pins_and_collapse_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    a, b, c = (_chat(store, t) for t in ("alpha", "beta", "gamma"))
    work = store.create_folder("  Work\n projects\t")
    home = store.create_folder("home")
    _group(store, {a: work, b: work}, pinned=(b,), collapsed=(work,))

    store = Store(path)
    assert [(f.name, f.collapsed) for f in store.list_folders()] == [("home", False), ("Work projects", True)]
    by_id = {i.id: i for i in store.list_conversations()}
    assert (by_id[a].folder_id, by_id[b].folder_id, by_id[c].folder_id) == (work, work, None)
    assert (by_id[a].pinned, by_id[b].pinned, by_id[c].pinned) == (False, True, False)
    store.set_pinned(b, False)
    assert not {i.id: i for i in store.list_conversations()}[b].pinned
    assert store.delete_folder(work) == [a, b]                    # the chats stay, in no folder
    assert {i.id: i.folder_id for i in store.list_conversations()} == {a: None, b: None, c: None}
    assert [f.id for f in store.list_folders()] == [home]
    with pytest.raises(KeyError):
        store.move_to_folder(a, work)                              # a folder that is gone
    with pytest.raises(KeyError):
        store.set_pinned(999, True)
    store.close()


def test_folder_names_are_checked(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    work = store.create_folder("Work")
    with pytest.raises(FolderNameError, match="already exists"):
        store.create_folder("WORK")                                 # one folder whatever the case
    with pytest.raises(FolderNameError, match="needs a name"):
        store.create_folder(" \n\t\x00 ")
    with pytest.raises(FolderNameError, match=f"at most {MAX_NAME}"):
        store.create_folder("x" * (MAX_NAME + 1))
    other = store.create_folder("Other")
    with pytest.raises(FolderNameError, match="already exists"):
        store.rename_folder(other, "work")
    assert store.rename_folder(work, "work") == "work"             # its own name in another case is fine
    assert folder_name("a\u2028b\ud800") == "a b\ufffd"
    assert [f.name for f in store.list_folders()] == ["Other", "work"]


def test_what_another_program_wrote_reads_as_no_grouping(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    ids = [_chat(store, f"chat {i}") for i in range(4)]
    store.close()
    db = sqlite3.connect(path)                       # foreign keys off, as another program may have it
    db.execute("UPDATE conversations SET pinned = 'yes', folder_id = 999 WHERE id = ?", (ids[0],))
    db.execute("UPDATE conversations SET pinned = X'01', folder_id = 'Work' WHERE id = ?", (ids[1],))
    db.execute("UPDATE conversations SET pinned = 2.5 WHERE id = ?", (ids[2],))
    db.execute("INSERT INTO folders(id, name, collapsed, created) VALUES (7, X'ff00', 'x', 0)")
    db.commit()
    db.close()
    store = Store(path)
    assert {i.id: (i.pinned, i.folder_id) for i in store.list_conversations()} == {i: (False, None) for i in ids}
    assert [(f.id, f.name, f.collapsed) for f in store.list_folders()] == [(7, "\ufffd\x00", False)]
    doc = export_json(store)
    assert [c["folder"] for c in doc["conversations"]] == [None] * 4
    store.close()


def test_export_and_import_keep_pin_and_folder(tmp_path: Path) -> None:
    src = Store(tmp_path / "a.sqlite3")
    a, b, _c = (_chat(src, t) for t in ("alpha", "beta", "gamma"))
    src.move_to_folder(a, src.create_folder("Work"))
    src.set_pinned(b, True)
    doc = export_json(src)
    assert [(c["title"], c["pinned"], c["folder"]) for c in doc["conversations"]] == \
        [("gamma", False, None), ("beta", True, None), ("alpha", False, "Work")]
    dst = Store(tmp_path / "b.sqlite3")
    mine = dst.create_folder("WORK")                  # an existing folder of the same name takes the chat
    dst.set_folder_collapsed(mine, True)
    file = tmp_path / "export.json"
    file.write_text(json.dumps(doc), "utf-8")
    result = import_file(dst, file)
    assert len(result.ids) == 3
    by_title = {i.title: i for i in dst.list_conversations()}
    assert (by_title["alpha"].folder_id, by_title["beta"].pinned, by_title["gamma"].pinned) == (mine, True, False)
    assert [(f.name, f.collapsed) for f in dst.list_folders()] == [("WORK", True)]
    again = export_json(dst)
    assert [(c["title"], c["pinned"], c["folder"]) for c in again["conversations"]] == \
        [("gamma", False, None), ("beta", True, None), ("alpha", False, "WORK")]


def _doc(**chat: Any) -> dict[str, Any]:
    base = {"title": "t", "created": 1.0, "updated": 2.0,
            "messages": [{"role": "user", "content": "hi", "status": "done", "created": 1.0}]}
    return {"format": "brook-chats", "version": 1, "conversations": [{**base, **chat}]}


@pytest.mark.parametrize(("chat", "said"), [
    ({"folder": 5}, "field folder: must be text, not 5"),
    ({"folder": ["Work"]}, "field folder: must be text, not a list"),
    ({"folder": "x" * 5000}, f"field folder: A folder name can have at most {MAX_NAME} characters"),
    ({"folder": "\n" + "x" * 200_000}, f"field folder: A folder name can have at most {MAX_NAME} characters"),
    ({"pinned": "yes"}, "field pinned: must be true or false, not \"yes\""),
    ({"pinned": 1}, "field pinned: must be true or false, not 1"),
])
def test_a_bad_pin_or_folder_is_refused_naming_the_chat_and_field(tmp_path: Path, chat: dict[str, Any],
                                                                   said: str) -> None:
    store = Store(tmp_path / "h.sqlite3")
    with pytest.raises(ChatImportError) as err:
        import_json(store, _doc(**chat))
    assert str(err.value).startswith("chat 1 (\"t\"), " + said)
    assert store.list_conversations() == [] and store.list_folders() == []     # nothing written


def test_an_export_without_grouping_and_odd_folder_names_import(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    import_json(store, _doc())                                            # an export made before folders
    import_json(store, _doc(title="blank", folder=" \n ", pinned=None))   # a blank name is no folder
    import_json(store, _doc(title="odd", folder="\tMy\nwork\ud800 ", pinned=True))
    by_title = {i.title: i for i in store.list_conversations()}
    assert (by_title["t"].pinned, by_title["t"].folder_id, by_title["blank"].folder_id) == (False, None, None)
    assert [f.name for f in store.list_folders()] == ["My work\ufffd"] and by_title["odd"].pinned


def test_a_repaired_history_keeps_its_folders(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    a, b = _chat(store, "alpha"), _chat(store, "beta")
    work = store.create_folder("Work")
    gone = store.create_folder("Gone")
    _group(store, {a: work, b: gone}, pinned=(a,), collapsed=(work,))
    db = sqlite3.connect(path)                     # a folder row lost (as to a bad page) while its chat remains
    db.execute("PRAGMA foreign_keys = OFF")
    db.execute("DELETE FROM folders WHERE id = ?", (gone,))
    db.commit()
    db.close()
    result = recover(path, Store)
    assert (result.conversations, result.messages) == (2, 4)
    fresh = Store(path)
    assert [(f.id, f.name, f.collapsed) for f in fresh.list_folders()] == [(work, "Work", True)]
    assert {i.id: (i.pinned, i.folder_id) for i in fresh.list_conversations()} == {a: (True, work), b: (False, None)}
