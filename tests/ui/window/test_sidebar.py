"""The grouped sidebar through the window (issue 24: "pin chats and put them in folders"): pin from a chat's context
menu and with Ctrl+Shift+P, pinned chats on top; folders made, renamed, deleted, chats moved in by the context
menu and by drag and drop; a folder's open/closed state and the grouping survive a restart; search finds a chat
in a closed folder and opens the folder; Undo of a delete puts a chat back where it was; an import shows its
folders; every new string is Chinese in 中文. Real history files, the real window (scripted engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QInputDialog, QMenu, QTreeWidgetItem

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.look import i18n
from app.ui.window.chat_list import RowKind, chat_of, folder_of, kind_of
from app.ui.window.main_window import MainWindow
from app.ui.window.menus import MenuKey
from tests.ui.window.test_window_zh import untranslated, visible_strings

pytestmark = pytest.mark.timeout(120)


def _history(path: Path, titles: list[str]) -> dict[str, int]:
    """A history with one chat per title (the last one the most recent); returns title → id."""
    store = Store(path)
    ids = {}
    for t in titles:
        conv = Conversation(title=t)
        store.save_message(conv, conv.add(Message(Role.USER, f"question about {t}")))
        store.save_message(conv, conv.add(Message(Role.ASSISTANT, f"answer about {t}", status=MessageStatus.DONE)))
        assert conv.id is not None
        ids[t] = conv.id
    store.close()
    return ids


def _grouped(path: Path, titles: list[str], folders: dict[str, list[str]], pinned: tuple[str, ...] = (),
             collapsed: tuple[str, ...] = ()) -> tuple[dict[str, int], dict[str, int]]:
    """``_history`` with folders (name → the titles in it, made in this order), ``pinned`` titles and ``collapsed``
    folders; returns (title → chat id, folder name → folder id)."""
    ids = _history(path, titles)
    store = Store(path)
    made = {name: store.create_folder(name) for name in folders}
    for name, inside in folders.items():
        for title in inside:
            store.move_to_folder(ids[title], made[name])
    for title in pinned:
        store.set_pinned(ids[title], True)
    for name in collapsed:
        store.set_folder_collapsed(made[name], True)
    store.close()
    return ids, made


def _window(qtbot, path: Path) -> MainWindow:  # type: ignore[no-untyped-def]
    w = MainWindow(ScriptedEngine(tokens_per_s=0), store=Store(path))
    qtbot.addWidget(w)
    w.show()
    w.activateWindow()                  # the window's shortcuts answer only in the active window
    qtbot.waitUntil(w.isActiveWindow)
    return w


def _layout(w: MainWindow) -> list[str]:
    """The list as a person reads it: headings and folders in capitals-free brackets, chats indented by depth."""
    out = []
    for row in w.history.rows():
        depth = 0 if row.parent() is None else 1
        kind = kind_of(row)
        text = row.text(0)
        if kind is RowKind.FOLDER:
            text = f"[{text}{'' if row.isExpanded() else ' …'}]"
        elif kind is RowKind.PINNED:
            text = f"<{text}>"
        out.append("  " * depth + text)
    return out


def _menu(w: MainWindow, row: QTreeWidgetItem) -> QMenu:
    rect = w.history.visualItemRect(row)
    menu = w.side.menu_at(rect.center())
    menu.close()
    return menu


def _action(menu: QMenu, text: str):  # type: ignore[no-untyped-def]
    for a in menu.actions():
        if a.text().split("\t")[0] == text:
            return a
        if a.menu() is not None and a.text() == text:
            return a
    raise AssertionError(f"no {text!r} in {[a.text() for a in menu.actions()]}")


def _submenu(menu: QMenu, text: str) -> QMenu:
    sub = _action(menu, text).menu()
    assert sub is not None
    return sub


def _answer(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """The next ``QInputDialog.getText`` calls answer ``names`` in turn, as if typed and OK pressed."""
    todo = list(names)
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: (todo.pop(0), True)))


def _drop(w: MainWindow, chat_row: QTreeWidgetItem, pos: QPoint) -> None:
    """Drag ``chat_row`` and drop it at ``pos`` (viewport coordinates) through the list's own drag events."""
    data = w.history.mimeData([chat_row])
    vp = w.history.viewport()
    move, buttons, mods = Qt.DropAction.MoveAction, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    QApplication.sendEvent(vp, QDragEnterEvent(pos, move, data, buttons, mods))
    QApplication.sendEvent(vp, QDragMoveEvent(pos, move, data, buttons, mods))
    QApplication.sendEvent(vp, QDropEvent(pos.toPointF(), move, data, buttons, mods))


