"""The main window: a view of a ``ChatSession`` (app.core.chat.session).

The session owns the conversations and their replies (send, stop, regenerate, switch, delete, save, engine);
the window draws what it reports (``SessionListener``) and turns clicks and keys into session calls. The
``Coalescer`` paints streaming replies once per tick.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QMainWindow, QPushButton, QSplitter, QVBoxLayout, QWidget

from app.core.chat import session_ops
from app.core.chat.session import ChatSession, ModelState, NoticeKind, SessionListener
from app.core.conversation import Conversation, Message
from app.core.history.rows import warm_schema
from app.core.history.store import Store
from app.core.settings import AppSettings, data_dir
from app.core.streaming.generation import Generation
from app.core.streaming.watchdog import LoopWatchdog
from app.core.types import GenerationParams
from app.engine.base import Engine
from app.ui.compose.attachments_bar import AttachmentsBar, InputFilter
from app.ui.compose.chat_input import ChatInput
from app.ui.compose.context_meter import ContextMeter
from app.ui.inspector.dock import install_inspector
from app.ui.look.retranslate import LanguageSwitch
from app.ui.look.style import NOTICE_STYLE, apply_style, is_dark
from app.ui.messages.actions import MessageActions
from app.ui.messages.coalescer import Coalescer
from app.ui.window.appearance import Appearance
from app.ui.window.chat_menu import ChatCommands
from app.ui.window.chat_pane import ChatPane
from app.ui.window.first_paint import FirstPaint
from app.ui.window.help import open_shortcuts, show_about
from app.ui.window.load_progress import LoadProgressDialog
from app.ui.window.loop_watch import retune_loop_watch
from app.ui.window.menus import SEPARATOR, Entry, Item, MenuKey, Submenu, build_menus
from app.ui.window.models_menu import ModelsMenu
from app.ui.window.replies import ReplyPainting
from app.ui.window.sending import Sending
from app.ui.window.server_menu import ServerMenu
from app.ui.window.sidebar import ChatSidebar
from app.ui.window.status_bar import StatusBar
from app.ui.window.window_state import WindowState

if TYPE_CHECKING:       # the message list (markdown, code colours, formulas) is imported once the window shows
    from app.ui.messages.chat_view import ChatView
    from app.ui.messages.widget import MessageWidget

log = logging.getLogger("brook.ui")


class MainWindow(QMainWindow, SessionListener):
    """Brook's window over ``self.session``. ``load_model()`` (a coroutine) loads the engine in the background;
    ``send()`` starts a reply; ``stop()`` stops the shown chat's reply. Signals: ``reply_finished(Message)``
    when a reply reaches a final status, ``model_ready(bool)`` when loading ends (False on error).

    The window builds every widget and declares its menus as data (``_menu_table``); each feature is a small
    controller given what it works on: ``models`` (File → Models), ``chats`` (export, import, rename, a chat's
    settings), ``appearance`` (text size, theme), ``sending`` (the send queue, idle unload), ``messages`` (a
    message's menu), ``server_menu``, ``state`` (delete with Undo, the sidebar, what is restored on restart),
    ``side`` (the chat list: pins, folders, its context menu; ``app.ui.window.sidebar``) and ``language`` (the
    live language switch); ``pane`` holds the welcome page or the message list, ``replies`` paints streaming
    replies.

    **Start-up in two steps** (window shown ≤ 3× a bare PySide6 window: ``python -m app.bench startup``): the
    window is built and shown without the message list, whose modules bring the markdown renderer, pygments and
    the formula worker (``chat``, made the first time it is needed); right after the first paint (``finish_start``)
    the list is made and the last chat restored."""

    reply_finished = Signal(object)
    model_ready = Signal(bool)
    watchdog: LoopWatchdog | None = None    # the event-loop watchdog (started by the launcher)

    def __init__(self, engine: Engine, settings: AppSettings | None = None, store: Store | None = None) -> None:
        super().__init__()
        self._styled_dark = is_dark()
        self._started = False
        self._start_waiter: asyncio.Future[None] | None = None      # ``load_model`` waits for the first paint
        self.session = ChatSession(engine, settings, store, listener=self, opener=self._open_engine)
        session = self.session
        self.coalescer = Coalescer(self)
        self.setWindowTitle("Brook")
        self.resize(1040, 760)
        self.setCentralWidget(self._build_body())
        self.status = StatusBar(engine.name, self)
        self.setStatusBar(self.status)
        self.context_meter = ContextMeter(session, self.input.toPlainText)
        self.status.addPermanentWidget(self.context_meter)
        self.load_dialog = LoadProgressDialog(session, self)      # progress and Cancel of a model load

        self.sending = Sending(session, self.status, self)
        self.models = ModelsMenu(session, self.sending.idle, self)
        self.chats = ChatCommands(session, self, self.status, self.refresh_history)
        self.appearance = Appearance(self, session, self.status, self._relayout)
        self.inspector_dock = install_inspector(self, self.coalescer, session, store, watchdog=lambda: self.watchdog)
        self.messages = MessageActions(session, self, self.inspector_dock.inspect)
        self.replies = ReplyPainting(session, self.coalescer, lambda: self.chat, self.status,
                                     lambda stop: self._set_send_mode(stop=stop), self.messages.decorate,
                                     self._reply_painted)
        self.server_menu = ServerMenu(session, self, self._error_notice, self.status)
        self.state = WindowState(self, session, self.sidebar, self.splitter, self._delete_action())
        self.side.attach(self.state.delete, self.state.delete_action, self.state.undo_action)
        self.menus = build_menus(self, self._menu_table())
        self.language = LanguageSwitch(self, [self.history, self.search_panel.results], self._rebuild_texts)
        self._wire()

        apply_style(self)
        self._set_send_mode(stop=False)
        self.refresh_history()
        if store is not None and store.problem:
            self._error_notice(f"⚠ {store.problem}")
        self._refresh_welcome()
        if store is not None:
            self.state.restore()
        self.input.setFocus()
        self._first_paint = FirstPaint(self, self.finish_start)

    # -- building ----------------------------------------------------------------------------------------
    def _build_body(self) -> QSplitter:
        splitter = QSplitter()
        self.splitter = splitter
        self.side = ChatSidebar(self.session, self.new_chat, self)      # New chat, search, the grouped chat list
        self.sidebar, self.history = self.side.panel, self.side.chats
        self.new_button, self.search_panel = self.side.new_button, self.side.search
        splitter.addWidget(self.sidebar)
        central = QWidget()
        splitter.addWidget(central)
        splitter.setStretchFactor(1, 1)
        splitter.setCollapsible(0, True)
        splitter.setCollapsible(1, False)
        splitter.setSizes([220, 820])
        root = QVBoxLayout(central)
        root.setContentsMargins(0, 0, 0, 0)
        root.setSpacing(0)
        self.pane = ChatPane(self.session, root, [self._wire_message, lambda w: self.messages.decorate(w)],
                             lambda chat: self.language.skip.append(chat),   # made anew after a switch
                             lambda: self.context_meter.schedule())
        self.welcome = self.pane.welcome
        bottom = QWidget()
        bottom.setObjectName("inputBar")
        row = QHBoxLayout(bottom)
        row.setContentsMargins(12, 8, 12, 12)
        self.input = ChatInput()
        self.input.setAccessibleName(self.tr("Message to send"))
        self.send_button = QPushButton(self.tr("Send"))
        self.send_button.setObjectName("sendButton")
        self.send_button.setMinimumWidth(64)
        self.attachments = AttachmentsBar(self.session, self.input)
        row.addWidget(self.attachments.button, 0, Qt.AlignmentFlag.AlignBottom)
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        root.addWidget(self.attachments)
        root.addWidget(bottom)
        return splitter

    @property
    def chat(self) -> ChatView:
        """The message list, made the first time it is needed (``app.ui.window.chat_pane``)."""
        return self.pane.chat

    @property
    def first_painted_at(self) -> float | None:
        """When the window's first frame was painted (Unix time, s), or None before."""
        return self._first_paint.painted_at

    def finish_start(self) -> None:
        """The second step of the start (after the first paint): make the message list, restore the last chat.
        Runs once; safe to call again."""
        if self._started:
            return
        self._started = True
        self._first_paint.remove()
        waiter, self._start_waiter = self._start_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        self.chat          # noqa: B018 - made now, in the first idle moment, not when the first reply arrives
        if self.session.store is not None:
            self.state.restore_chat()
            if "app.core.history.schema" not in sys.modules:
                # reading a chat checks its rows with pydantic models: a 0.3 s import, on the loop when the first
                # chat is opened (a click froze the window that long); imported off it now
                threading.Thread(target=warm_schema, name="brook-warm-schema", daemon=True).start()
        self._refresh_welcome()

    def _wire(self) -> None:
        """The widgets' signals to the session and the features (the message list's: ``chat_pane``)."""
        self.input.submitted.connect(self.send)
        self.input.escape.connect(self.stop)
        self.input.textChanged.connect(self.context_meter.schedule)
        self._input_filter = InputFilter(self.attachments)
        self.input.installEventFilter(self._input_filter)
        self.input.viewport().installEventFilter(self._input_filter)
        self.send_button.pressed.connect(self.attachments.compose_into_input)   # before clicked reads the input
        self.send_button.clicked.connect(self._on_send_button)
        self.search_panel.open_requested.connect(self.open_hit)
        self.search_panel.closed.connect(self.input.setFocus)
        self.welcome.prompt_chosen.connect(lambda text: self.send(text))

    def _delete_action(self) -> QAction:
        """Delete chat: the Delete key while the chat list has the focus (also in the Chat menu)."""
        action = QAction(self.tr("Delete chat"), self)
        action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(lambda: self.side.delete_selected())
        self.history.addAction(action)
        return action

    def _menu_table(self) -> dict[MenuKey, list[Entry]]:
        """The menu bar, top to bottom (``app.ui.window.menus``)."""
        state, server, side = self.state, self.server_menu, self.side
        stop = Item(self.tr("Stop"), self.stop, QKeySequence(Qt.Key.Key_Escape))
        return {
            MenuKey.FILE: [
                self.models.entries(),
                Item(self.tr("New chat"), self.new_chat, QKeySequence.StandardKey.New),
                Item(self.tr("&Open model (GGUF)…"), self.models.choose_model, QKeySequence.StandardKey.Open),
                Item(self.tr("&Settings…"), self.edit_settings, "Ctrl+,"),
                SEPARATOR,
                Item(self.tr("&Quit"), self.close, "Ctrl+Q"),   # StandardKey.Quit is empty on Windows
                SEPARATOR,
                Item(self.tr("&Export this chat…"), lambda: self.chats.export(current_only=True), "Ctrl+E"),
                Item(self.tr("Export &all chats…"), lambda: self.chats.export(current_only=False)),
                Item(self.tr("&Import chats (JSON)…"), self.chats.import_chats),
            ],
            MenuKey.CHAT: [
                stop,
                Item(self.tr("&Regenerate last reply"), lambda: self.regenerate(), "Ctrl+R"),
                Item(self.tr("Focus input"), self.input.setFocus, "Ctrl+L"),
                SEPARATOR,
                Item(self.tr("&Search all chats"), self.search_panel.focus_query, QKeySequence.StandardKey.Find),
                Item(self.tr("Chat &settings (system prompt, preset)…"), self.chats.chat_settings, "Ctrl+Shift+,"),
                Item(self.tr("Re&name chat…"), self.chats.rename_chat, "F2"),
                Item(self.tr("&Duplicate chat"), lambda: self.messages.branch(None)),
                SEPARATOR,
                side.pin_action,
                Submenu(self.tr("&Move to folder"), about_to_show=side.fill_move_menu, name="moveToFolder"),
                side.new_folder_action,
                SEPARATOR,
                state.delete_action,
                state.undo_action,
            ],
            MenuKey.VIEW: [*self.appearance.entries(), self.inspector_dock.toggleViewAction(), state.sidebar_action],
            MenuKey.SERVER: [server.connect_action, server.local_action, SEPARATOR, server.serve_action],
            MenuKey.HELP: [
                Item(self.tr("&Keyboard shortcuts"), lambda: open_shortcuts(self),
                     QKeySequence.StandardKey.HelpContents),
                Item(self.tr("&About Brook"), lambda: show_about(self, self.session.engine.name, str(data_dir()))),
            ],
        }

    # -- user actions ------------------------------------------------------------------------------------
    def _on_send_button(self) -> None:
        if self.session.generating:
            self.stop()
        else:
            self.send()

    def send(self, text: str | None = None, params: GenerationParams | None = None) -> Message | None:
        """Send ``text`` (default: the input box) and start the reply; see ``ChatSession.send``."""
        if text is None:
            text = self.input.toPlainText()
        if self.session.generating and text.strip():
            self.sending.queue_message(text)      # typed while the reply streams: sent when it ends
            self.input.clear()
            return None
        self.sending.before_send()
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

    def open_hit(self, conv_id: int, message_id: int) -> MessageWidget | None:
        """Open the chat of a search hit and show its message (scrolled into view, briefly outlined).

        Args:
            conv_id: the hit's conversation (``Store`` id).
            message_id: the hit's message (``Message.db_id``); 0 for a title hit, which opens the chat only.

        Returns:
            The message's widget, or None (a title hit, or the message is gone).
        """
        from app.ui.window.search_panel import show_hit

        self.open_conversation(conv_id)
        self.side.reveal(conv_id)               # a chat in a closed folder: the folder opens
        self.context_meter.schedule()
        return show_hit(self.chat, self.session.conversation, message_id)

    # -- model and settings ------------------------------------------------------------------------------
    async def load_model(self) -> bool:
        """Load the engine off the loop (the window stays responsive and shows progress); meanwhile, once the
        window's first frame is painted (``finish_start``), the renderer pays its one-time costs (lexers off the
        loop, the view's on it). Returns success."""
        loading = asyncio.ensure_future(self.session.load())
        if not self._started and self.isVisible():
            self._start_waiter = asyncio.get_running_loop().create_future()
            await self._start_waiter
        self.finish_start()                        # (a window never shown: now)
        from app.core.render.highlight import warm_up as warm_up_lexers
        from app.ui.messages.markdown_view import warm_up as warm_up_view

        self._lexers_warm = asyncio.get_running_loop().run_in_executor(None, warm_up_lexers)
        warm_up_view()
        return await loading

    def _open_engine(self, path: str) -> Engine:
        """File → Open model: the one way to open an engine (the launcher replaces this with its own options)."""
        from app.engine.open import EngineSpec, open_engine

        return open_engine(EngineSpec(model_path=path, n_ctx=self.session.settings.n_ctx))

    def edit_settings(self) -> None:
        """Settings…: a new watchdog threshold and a new language apply at once."""
        from app.ui.dialogs.settings import edit_settings

        before = edit_settings(self.session, self, model=self.models.model_info())
        if before is None:
            return
        settings = self.session.settings
        if settings.watchdog_threshold_ms != before.watchdog_threshold_ms:
            self.watchdog = retune_loop_watch(self.watchdog, settings.watchdog_threshold_ms)
            self.inspector_dock.set_watchdog(self.watchdog)
        self.language.apply(settings.language)    # a new language applies at once (app.ui.look.retranslate)
        if settings.theme != before.theme:
            self.appearance.set_theme(settings.theme)  # and a new theme (View → Theme ticks it too)

    # -- history list ------------------------------------------------------------------------------------
    def refresh_history(self) -> None:
        """The chat list again from the history (``app.ui.window.sidebar``)."""
        self.side.refresh()

    # -- SessionListener: what the session reports -------------------------------------------------------
    def conversation_shown(self, conv: Conversation) -> None:
        running = list(self.session.running.values())
        self.coalescer.end_finishing()     # replies that ended with text still to paint: their views go away
        if self.pane.made_yet is not None or conv.messages or running:   # (an empty chat before the list: none)
            self.chat.show_conversation(conv)
        for g in running:
            self.replies.attach(g, fresh_view=True)
        self._set_send_mode(stop=self.session.generating)
        self.side.select_shown()              # the list itself changes only when the history does
        self._refresh_welcome()
        if not self.history.hasFocus():       # a chat opened from the list keeps the list focused (Delete works)
            self.input.setFocus()

    def message_added(self, conv: Conversation, msg: Message) -> None:
        if conv is self.session.conversation:
            self.chat.add(msg)
            self._refresh_welcome()

    def _refresh_welcome(self) -> None:
        self.pane.refresh()

    def _relayout(self) -> None:
        """Lay the shown chat out again (a new text size, a new language: its message widgets are made anew), and
        the chat list (its headings' fonts and texts)."""
        self.conversation_shown(self.session.conversation)
        self.refresh_history()

    def _rebuild_texts(self) -> None:
        """After a language switch: the texts composed from several pieces, and the shown chat."""
        self._refresh_welcome()
        if self.context_meter.usage is not None:
            self.context_meter.show_usage(self.context_meter.usage)
        if self.pane.made_yet is not None:      # renders hold the code blocks' Copy link in the old language
            self.pane.made_yet.renders.clear()
            self.pane.made_yet.parked.clear()   # (streaming replies of other chats: their widgets too)
        self._relayout()

    def message_removed(self, conv: Conversation, msg: Message) -> None:
        if conv is self.session.conversation:
            self.chat.remove(msg)

    # replies: ``app.ui.window.replies``
    def reply_started(self, gen: Generation) -> None:
        self.replies.started(gen)

    def reply_changed(self, gen: Generation) -> None:
        self.replies.changed(gen)

    def reply_stopping(self, gen: Generation) -> None:
        self.replies.stopping(gen)

    def reply_ended(self, gen: Generation) -> None:
        self.replies.ended(gen)

    def _reply_painted(self, reply: Message) -> None:
        """Everything of ``reply`` that arrived is painted and its view finished."""
        self.sending.reply_finished()
        self.context_meter.schedule()
        self.reply_finished.emit(reply)

    def busy_changed(self) -> None:
        self.side.mark_busy()

    def history_changed(self) -> None:
        self.refresh_history()

    def model_state_changed(self, state: ModelState) -> None:
        self.load_dialog.set_state(state)
        self._refresh_welcome()
        self.status.set_loading(state is ModelState.LOADING)
        if state is ModelState.LOADING:
            self.status.set_state(self.tr("loading model…"))
            self.status.set_model(self.session.engine.name)
        elif state is ModelState.ERROR:
            cancelled = self.session.load_cancel.is_set()
            self.status.set_state(self.tr("model load cancelled") if cancelled else self.tr("model failed to load"))
            self.context_meter.schedule()
            self.model_ready.emit(False)
        elif state is ModelState.UNLOADED:
            self.status.set_state(self.tr("model unloaded to free memory (loads again with your next message)"))
        else:
            self.status.set_state(self.tr("ready"))
            self.status.set_model(self.session.engine.name, self.session.engine)
            self.sending.idle.touch()
            self.context_meter.schedule()
            self.model_ready.emit(True)

    def load_progress(self, fraction: float) -> None:
        self.status.set_progress(fraction)
        self.load_dialog.set_fraction(fraction)

    def _wire_message(self, widget: MessageWidget) -> None:
        """A reply's "Resend" link (a reply that ended without text: ``app.core.chat.notes``)."""
        from app.core.chat.notes import resend

        if not widget.property("brookResend"):           # the list reuses widgets: wire each one once
            widget.setProperty("brookResend", True)
            widget.resend_requested.connect(lambda msg: resend(self.session, msg))

    def _error_notice(self, text: str) -> None:
        self.chat.add_notice(text, NOTICE_STYLE[NoticeKind.ERROR])

    def notice(self, text: str, kind: NoticeKind) -> None:
        from app.ui.look.retranslate import core_text  # the core's English notices in the UI language

        self.chat.add_notice(core_text(text), NOTICE_STYLE[kind])
        self._refresh_welcome()

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
        self.models.pause_downloads()           # Hub downloads keep their part, to resume next time
        await self.session.shutdown(join_timeout_s)

    def changeEvent(self, event: QEvent) -> None:
        """A live switch of the system theme (light <-> dark) restyles the window, not only the replies: the
        stylesheet's colours are fixed per theme, so without this user text turned near-invisible."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self.language.retranslate()       # a live language switch (Settings → Language)
        if event.type() in (QEvent.Type.ApplicationPaletteChange, QEvent.Type.PaletteChange) \
                and is_dark() != self._styled_dark:
            self._styled_dark = is_dark()
            apply_style(self)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.session.store is not None:
            self.state.remember()
        self.session.closing = True
        self.session.stop_all()
        super().closeEvent(event)
