"""The main window: a view of a ``ChatSession`` (app.core.chat.session).

The session owns the conversations and their replies (send, stop, regenerate, switch, delete, save, engine);
the window draws what it reports (``SessionListener``) and turns clicks and keys into session calls. The
``Coalescer`` paints streaming replies once per tick.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QColor, QIcon, QKeySequence, QPainter, QPixmap
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.core.chat import session_ops
from app.core.chat.session import ChatSession, SessionListener
from app.core.conversation import Conversation, Message, MessageStatus
from app.core.errors import BrookError
from app.core.history.store import Store
from app.core.settings import AppSettings
from app.core.streaming.generation import Generation
from app.core.streaming.watchdog import LoopWatchdog
from app.core.types import GenerationParams
from app.ui.look.style import apply_style, is_dark
from app.ui.messages.chat_view import ChatInput, ChatView
from app.ui.messages.coalescer import Coalescer
from app.ui.window.status_bar import StatusBar

log = logging.getLogger("brook.ui")

#: Item data role of the history list that holds True while the chat has a reply generating.
BUSY_ROLE = Qt.ItemDataRole.UserRole + 1


def _feed_nothing(_text: str) -> None:
    """Feed of a reply generating in a chat that is not shown: its text stays in the ``Message``."""


def _paint_nothing() -> bool:
    return False


class MainWindow(QMainWindow, SessionListener):
    """Brook's window over ``self.session``. ``load_model()`` (a coroutine) loads the engine in the background;
    ``send()`` starts a reply; ``stop()`` stops the shown chat's reply. Signals: ``reply_finished(Message)``
    when a reply reaches a final status, ``model_ready(bool)`` when loading ends (False on error)."""

    reply_finished = Signal(object)
    model_ready = Signal(bool)
    watchdog: LoopWatchdog | None = None    # the event-loop watchdog (started by the launcher)
    load_state = Signal(str)        # the session's model state ("loading", "idle", "error", "unloaded")
    load_fraction = Signal(float)   # load progress, 0..1

    def __init__(self, engine: Any, settings: AppSettings | None = None, store: Store | None = None) -> None:
        super().__init__()
        self.session = ChatSession(engine, settings, store, listener=self, opener=self._open_engine)
        self.coalescer = Coalescer(self)
        self.coalescer.painted.connect(self._on_painted)
        self.setWindowTitle("Brook")
        self.resize(1040, 760)
        self.setCentralWidget(self._build_body(store is not None))
        self.status = StatusBar(engine.name, self)
        self.setStatusBar(self.status)
        self._build_actions()
        apply_style(self)
        self._styled_dark = is_dark()
        self._set_send_mode(stop=False)
        self.refresh_history()
        if store is not None and store.problem:
            self.chat.add_notice(f"⚠ {store.problem}", "errorNotice")
        from app.ui.window.features import (
            DailyFeatures,  # search, model library, export, chat settings, help (issue 11)
        )

        self.features = DailyFeatures(self)
        from app.ui.inspector.dock import install_inspector  # View → Stream inspector, Ctrl+Shift+I (issue 14)

        self.inspector_dock = install_inspector(self, self.coalescer)
        from app.ui.window.server_menu import ServerMenu  # remote servers and serving this model (issue 12)

        self.server_menu = ServerMenu(self)
        from app.ui.window.window_state import WindowState  # delete/undo, sidebar, restore on restart

        self.state = WindowState(self)
        if store is not None:
            self.state.restore()
        self.input.setFocus()

    # -- building ----------------------------------------------------------------------------------------
    def _build_body(self, with_sidebar: bool) -> QSplitter:
        splitter = QSplitter()
        self.splitter = splitter
        side = QWidget()
        side.setObjectName("sidebar")
        side_lay = QVBoxLayout(side)
        side_lay.setContentsMargins(8, 8, 8, 8)
        self.new_button = QPushButton(self.tr("+  New chat"))
        self.new_button.setToolTip(self.tr("New chat (Ctrl+N)"))
        self.new_button.clicked.connect(self.new_chat)
        self.history = QListWidget()
        self.history.setAccessibleName(self.tr("Chats"))
        self.history.setObjectName("history")
        self.history.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.history.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.history.setUniformItemSizes(True)
        self.history.setIconSize(QSize(8, 8))
        self.history.itemActivated.connect(self._on_history_item)
        self.history.itemClicked.connect(self._on_history_item)
        side_lay.addWidget(self.new_button)
        side_lay.addWidget(self.history, 1)
        side.setMinimumWidth(140)
        side.setMaximumWidth(420)
        side.setVisible(with_sidebar)
        self.sidebar = side
        splitter.addWidget(side)
        central = QWidget()
        splitter.addWidget(central)
        splitter.setStretchFactor(1, 1)
        splitter.setCollapsible(0, True)
        splitter.setCollapsible(1, False)
        splitter.setSizes([220, 820])
        root = QVBoxLayout(central)
        root.setContentsMargins(0, 0, 0, 0)
        root.setSpacing(0)
        self.chat = ChatView()
        self.chat.widget_added.connect(self._wire_message)
        self.chat.setAccessibleName(self.tr("Messages"))
        root.addWidget(self.chat, 1)
        bottom = QWidget()
        bottom.setObjectName("inputBar")
        row = QHBoxLayout(bottom)
        row.setContentsMargins(12, 8, 12, 12)
        self.input = ChatInput()
        self.input.setAccessibleName(self.tr("Message to send"))
        self.input.submitted.connect(self.send)
        self.input.escape.connect(self.stop)
        self.send_button = QPushButton(self.tr("Send"))
        self.send_button.setObjectName("sendButton")
        self.send_button.setMinimumWidth(64)
        self.send_button.clicked.connect(self._on_send_button)
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        root.addWidget(bottom)
        return splitter

    def _action(self, text: str, slot: Any, shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
                *, window_wide: bool = True) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        if window_wide:
            self.addAction(action)
        return action

    def _build_actions(self) -> None:
        stop_action = self._action(self.tr("Stop"), self.stop, QKeySequence(Qt.Key.Key_Escape))
        stop_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        new_action = self._action(self.tr("New chat"), self.new_chat, QKeySequence.StandardKey.New)
        open_action = self._action(self.tr("&Open model (GGUF)…"), self.choose_model, QKeySequence.StandardKey.Open)
        settings_action = self._action(self.tr("&Settings…"), self.edit_settings, "Ctrl+,")
        quit_action = self._action(self.tr("&Quit"), self.close, QKeySequence.StandardKey.Quit)
        regen_action = self._action(self.tr("&Regenerate last reply"), lambda: self.regenerate(), "Ctrl+R")
        focus_action = self._action(self.tr("Focus input"), self.input.setFocus, "Ctrl+L")
        self.delete_action = self._action(self.tr("Delete chat"), self.delete_selected_chat,
                                          QKeySequence.StandardKey.Delete, window_wide=False)
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.history.addAction(self.delete_action)
        menu = self.menuBar()
        file_menu = menu.addMenu(self.tr("&File"))
        for a in (new_action, open_action, settings_action):
            file_menu.addAction(a)
        file_menu.addSeparator()
        file_menu.addAction(quit_action)
        chat_menu = menu.addMenu(self.tr("&Chat"))
        for a in (stop_action, regen_action, focus_action):
            chat_menu.addAction(a)
        self.file_menu, self.chat_menu = file_menu, chat_menu

    # -- the session's state, for callers ----------------------------------------------------------------
    @property
    def engine(self) -> Any:
        return self.session.engine

    @property
    def conversation(self) -> Conversation:
        return self.session.conversation

    @property
    def settings(self) -> AppSettings:
        return self.session.settings

    @property
    def store(self) -> Store | None:
        return self.session.store

    @property
    def generating(self) -> bool:
        """True while the shown chat has a reply generating."""
        return self.session.generating

    @property
    def model_state(self) -> str:
        return self.session.model_state

    @property
    def load_error(self) -> str | None:
        return self.session.load_error

    @property
    def loading(self) -> asyncio.Future[None] | None:
        return self.session.loading

    @property
    def state_label(self) -> Any:
        return self.status.state_label

    @property
    def rate_label(self) -> Any:
        return self.status.rate_label

    # -- user actions ------------------------------------------------------------------------------------
    def _on_send_button(self) -> None:
        if self.generating:
            self.stop()
        else:
            self.send()

    def send(self, text: str | None = None, params: GenerationParams | None = None) -> Message | None:
        """Send ``text`` (default: the input box) and start the reply; see ``ChatSession.send``."""
        if text is None:
            text = self.input.toPlainText()
        if self.generating and text.strip():
            self.features.queue_message(text)      # typed while the reply streams: sent when it ends
            self.input.clear()
            return None
        self.features.before_send()
        reply = self.session.send(text, params)
        if reply is not None:
            self.input.clear()
        return reply

    def regenerate(self, params: GenerationParams | None = None) -> Message | None:
        """A new version of the last reply (Ctrl+R); the old one is kept (‹1/2›, ``app.core.chat.session_ops``)."""
        return session_ops.regenerate(self.session, params)

    def stop(self) -> None:
        """Stop the shown chat's reply now (Esc)."""
        self.session.stop()

    def new_chat(self) -> None:
        """Show a new, empty chat (a reply of the previous one keeps generating)."""
        self.session.new_chat()

    def open_conversation(self, conv_id: int) -> None:
        """Show a saved chat (a reply of the previous one keeps generating)."""
        self.session.open_conversation(conv_id)

    def _on_history_item(self, item: QListWidgetItem) -> None:
        conv_id = item.data(Qt.ItemDataRole.UserRole)
        if conv_id is not None and conv_id != self.conversation.id:
            self.open_conversation(int(conv_id))

    def delete_selected_chat(self) -> None:
        """Delete the chat selected in the list (else the one shown); Undo brings it back."""
        item = self.history.currentItem()
        conv_id = item.data(Qt.ItemDataRole.UserRole) if item is not None else self.conversation.id
        if conv_id is not None:
            self.state.delete(int(conv_id))

    def chunks_painted_after_stop(self, reply: Message) -> int:
        """Chunks of ``reply`` painted after Stop was pressed (0 unless something is wrong)."""
        gen = self.session.generation_of(reply)
        return gen.chunks_painted_after_stop() if gen is not None else 0

    # -- model and settings ------------------------------------------------------------------------------
    async def load_model(self) -> bool:
        """Load the engine off the loop (the window stays responsive and shows progress). Returns success."""
        from app.core.render.highlight import warm_up as warm_up_lexers

        self._lexers_warm = asyncio.get_running_loop().run_in_executor(None, warm_up_lexers)
        self._warm_up_renderer()
        return await self.session.load()

    def choose_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Open a GGUF model"), "",
                                              self.tr("GGUF models (*.gguf);;All files (*)"))
        if path:
            self._switch_task = asyncio.ensure_future(self.switch_model(path))

    def _open_engine(self, path: str) -> Any:
        """File → Open model: the one way to open an engine (the launcher replaces this with its own options)."""
        from app.engine.open import EngineSpec, open_engine

        return open_engine(EngineSpec(model_path=path, n_ctx=self.settings.n_ctx))

    async def switch_model(self, path: str) -> bool:
        """Open the GGUF at ``path`` instead of the current model; see ``ChatSession.open_model``."""
        return await self.session.open_model(path)

    def edit_settings(self) -> None:
        from app.ui.dialogs.settings import edit_settings

        edit_settings(self)

    def _persist_settings(self) -> None:
        self.session.save_settings()

    def _warm_up_renderer(self) -> None:
        """Pay the one-time costs (pygments lexer import, monospace font and layout set-up: ~30 ms here; the math
        worker's matplotlib import) while the model loads, not in the first render tick of the first reply."""
        from app.ui.messages.markdown_view import MarkdownView

        view = MarkdownView(None)
        view.resize(400, 200)
        view.append_text("Warm **up** `x` $x^2$\n\n```python\ndef f(x):\n    return x\n```\n\n| a |\n|---|\n| 1 |\n")
        view.refresh()
        view.finish()
        view.document().size()
        view.deleteLater()

    # -- history list ------------------------------------------------------------------------------------
    def refresh_history(self) -> None:
        store = self.store
        if store is None:
            return
        busy = self.session.busy_conversations()
        dot = _dot_icon(self.palette().highlight().color()) if busy else QIcon()
        self.history.blockSignals(True)
        self.history.clear()
        try:
            infos = store.list_conversations()
        except BrookError as exc:              # HistoryError: said once in the chat, the list stays as it was
            self.history.blockSignals(False)
            self.notice(f"⚠ {exc}", "errorNotice")
            return
        for info in infos:
            item = QListWidgetItem(info.title)
            item.setData(Qt.ItemDataRole.UserRole, info.id)
            generating = info.id in busy
            item.setData(BUSY_ROLE, generating)
            item.setToolTip(info.title + (" — " + self.tr("generating…") if generating else ""))
            if generating:
                item.setIcon(dot)
            self.history.addItem(item)
            if info.id == self.conversation.id:
                self.history.setCurrentItem(item)
        self.history.blockSignals(False)

    # -- SessionListener: what the session reports -------------------------------------------------------
    def conversation_shown(self, conv: Conversation) -> None:
        running = list(self.session.running.values())
        for g in running:                  # what arrived so far goes into the reply's text, then the new view
            self.coalescer.flush(g.reply)
        self.chat.show_conversation(conv)
        for g in running:
            self._attach(g, fresh_view=True)
        self._set_send_mode(stop=self.generating)
        self.refresh_history()
        if conv.id is None:
            self.history.clearSelection()
        self._refresh_welcome()
        if not self.history.hasFocus():       # a chat opened from the list keeps the list focused (Delete works)
            self.input.setFocus()

    def message_added(self, conv: Conversation, msg: Message) -> None:
        if conv is self.conversation:
            self.chat.add(msg)
            self._refresh_welcome()

    def _refresh_welcome(self) -> None:
        features = getattr(self, "features", None)
        if features is not None:
            features.refresh_welcome()

    def message_removed(self, conv: Conversation, msg: Message) -> None:
        if conv is self.conversation:
            self.chat.remove(msg)

    def reply_started(self, gen: Generation) -> None:
        self._attach(gen, fresh_view=False)
        if gen.conversation is self.conversation:
            self._set_send_mode(stop=True)

    def _attach(self, gen: Generation, fresh_view: bool) -> None:
        """Paint ``gen``'s reply into its view when its chat is shown, else only count what arrives."""
        widget = self.chat.widget_for(gen.reply) if gen.conversation is self.conversation else None
        view = widget.view if widget is not None else None
        if view is None:
            self.coalescer.attach(gen.reply, _feed_nothing, _paint_nothing, gen.metrics)
            return
        if fresh_view and gen.reply.text:
            view.append_text(gen.reply.text)       # a re-made view starts from the text so far
            view.refresh()
        self.coalescer.attach(gen.reply, view.append_text, view.refresh, gen.metrics)

    def reply_changed(self, gen: Generation) -> None:
        reply = gen.reply
        self.status.update_reply(reply)          # the last reply's final figures come after it ended
        widget = self.chat.widget_for(reply) if gen.conversation is self.conversation else None
        if widget is not None:
            widget.update_status()
            self.chat.message_changed(reply)
        if reply.id not in self.session.running:
            return
        if reply.status is MessageStatus.WAITING and self.session.scheduler.position() > 0:
            self.status.set_state(self.tr("waiting for the model…"))
        elif reply.status is MessageStatus.PREFILL:
            self.status.set_state(self.tr("reading the prompt…"))
        elif reply.status is MessageStatus.GENERATING:
            self.status.set_state(self.tr("generating…"))

    def reply_stopping(self, gen: Generation) -> None:
        self.coalescer.flush(gen.reply)
        self.coalescer.freeze(gen.reply)

    def reply_ended(self, gen: Generation) -> None:
        reply = gen.reply
        stopped = reply.status is MessageStatus.STOPPED
        if not stopped:
            self.coalescer.flush(reply)
        self.coalescer.detach(reply)
        widget = self.chat.widget_for(reply) if gen.conversation is self.conversation else None
        if widget is not None:
            if widget.view is not None and not stopped:
                widget.view.finish()
            widget.update_status()
            self.chat.message_changed(reply)
        if not self.session.running:
            self.status.set_state(self.tr("ready"))
        self.status.show_reply(reply)
        if gen.conversation is self.conversation:
            self._set_send_mode(stop=self.generating)
        self.reply_finished.emit(reply)

    def busy_changed(self) -> None:
        self.refresh_history()

    def history_changed(self) -> None:
        self.refresh_history()

    def model_state_changed(self, state: str) -> None:
        self.load_state.emit(state)
        self.status.set_loading(state == "loading")
        if state == "loading":
            self.status.set_state(self.tr("loading model…"))
            self.status.set_model(self.engine.name)
        elif state == "error":
            cancelled = self.session.load_cancel.is_set()
            self.status.set_state(self.tr("model load cancelled") if cancelled else self.tr("model failed to load"))
            self.model_ready.emit(False)
        elif state == "unloaded":
            self.status.set_state(self.tr("model unloaded to free memory (loads again with your next message)"))
        else:
            self.status.set_state(self.tr("ready"))
            self.status.set_model(self.engine.name)
            self.model_ready.emit(True)

    def load_progress(self, fraction: float) -> None:
        self.status.set_progress(fraction)
        self.load_fraction.emit(fraction)

    def _wire_message(self, widget: Any) -> None:
        """A reply's "Resend" link (a reply that ended without text: ``app.core.chat.notes``)."""
        from app.core.chat.notes import resend

        if not widget.property("brookResend"):           # the list reuses widgets: wire each one once
            widget.setProperty("brookResend", True)
            widget.resend_requested.connect(lambda msg: resend(self.session, msg))

    def notice(self, text: str, kind: str) -> None:
        from app.ui.look.retranslate import core_text  # the core's English notices in the UI language

        self.chat.add_notice(core_text(text), kind)
        self._refresh_welcome()

    def _on_painted(self, reply: Message, _n: int) -> None:
        gen = self.session.running.get(reply.id)
        if gen is not None:
            self.status.show_live(gen)

    def _set_send_mode(self, stop: bool) -> None:
        self.send_button.setText(self.tr("Stop") if stop else self.tr("Send"))
        self.send_button.setToolTip(self.tr("Stop generating (Esc)") if stop else self.tr("Send (Enter)"))
        self.send_button.setProperty("stopMode", stop)
        self.send_button.style().unpolish(self.send_button)
        self.send_button.style().polish(self.send_button)

    # -- closing -----------------------------------------------------------------------------------------
    async def shutdown(self, join_timeout_s: float = 1.5) -> None:
        """Closing: stop every reply (saved as stopped), wait for the workers, free the model. Safe twice."""
        await self.server_menu.shutdown()       # API replies in flight stop too
        await self.session.shutdown(join_timeout_s)

    def changeEvent(self, event: QEvent) -> None:
        """A live switch of the system theme (light <-> dark) restyles the window, not only the replies: the
        stylesheet's colours are fixed per theme, so without this user text turned near-invisible."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange and hasattr(self, "features"):
            self.features.retranslate()       # a live language switch (Settings → Language)
        if event.type() in (QEvent.Type.ApplicationPaletteChange, QEvent.Type.PaletteChange) \
                and is_dark() != self._styled_dark:
            self._styled_dark = is_dark()
            apply_style(self)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.store is not None:
            self.state.remember()
        self.session.closing = True
        self.session.stop_all()
        super().closeEvent(event)


def _dot_icon(color: QColor) -> QIcon:
    """A small filled circle: the mark of a chat whose reply is generating."""
    pix = QPixmap(8, 8)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setBrush(color)
    p.setPen(Qt.PenStyle.NoPen)
    p.drawEllipse(0, 0, 8, 8)
    p.end()
    return QIcon(pix)