def test_pin_from_the_context_menu_and_the_shortcut_puts_chats_on_top(qtbot, qloop, tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    ids = _history(path, ["alpha", "beta", "gamma"])
    w = _window(qtbot, path)
    try:
        assert _layout(w) == ["gamma", "beta", "alpha"]              # nothing grouped: the plain list
        pin = _action(_menu(w, w.history.row_of_chat(ids["alpha"])), "Pin chat")
        assert "Ctrl+Shift+P" in pin.text()
        pin.trigger()
        assert _layout(w) == ["<Pinned>", "  alpha", "gamma", "beta"]
        w.open_conversation(ids["beta"])                              # the Chat menu / the key: the shown chat
        assert w.side.pin_action in w.menus[MenuKey.CHAT].actions() and w.side.pin_action.text() == "&Pin chat"
        qtbot.keyClick(w.input, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        assert _layout(w) == ["<Pinned>", "  beta", "  alpha", "gamma"]
        assert w.side.pin_action.text() == "Un&pin chat"
        w.history.setFocus()                                          # in the list: the selected chat
        w.history.setCurrentItem(w.history.row_of_chat(ids["alpha"]))
        qtbot.keyClick(w.history, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        assert _layout(w) == ["<Pinned>", "  beta", "gamma", "alpha"]
        _action(_menu(w, w.history.row_of_chat(ids["beta"])), "Unpin chat").trigger()
        assert _layout(w) == ["gamma", "beta", "alpha"]
        _action(_menu(w, w.history.row_of_chat(ids["gamma"])), "Pin chat").trigger()
    finally:
        w.close()
        qloop.run_until_complete(w.shutdown())
    w2 = _window(qtbot, path)                                           # a restart keeps the pin
    try:
        assert _layout(w2) == ["<Pinned>", "  gamma", "beta", "alpha"]
    finally:
        qloop.run_until_complete(w2.shutdown())


def test_folders_from_the_context_menu_collapse_and_survive_a_restart(qtbot, qloop, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "h.sqlite3"
    ids = _history(path, ["alpha", "beta", "gamma", "delta"])
    w = _window(qtbot, path)
    try:
        _answer(monkeypatch, "Work", "Home")
        move = _submenu(_menu(w, w.history.row_of_chat(ids["alpha"])), "Move to folder")
        move.aboutToShow.emit()
        _action(move, "New folder…").trigger()                      # a new folder, the chat goes in
        assert _layout(w) == ["[Work]", "  alpha", "delta", "gamma", "beta"]
        menu = _menu(w, w.history.row_of_chat(ids["gamma"]))
        _action(_submenu(menu, "Move to folder"), "Work").trigger()
        assert _layout(w) == ["[Work]", "  gamma", "  alpha", "delta", "beta"]
        _action(_menu(w, w.history.topLevelItem(0)), "New &folder…").trigger()   # a folder's menu: New folder…
        assert _layout(w) == ["[Home]", "[Work]", "  gamma", "  alpha", "delta", "beta"]
        move = _submenu(_menu(w, w.history.row_of_chat(ids["gamma"])), "Move to folder")
        assert [a.text() for a in move.actions() if a.isChecked()] == ["Work"]   # its folder is ticked
        _action(move, "Home").trigger()
        assert _layout(w) == ["[Home]", "  gamma", "[Work]", "  alpha", "delta", "beta"]

        work = w.history.row_of_folder(folder_of(w.history.topLevelItem(1)))     # a click closes a folder
        qtbot.mouseClick(w.history.viewport(), Qt.MouseButton.LeftButton, pos=w.history.visualItemRect(work).center())
        assert _layout(w) == ["[Home]", "  gamma", "[Work …]", "  alpha", "delta", "beta"]
        assert w.session.conversation.id is None                      # clicking a folder opens no chat
        w.open_conversation(ids["alpha"])                             # the shown chat in a closed folder
        assert kind_of(w.history.currentItem()) is RowKind.FOLDER and w.history.currentItem().text(0) == "Work"
        _answer(monkeypatch, "Office")
        _action(_menu(w, w.history.topLevelItem(1)), "Rename folder…").trigger()
        assert _layout(w) == ["[Home]", "  gamma", "[Office …]", "  alpha", "delta", "beta"]
    finally:
        w.close()
        qloop.run_until_complete(w.shutdown())
    w2 = _window(qtbot, path)                                           # the grouping and the closed folder stay
    i18n.install("en")                                                  # English plurals ("1 chat", "2 chats")
    try:
        assert _layout(w2) == ["[Home]", "  gamma", "[Office …]", "  alpha", "delta", "beta"]
        home = w2.history.topLevelItem(0)
        _action(_menu(w2, home), "Delete folder (keeps its chats)").trigger()
        assert _layout(w2) == ["[Office …]", "  alpha", "delta", "gamma", "beta"]     # gamma is kept, ungrouped
        assert "Home" in w2.statusBar().currentMessage() and "1 chat is kept" in w2.statusBar().currentMessage()
    finally:
        qloop.run_until_complete(w2.shutdown())


def test_a_folder_name_that_cannot_be_used_is_explained(qtbot, qloop, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    path = tmp_path / "h.sqlite3"
    _history(path, ["alpha"])
    w = _window(qtbot, path)
    said: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda _p, _t, text: said.append(text)))
    try:
        _answer(monkeypatch, "Work", "work", "   ", "x" * 500)
        for _ in range(4):
            w.side.new_folder_action.trigger()
        assert said == ["A folder called “work” already exists.", "A folder needs a name.",
                        "A folder name can have at most 120 characters."]
        assert _layout(w) == ["[Work]", "alpha"]
    finally:
        qloop.run_until_complete(w.shutdown())


def test_drag_and_drop_moves_pins_and_ungroups(qtbot, qloop, tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    ids, made = _grouped(path, ["alpha", "beta", "gamma"], {"Work": ["alpha"]})
    work = made["Work"]
    w = _window(qtbot, path)
    lst = w.history
    try:
        assert _layout(w) == ["[Work]", "  alpha", "gamma", "beta"]
        _drop(w, lst.row_of_chat(ids["beta"]), lst.visualItemRect(lst.row_of_folder(work)).center())
        assert _layout(w) == ["[Work]", "  beta", "  alpha", "gamma"]          # onto a folder: in it
        _drop(w, lst.row_of_chat(ids["gamma"]), lst.visualItemRect(lst.row_of_chat(ids["alpha"])).center())
        assert _layout(w) == ["[Work]", "  gamma", "  beta", "  alpha"]        # onto a chat in it: in it too
        below = QPoint(10, lst.viewport().height() - 4)
        _drop(w, lst.row_of_chat(ids["beta"]), below)
        assert _layout(w) == ["[Work]", "  gamma", "  alpha", "beta"]          # the empty space: out of it
        _action(_menu(w, lst.row_of_chat(ids["alpha"])), "Pin chat").trigger()
        assert _layout(w) == ["<Pinned>", "  alpha", "[Work]", "  gamma", "beta"]
        _drop(w, lst.row_of_chat(ids["beta"]), lst.visualItemRect(lst.topLevelItem(0)).center())
        assert _layout(w) == ["<Pinned>", "  beta", "  alpha", "[Work]", "  gamma"]   # onto "Pinned": pinned
        _drop(w, lst.row_of_chat(ids["alpha"]), below)
        assert _layout(w) == ["<Pinned>", "  beta", "[Work]", "  gamma", "alpha"]     # out of Pinned, ungrouped
        _drop(w, lst.row_of_chat(ids["beta"]), lst.visualItemRect(lst.row_of_folder(work)).center())
        assert _layout(w) == ["[Work]", "  gamma", "  beta", "alpha"]
        foreign = lst.mimeData([lst.row_of_chat(ids["alpha"])])
        foreign.setData("application/x-brook-chat", b"1:" + str(ids["alpha"]).encode())   # another process's
        at = lst.visualItemRect(lst.row_of_folder(work)).center().toPointF()
        QApplication.sendEvent(lst.viewport(), QDropEvent(at, Qt.DropAction.MoveAction, foreign,
                                                          Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier))
        assert _layout(w) == ["[Work]", "  gamma", "  beta", "alpha"]           # refused
    finally:
        qloop.run_until_complete(w.shutdown())


def test_search_finds_a_chat_in_a_closed_folder_and_opens_the_folder(qtbot, qloop, tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    ids, _ = _grouped(path, ["长城有多长", "Rust borrow checker", "misc"], {"Trips": ["长城有多长"]},
                      collapsed=("Trips",))
    w = _window(qtbot, path)
    try:
        assert qloop.run_until_complete(w.load_model())
        assert _layout(w) == ["[Trips …]", "  长城有多长", "misc", "Rust borrow checker"]
        panel = w.search_panel
        panel.query.insert("answer about 长城")                   # a message of the chat in the closed folder
        qtbot.waitUntil(lambda: panel.results.count() == 1)
        assert [h.conversation_id for h in panel.hits] == [ids["长城有多长"]]
        with qtbot.waitSignal(panel.open_requested):
            qtbot.keyClick(panel.query, Qt.Key.Key_Return)
        assert w.session.conversation.id == ids["长城有多长"]
        assert _layout(w) == ["[Trips]", "  长城有多长", "misc", "Rust borrow checker"]      # the folder opened
        row = w.history.currentItem()
        assert chat_of(row) == ids["长城有多长"] and w.history.visualItemRect(row).height() > 0
        assert not Store(path).list_folders()[0].collapsed           # and stays open
        panel.query.setText("Trips")                               # a folder's name is not a chat's title
        panel.run_query()
        assert panel.title_hits == []
    finally:
        qloop.run_until_complete(w.shutdown())


def test_undo_delete_puts_the_chat_back_pinned_and_in_its_folder(qtbot, qloop, tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    ids, made = _grouped(path, ["alpha", "beta"], {"Work": ["alpha"]}, pinned=("beta",))
    work = made["Work"]
    w = _window(qtbot, path)
    try:
        assert _layout(w) == ["<Pinned>", "  beta", "[Work]", "  alpha"]
        for title in ("alpha", "beta"):
            row = w.history.row_of_chat(ids[title])
            w.history.setFocus()
            w.history.setCurrentItem(row)
            qtbot.keyClick(w.history, Qt.Key.Key_Delete)
            assert title not in w.history.titles()
            w.state.undo_action.trigger()
            assert _layout(w) == ["<Pinned>", "  beta", "[Work]", "  alpha"]
        w.history.setFocus()
        w.history.setCurrentItem(w.history.row_of_folder(work))     # Delete on a folder: the folder, not a chat
        qtbot.keyClick(w.history, Qt.Key.Key_Delete)
        assert _layout(w) == ["<Pinned>", "  beta", "alpha"]
    finally:
        qloop.run_until_complete(w.shutdown())


def test_an_import_through_the_window_shows_its_pins_and_folders(qtbot, qloop, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtWidgets import QFileDialog

    from app.core.history.export import export_json

    src = tmp_path / "other.sqlite3"
    _grouped(src, ["alpha", "beta", "gamma"], {"Work": ["alpha"]}, pinned=("gamma",))
    store = Store(src)
    file = tmp_path / "chats.json"
    file.write_text(json.dumps(export_json(store)), "utf-8")
    store.close()
    path = tmp_path / "h.sqlite3"
    _history(path, ["mine"])
    w = _window(qtbot, path)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(file), "")))
    try:
        assert len(w.chats.import_chats()) == 3
        assert _layout(w) == ["<Pinned>", "  gamma", "[Work]", "  alpha", "mine", "beta"]   # mine: the newest
    finally:
        qloop.run_until_complete(w.shutdown())


def test_opening_a_chat_moves_the_selection_and_makes_no_row_anew(qtbot, qloop, tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    ids, made = _grouped(path, ["alpha", "beta", "gamma"], {"Work": ["alpha"]}, pinned=("gamma",),
                         collapsed=("Work",))
    w = _window(qtbot, path)
    try:
        rows = list(w.history.rows())
        w.open_conversation(ids["beta"])
        assert chat_of(w.history.currentItem()) == ids["beta"]
        w.open_conversation(ids["alpha"])                             # in the closed folder: the folder is marked
        assert folder_of(w.history.currentItem()) == made["Work"]
        w.open_conversation(ids["gamma"])
        assert chat_of(w.history.currentItem()) == ids["gamma"] and w.history.selectedItems() == [
            w.history.row_of_chat(ids["gamma"])]
        w.new_chat()                                                  # not saved yet: no row is current
        assert w.history.currentItem() is None and w.history.selectedItems() == []
        after = list(w.history.rows())
        assert len(after) == len(rows) and all(a is b for a, b in zip(after, rows, strict=True))
        other = Store(path)                                           # a chat the list has not seen yet
        late = Conversation(title="late")
        other.save_message(late, late.add(Message(Role.USER, "written by another window")))
        other.close()
        assert late.id is not None
        w.open_conversation(late.id)                                  # the list is filled again, with it
        assert _layout(w) == ["<Pinned>", "  gamma", "[Work …]", "  alpha", "late", "beta"]
        assert chat_of(w.history.currentItem()) == late.id
    finally:
        qloop.run_until_complete(w.shutdown())


def test_a_language_switch_translates_the_headings_of_the_list(qtbot, qloop, tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    ids, _ = _grouped(path, ["alpha", "beta"], {"Work": ["alpha"]}, pinned=("beta",))
    i18n.install("en")
    w = _window(qtbot, path)
    try:
        w.open_conversation(ids["alpha"])
        assert _layout(w) == ["<Pinned>", "  beta", "[Work]", "  alpha"]
        assert w.language.apply("zh_CN") == "zh_CN"
        qtbot.waitUntil(lambda: _layout(w)[0] == "<已置顶>")
        assert "个对话" in w.history.topLevelItem(1).toolTip(0)          # the folder's "%n chat(s)"
        assert chat_of(w.history.currentItem()) == ids["alpha"]
        assert w.language.apply("en") == "en"
        qtbot.waitUntil(lambda: _layout(w)[0] == "<Pinned>")
    finally:
        i18n.install("en")
        qloop.run_until_complete(w.shutdown())


def test_the_grouped_sidebar_and_its_menus_are_chinese(qtbot, qloop, tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    ids, _ = _grouped(path, ["alpha", "beta"], {"Work": ["alpha"]}, pinned=("beta",))
    assert i18n.install("zh_CN") == "zh_CN"
    try:
        w = _window(qtbot, path)
        assert _layout(w)[0] == "<已置顶>"
        strings = visible_strings(w)
        for row in (w.history.row_of_chat(ids["alpha"]), w.history.topLevelItem(1), None):
            pos = w.history.visualItemRect(row).center() if row is not None else QPoint(10, 300)
            menu = w.side.menu_at(pos)
            for a in menu.actions():
                strings.append(("context menu", a.text().split("\t")[0]))
                if a.menu() is not None:
                    a.menu().aboutToShow.emit()
                    strings += [("move menu", b.text()) for b in a.menu().actions() if b.text() != "Work"]
            menu.close()
        strings += [("pinned heading tooltip", w.history.topLevelItem(0).toolTip(0)),
                    ("folder tooltip", w.history.topLevelItem(1).toolTip(0).replace("Work", ""))]
        assert untranslated(strings, w.session.engine.name) == []
        assert any(t in ("移到文件夹(M)", "移到文件夹(&M)") for _, t in strings)
        qloop.run_until_complete(w.shutdown())
    finally:
        i18n.install("en")
