"""The daily-use features of the window, wired in one place: search, model library, recent models, export and
import, the chat's own settings, rename, text size, theme, Help (shortcuts, About).

``DailyFeatures(window)`` adds its menus, shortcuts and the search panel to a ``MainWindow``; it only uses the
window's public face (``store``, ``conversation``, ``settings``, ``engine``, ``open_conversation``,
``switch_model``, ``refresh_history``, ``history``, ``menuBar``), so the window file stays a view and each feature
lives in its own file (``search_panel``, ``model_library``, ``chat_settings_dialog``, ``help_dialogs``,
``theme``).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMenu, QMessageBox

from app.core.errors import BrookError
from app.ui.window.search_panel import SearchPanel

log = logging.getLogger("brook.ui.features")


class DailyFeatures(QObject):
    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self.session = getattr(window, "session", None)
        self._tasks: set[asyncio.Future[Any]] = set()
        self.search = SearchPanel(window.store)
        side = window.history.parentWidget()
        lay = side.layout() if side is not None else None
        if lay is not None:
            lay.insertWidget(max(0, lay.indexOf(window.history)), self.search)
        self.search.open_requested.connect(self.open_hit)
        self.search.closed.connect(window.input.setFocus)
        self._build_menus()
        self._install_attachments()
        if self.session is not None:
            self._install_session_features()
        from app.ui.look import i18n

        self.language = i18n.current()      # of the texts shown now (``retranslate`` follows a live switch)
        from app.ui.window.load_progress import LoadProgressDialog

        self.load_progress = LoadProgressDialog(window)      # progress and Cancel of a model load
        from app.ui.compose.context_meter import ContextMeter

        self.context_meter = ContextMeter(window)
        window.statusBar().addPermanentWidget(self.context_meter)
        window.input.textChanged.connect(self.context_meter.schedule)
        load_state = getattr(window, "load_state", None)
        if load_state is not None:          # "Loading X…" in the welcome state, then the model's name
            load_state.connect(lambda _state: self.refresh_welcome())
        for signal in ("model_ready", "reply_finished"):
            sig = getattr(window, signal, None)
            if sig is not None:
                sig.connect(lambda *_a: self.context_meter.schedule())

    def _install_session_features(self) -> None:
        """Message menu and versions, the queue of messages typed while a reply streams, idle unload, welcome."""
        from app.core.chat.idle import IdleUnloader, unload_model
        from app.core.chat.session_ops import SendQueue
        from app.ui.messages.actions import MessageActions
        from app.ui.window.welcome import WelcomeView

        w, session = self.w, self.session
        self.messages = MessageActions(w)
        w.chat.widget_added.connect(self.messages.decorate)
        self.queue = SendQueue(session)
        self.idle = IdleUnloader(w.settings.idle_unload_minutes, lambda: bool(session.running),
                                 lambda: unload_model(session))
        w.reply_finished.connect(self._reply_finished)
        w.model_ready.connect(lambda _ok: self.idle.touch())
        self.welcome = WelcomeView()
        self.welcome.prompt_chosen.connect(lambda text: w.send(text))
        central = w.chat.parentWidget()
        lay = central.layout() if central is not None else None
        if lay is not None:
            lay.insertWidget(lay.indexOf(w.chat), self.welcome, 1)
        self.refresh_welcome()

    def _reply_finished(self, reply: Any) -> None:
        widget = self.w.chat.widget_for(reply)
        if widget is not None:
            self.messages.decorate(widget)
        self.idle.touch()
        self.context_meter.schedule()
        if self.queue.pending:
            QTimer.singleShot(0, self, self._pump)

    def _pump(self) -> None:
        reply = self.queue.pump()
        if reply is not None and not self.queue.pending:
            self.w.statusBar().clearMessage()

    def queue_message(self, text: str) -> None:
        """A message typed while the shown chat's reply streams: sent as soon as the reply ends."""
        self.queue.pending.append((self.session.conversation, text))
        self.w.statusBar().showMessage(self.tr("%n message(s) waiting: sent when the reply ends", "",
                                               len(self.queue.pending)))

    def before_send(self) -> None:
        """Load the model again first when idle unload freed it."""
        if self.session is not None and self.idle.unloaded:
            self.idle.unloaded = False
            task = asyncio.ensure_future(self.session.load())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def refresh_welcome(self) -> None:
        """The welcome state instead of an empty chat (not over notices such as a load error)."""
        welcome = getattr(self, "welcome", None)
        if welcome is None:
            return
        empty = not self.w.conversation.messages and not self.w.chat.widgets and self.w.chat.notice_count == 0
        welcome.set_model(self.w.engine.name, self.session.model_state if self.session else "idle")
        meter = getattr(self, "context_meter", None)
        if meter is not None:
            meter.schedule()
        welcome.setVisible(empty)
        self.w.chat.setVisible(not empty)

    def _install_attachments(self) -> None:
        from app.ui.compose.attachments_bar import AttachmentsBar, InputFilter

        self.attachments = AttachmentsBar(self.w)
        bottom = self.w.input.parentWidget()
        row = bottom.layout() if bottom is not None else None
        outer = bottom.parentWidget().layout() if bottom is not None and bottom.parentWidget() else None
        if row is None or outer is None:
            return
        row.insertWidget(0, self.attachments.button, 0, Qt.AlignmentFlag.AlignBottom)
        outer.insertWidget(outer.indexOf(bottom), self.attachments)
        self._input_filter = InputFilter(self.attachments)
        self.w.input.installEventFilter(self._input_filter)
        self.w.input.viewport().installEventFilter(self._input_filter)
        self.w.send_button.pressed.connect(self.attachments.compose_into_input)

    # -- menus -------------------------------------------------------------------------------------------
    def _menu(self, key: str, english: str, title: str) -> QMenu:
        """The window's menu ``key`` ("file", "chat" …): its ``<key>_menu`` attribute, else the menu titled
        ``english`` or ``title`` (translated), else a new one."""
        menu = getattr(self.w, f"{key}_menu", None)
        if isinstance(menu, QMenu):
            return menu
        bar = self.w.menuBar()
        for a in bar.actions():
            if a.menu() is not None and a.text().replace("&", "") in (english.replace("&", ""), title.replace("&", "")):
                return a.menu()
        menu = bar.addMenu(title)
        menu.setObjectName(f"{key}Menu")
        setattr(self.w, f"{key}_menu", menu)
        return menu

    def _act(self, menu: QMenu, text: str, slot: Any, shortcut: str | QKeySequence | None = None) -> QAction:
        action = QAction(text, self.w)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        self.w.addAction(action)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        f = self._menu("file", "&File", self.tr("&File"))
        first = f.actions()[0] if f.actions() else None
        lib = QMenu(self.tr("Models"), f)
        f.insertMenu(first, lib) if first else f.addMenu(lib)
        self._act(lib, self.tr("Model &library…"), self.open_library, "Ctrl+M")
        self.recent_menu = lib.addMenu(self.tr("Recent models"))
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._act(lib, self.tr("Use the &bundled model"), self.use_bundled)
        if self.session is not None:
            self._act(lib, self.tr("&Unload the model (free its memory)"), self.unload_now)
        f.addSeparator()
        self._act(f, self.tr("&Export this chat…"), lambda: self.export(current_only=True), "Ctrl+E")
        self._act(f, self.tr("Export &all chats…"), lambda: self.export(current_only=False))
        self._act(f, self.tr("&Import chats (JSON)…"), self.import_chats)
        c = self._menu("chat", "&Chat", self.tr("&Chat"))
        c.addSeparator()
        self._act(c, self.tr("&Search all chats"), self.search.focus_query, QKeySequence.StandardKey.Find)
        self._act(c, self.tr("Chat &settings (system prompt, preset)…"), self.chat_settings, "Ctrl+Shift+,")
        self._act(c, self.tr("Re&name chat…"), self.rename_chat, "F2")
        v = self._menu("view", "&View", self.tr("&View"))
        self._act(v, self.tr("&Larger text"), lambda: self.zoom(1), QKeySequence.StandardKey.ZoomIn)
        self._act(v, self.tr("&Smaller text"), lambda: self.zoom(-1), QKeySequence.StandardKey.ZoomOut)
        self._act(v, self.tr("&Normal text size"), lambda: self.zoom(0), "Ctrl+0")
        theme = v.addMenu(self.tr("&Theme"))
        group = QActionGroup(self)
        for label, key in ((self.tr("Follow the system"), "system"), (self.tr("Light"), "light"),
                           (self.tr("Dark"), "dark")):
            a = self._act(theme, label, lambda _c=False, k=key: self.set_theme(k))
            a.setCheckable(True)
            a.setChecked(self.w.settings.theme == key)
            group.addAction(a)
        self.theme_menu = theme
        h = self._menu("help", "&Help", self.tr("&Help"))
        self._act(h, self.tr("&Keyboard shortcuts"), self.show_shortcuts, QKeySequence.StandardKey.HelpContents)
        self._act(h, self.tr("&About Brook"), self.show_about)

    # -- search ------------------------------------------------------------------------------------------
    def open_hit(self, conv_id: int, message_id: int) -> None:
        """Open the chat of a search hit and show its message (scrolled into view, briefly outlined); a title
        hit (``message_id`` 0) opens the chat only."""
        self.w.open_conversation(conv_id)
        self.context_meter.schedule()
        chat = self.w.chat
        for msg in self.w.conversation.messages:
            widget = chat.scroll_to(msg) if msg.db_id == message_id else None   # the list makes its widget
            if widget is not None:
                outline = f"#{widget.objectName()} {{ border: 2px solid #f59e0b; }}"
                widget.setStyleSheet(outline)
                QTimer.singleShot(2500, widget, lambda wd=widget: wd.setStyleSheet(""))
                self.found_widget = widget
                break

    # -- models ------------------------------------------------------------------------------------------
    def models_folder(self) -> Path:
        from app.engine.library import default_models_dir

        custom = self.w.settings.models_dir
        return Path(custom) if custom else default_models_dir()

    def open_library(self) -> Any:
        from app.core.settings import data_dir
        from app.engine.library import LibraryCache
        from app.engine.models import bundled_model_path
        from app.ui.dialogs.model_library import ModelLibraryDialog

        try:
            extra = [bundled_model_path()]
        except BrookError:
            extra = []
        current = str(getattr(self.w.engine, "model_path", "")) or None
        dlg = ModelLibraryDialog(self.models_folder(), current=current, extra=extra,
                                 cache=LibraryCache(data_dir() / "model-library.json"), parent=self.w)
        dlg.load_requested.connect(self.load_model)
        dlg.folder_changed.connect(self._set_models_folder)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()
        self.library = dlg
        return dlg

    def _set_models_folder(self, path: str) -> None:
        self.w.settings.models_dir = path
        self._save_settings()

    def load_model(self, path: str) -> None:
        task = asyncio.ensure_future(self.w.switch_model(path))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def unload_now(self) -> Any:
        """Free the model's memory now (waits for a running reply's worker); the next message loads it again."""
        from app.core.chat.idle import unload_model

        if self.session is None or self.session.model_state != "idle":
            return None
        self.session.stop_all()
        self.idle.unloaded = True
        task = asyncio.ensure_future(unload_model(self.session))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def use_bundled(self) -> None:
        from app.engine.models import bundled_model_path

        try:
            self.load_model(str(bundled_model_path()))
        except BrookError as exc:
            QMessageBox.warning(self.w, self.tr("Bundled model"), str(exc))

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        recent = [p for p in self.w.settings.recent_models if Path(p).is_file()]
        if not recent:
            a = self.recent_menu.addAction(self.tr("(none yet)"))
            a.setEnabled(False)
        for p in recent:
            a = self.recent_menu.addAction(Path(p).name)
            a.setToolTip(p)
            a.triggered.connect(lambda _c=False, path=p: self.load_model(path))

    # -- export / import ---------------------------------------------------------------------------------
    def export(self, current_only: bool) -> list[Path]:
        from app.core.history.export import write_exports

        store = self.w.store
        conv = self.w.conversation
        if store is None or (current_only and conv.id is None):
            QMessageBox.information(self.w, self.tr("Export"), self.tr("There is no saved chat to export yet."))
            return []
        folder = QFileDialog.getExistingDirectory(self.w, self.tr("Export to folder"), str(Path.home()))
        if not folder:
            return []
        try:
            paths = write_exports(store, Path(folder), [conv.id] if current_only else None)
        except OSError as exc:
            QMessageBox.warning(self.w, self.tr("Export"), str(exc))
            return []
        self.w.statusBar().showMessage(self.tr("Saved %1").replace("%1", ", ".join(p.name for p in paths)), 8000)
        return paths

    def import_chats(self) -> list[int]:
        from app.core.history.export import import_file

        store = self.w.store
        if store is None:
            return []
        path, _ = QFileDialog.getOpenFileName(self.w, self.tr("Import chats"), str(Path.home()),
                                              self.tr("Brook chat export (*.json)"))
        if not path:
            return []
        try:
            result = import_file(store, Path(path))
        except BrookError as exc:
            QMessageBox.warning(self.w, self.tr("Import"), str(exc))
            return []
        self._history_changed()
        text = self.tr("Imported %n chat(s)", "", len(result.ids))
        if result.skipped:
            text += "; " + self.tr("%n already in the history skipped", "", len(result.skipped))
        self.w.statusBar().showMessage(text, 8000)
        return result.ids

    # -- the chat ----------------------------------------------------------------------------------------
    def chat_settings(self) -> Any:
        from app.ui.dialogs.chat_settings import ChatSettingsDialog

        conv = self.w.conversation
        dlg = ChatSettingsDialog(conv, self.w.settings.generation, self.w)
        if dlg.exec():
            dlg.apply()
            if self.w.store is not None and conv.id is not None:
                self.w.store.save_chat_settings(conv)
        return dlg

    def rename_chat(self) -> None:
        conv = self.w.conversation
        if conv.id is None or self.w.store is None:
            return
        title, ok = QInputDialog.getText(self.w, self.tr("Rename chat"), self.tr("Title"), text=conv.title)
        if ok and title.strip():
            self.rename(title.strip())

    def rename(self, title: str) -> None:
        conv = self.w.conversation
        session = getattr(self.w, "session", None)
        if session is not None and hasattr(session, "rename_conversation"):
            session.rename_conversation(conv.id, title)
        else:
            self.w.store.rename_conversation(conv.id, title)
            conv.title = title
        self._history_changed()

    def _history_changed(self) -> None:
        self.w.refresh_history()

    # -- view and help -----------------------------------------------------------------------------------
    def zoom(self, step: int) -> float:
        """Text size in steps of ``app.ui.look.theme.ZOOM_STEPS`` (0: back to 100 %); the shown chat is laid out again
        with the new size (message heights are measured per font)."""
        from app.ui.look.theme import zoom_factor

        if not hasattr(self, "_base_pt"):
            self._base_pt = self.w.font().pointSizeF()
        factor = zoom_factor(step)
        self._font_pt = max(6.0, self._base_pt * factor) if factor != 1.0 else None
        self._restyle()
        shown = getattr(self.w, "conversation_shown", None)
        if callable(shown) and self.session is not None:
            shown(self.w.conversation)
        self.w.statusBar().showMessage(self.tr("Text size %1 %").replace("%1", f"{factor * 100:.0f}"), 2000)
        return factor

    def _restyle(self) -> None:
        """The window's stylesheet for the palette, plus the zoomed text size (a stylesheet rule: fonts set on
        the window do not reach widgets a stylesheet styles)."""
        from app.ui.look.style import is_dark, stylesheet

        pt = getattr(self, "_font_pt", None)
        self.w.setStyleSheet(stylesheet(is_dark()) + (f"\nQWidget {{ font-size: {pt:.1f}pt; }}" if pt else ""))

    def set_theme(self, theme: str) -> None:
        from app.ui.look.theme import apply_theme

        self.w.settings.theme = theme
        apply_theme(theme)
        self._restyle()
        self._save_settings()

    def show_shortcuts(self) -> Any:
        from app.ui.window.help import ShortcutsDialog

        dlg = ShortcutsDialog(self.w)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()
        return dlg

    def show_about(self) -> None:
        from app.core.settings import data_dir
        from app.ui.window.help import show_about

        show_about(self.w, self.w.engine.name, str(data_dir()))

    # -- language ----------------------------------------------------------------------------------------
    def apply_language(self, setting: str) -> str:
        """Switch the UI language now (Settings → Language): installs the translator; Qt's LanguageChange
        then reaches ``retranslate``. Returns the language in use."""
        from app.ui.look import i18n

        if i18n.choose_language(setting) != i18n.current():
            i18n.install(setting)
        return i18n.current()

    def retranslate(self) -> int:
        """The window's texts in the language installed now (the window's LanguageChange): every text set
        with ``tr()`` through the ``.ts`` tables (``app.ui.look.retranslate``), the composed ones built again, and
        the shown chat laid out again (its message widgets are made anew). Returns how many texts changed."""
        from app.ui.look import i18n
        from app.ui.look.retranslate import retranslate_tree

        new = i18n.current()
        if new == self.language:
            return 0
        w = self.w
        changed = retranslate_tree(w, self.language, new, skip=[w.chat, w.history, self.search.results])
        self.language = new
        self.refresh_welcome()
        if self.context_meter.usage is not None:
            self.context_meter.show_usage(self.context_meter.usage)
        shown = getattr(w, "conversation_shown", None)
        if callable(shown) and self.session is not None:
            shown(w.conversation)
        return changed

    def _save_settings(self) -> None:
        session = getattr(self.w, "session", None)
        if session is not None and hasattr(session, "save_settings"):
            session.save_settings()
        elif hasattr(self.w, "_persist_settings"):
            self.w._persist_settings()
