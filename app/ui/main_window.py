"""The main window: message list, prompt box, Send/Stop, and a status bar with the latency breakdown.

Thin by design: it calls ``app.core.generation.generate`` as an asyncio task (Stop = ``task.cancel()``), the
``Coalescer`` paints, and the engine does the work in its worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.errors import BrookError
from app.core.generation import StreamSettings, generate
from app.core.generation import shutdown as shutdown_generations
from app.core.metrics import now
from app.core.scheduler import scheduler_for
from app.core.settings import AppSettings
from app.core.store import Store
from app.core.types import GenerationParams
from app.engine.base import Engine
from app.ui.chat_view import ChatInput, ChatView, MessageWidget, format_figures
from app.ui.coalescer import Coalescer
from app.ui.style import apply_style

log = logging.getLogger("brook.ui")


class MainWindow(QMainWindow):
    """Brook's window. ``load_model()`` (a coroutine) loads the engine in the background; ``send()`` starts a
    reply; ``stop()`` stops it. Signals: ``reply_finished(Message)`` when a reply reaches a final status,
    ``model_ready(bool)`` when loading ends (False on error)."""

    reply_finished = Signal(object)
    model_ready = Signal(bool)

    #: While streaming, the partial reply is saved this often (ms), so a crash loses at most this much.
    AUTOSAVE_MS = 1000

    def __init__(self, engine: Engine, settings: AppSettings | None = None, store: Store | None = None) -> None:
        super().__init__()
        self.engine = engine
        self.store = store
        self.settings = settings or AppSettings()
        self.scheduler = scheduler_for(engine)    # shared by every window and chat on this engine
        self.conversation = Conversation(system_prompt=self.settings.system_prompt or None)
        self.params: GenerationParams = self.settings.generation
        self.coalescer = Coalescer(self)
        self.coalescer.painted.connect(self._on_painted)
        self._last_live = 0.0
        self._tasks: dict[int, asyncio.Task[Message]] = {}     # reply id → its task, while streaming
        self._replies: dict[int, Message] = {}
        self._reply_conv: dict[int, Conversation] = {}         # the conversation each streaming reply is in
        self._all_streams: list[Message] = []                  # replies whose workers may still run
        self._saved_chunks: dict[int, int] = {}
        self._all_tasks: list[asyncio.Task[Message]] = []        # includes stopped ones still unwinding
        self._widgets: dict[int, MessageWidget] = {}
        self._stop_times: dict[int, tuple[float, int]] = {}   # reply id → (stop time, painted chunks then)
        self.model_state = "loading"
        self.load_error: str | None = None
        self._loaded = asyncio.Event()
        self.loading: asyncio.Future[None] | None = None    # the engine's load, while it runs in a thread
        self._closing = False

        self.setWindowTitle("Brook")
        self.resize(1040, 760)
        splitter = QSplitter()
        side = QWidget()
        side.setObjectName("sidebar")
        side_lay = QVBoxLayout(side)
        side_lay.setContentsMargins(8, 8, 8, 8)
        self.new_button = QPushButton("+  New chat")
        self.new_button.setToolTip("New chat (Ctrl+N)")
        self.new_button.clicked.connect(self.new_chat)
        self.history = QListWidget()
        self.history.setObjectName("history")
        self.history.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.history.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.history.setUniformItemSizes(True)
        self.history.itemActivated.connect(self._on_history_item)
        self.history.itemClicked.connect(self._on_history_item)
        side_lay.addWidget(self.new_button)
        side_lay.addWidget(self.history, 1)
        side.setMinimumWidth(170)
        side.setMaximumWidth(320)
        if store is None:
            side.hide()
        splitter.addWidget(side)
        central = QWidget()
        splitter.addWidget(central)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([220, 820])
        root = QVBoxLayout(central)
        root.setContentsMargins(0, 0, 0, 0)
        root.setSpacing(0)
        self.chat = ChatView()
        root.addWidget(self.chat, 1)
        bottom = QWidget()
        bottom.setObjectName("inputBar")
        row = QHBoxLayout(bottom)
        row.setContentsMargins(12, 8, 12, 12)
        self.input = ChatInput()
        self.input.submitted.connect(self.send)
        self.input.escape.connect(self.stop)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("sendButton")
        self.send_button.setMinimumWidth(90)
        self.send_button.setToolTip("Send (Enter)")
        self.send_button.clicked.connect(self._on_send_button)
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        root.addWidget(bottom)
        self.setCentralWidget(splitter)
        self._autosave = QTimer(self)
        self._autosave.setInterval(self.AUTOSAVE_MS)
        self._autosave.timeout.connect(self._save_streaming)

        sb = self.statusBar()
        self.model_label = QLabel(engine.name)
        self.model_label.setObjectName("modelLabel")
        self.state_label = QLabel("loading…")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(140)
        self.progress.setRange(0, 0)          # busy indicator until the engine reports progress
        self.ttft_label = QLabel("TTFT –")
        self.rate_label = QLabel("– tok/s")
        self.ttft_label.setToolTip("Time to first token of the last reply (prefill + first paint)")
        self.rate_label.setToolTip("Decode speed of the last reply")
        sb.addWidget(self.model_label)
        sb.addWidget(self.state_label)
        sb.addWidget(self.progress)
        self.queue_label = QLabel("")
        self.queue_label.setToolTip("Chunks waiting between the model and the window (live), and the puts that "
                                    "waited > 100 ms on a full queue (backpressure)")
        sb.addPermanentWidget(self.queue_label)
        sb.addPermanentWidget(self.ttft_label)
        sb.addPermanentWidget(self.rate_label)

        stop_action = QAction("Stop", self)
        stop_action.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        stop_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        stop_action.triggered.connect(self.stop)
        self.addAction(stop_action)
        new_action = QAction("New chat", self)
        new_action.setShortcut(QKeySequence.StandardKey.New)
        new_action.triggered.connect(self.new_chat)
        self.addAction(new_action)
        menu = self.menuBar()
        file_menu = menu.addMenu("&File")
        file_menu.addAction(new_action)
        open_action = QAction("&Open model (GGUF)…", self)
        open_action.setShortcut(QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self.choose_model)
        file_menu.addAction(open_action)
        settings_action = QAction("&Settings…", self)
        settings_action.setShortcut(QKeySequence("Ctrl+,"))
        settings_action.triggered.connect(self.edit_settings)
        file_menu.addAction(settings_action)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        chat_menu = menu.addMenu("&Chat")
        chat_menu.addAction(stop_action)
        regen_action = QAction("&Regenerate last reply", self)
        regen_action.setShortcut(QKeySequence("Ctrl+R"))
        regen_action.triggered.connect(lambda: self.regenerate())
        self.addAction(regen_action)
        chat_menu.addAction(regen_action)
        focus_action = QAction("Focus input", self)
        focus_action.setShortcut(QKeySequence("Ctrl+L"))
        focus_action.triggered.connect(self.input.setFocus)
        self.addAction(focus_action)
        chat_menu.addAction(focus_action)

        delete_action = QAction("Delete chat", self)
        delete_action.setShortcut(QKeySequence.StandardKey.Delete)
        delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        delete_action.triggered.connect(self.delete_selected_chat)
        self.history.addAction(delete_action)

        apply_style(self)
        self._set_idle(True)
        self.refresh_history()
        self._save_warned = False
        if store is not None and store.problem:
            self.chat.add_notice(f"⚠ {store.problem}", "errorNotice")
        from app.ui.features import DailyFeatures  # search, model library, export, chat settings, help (issue 11)

        self.features = DailyFeatures(self)
        self.input.setFocus()

    # model and settings --------------------------------------------------------------------------------
    def choose_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a GGUF model", "", "GGUF models (*.gguf);;All files (*)")
        if path:
            self._switch_task = asyncio.ensure_future(self.switch_model(path))

    async def switch_model(self, path: str) -> bool:
        """Load the GGUF at ``path`` instead of the current model (stopping a reply first). A file that is not
        a readable GGUF is refused before anything is unloaded; if llama.cpp then fails to load it, the previous
        model is loaded again, so a bad file never leaves the window without a model."""
        from app.engine.base import EngineError
        from app.engine.llama import LlamaEngine
        from app.engine.models import check_gguf

        try:
            check_gguf(path)
        except EngineError as exc:
            self.chat.add_notice(f"⚠ {exc}", "errorNotice")
            return False
        self.stop()
        old = self.engine
        self._loaded.clear()
        loop = asyncio.get_running_loop()
        for reply in self._all_streams:         # the old model's workers must be done before it is freed
            if reply.stream is not None:
                await reply.stream.wait_closed()
        await loop.run_in_executor(None, old.unload)
        self.engine = LlamaEngine(path, n_ctx=self.settings.n_ctx)
        self.scheduler = scheduler_for(self.engine)
        self.model_label.setText(self.engine.name)
        ok = await self.load_model()
        if ok:
            self.settings.model_path = path
            self.settings.recent_models = [path, *[p for p in self.settings.recent_models if p != path]][:10]
            self._persist_settings()
            return True
        failed = self.load_error
        self.engine = old
        self.scheduler = scheduler_for(old)
        self.model_label.setText(old.name)
        if await self.load_model():
            self.chat.add_notice(f"Kept {old.name}: the other model could not be loaded ({failed}).", "notice")
        return False

    def edit_settings(self) -> None:
        from app.ui.settings_dialog import SettingsDialog

        dlg = SettingsDialog(self.settings, self)
        if dlg.exec():
            self.settings = dlg.result_settings()
            self.params = self.settings.generation
            self._persist_settings()

    def _persist_settings(self) -> None:
        if self.store is None:          # tests and embedded windows leave the user's settings alone
            return
        try:
            self.settings.save()
        except OSError:
            log.exception("saving settings failed")

    # history -------------------------------------------------------------------------------------------
    def refresh_history(self) -> None:
        if self.store is None:
            return
        self.history.blockSignals(True)
        self.history.clear()
        for info in self.store.list_conversations():
            item = QListWidgetItem(info.title)
            item.setData(Qt.ItemDataRole.UserRole, info.id)
            item.setToolTip(info.title)
            self.history.addItem(item)
            if info.id == self.conversation.id:
                self.history.setCurrentItem(item)
        self.history.blockSignals(False)

    def _on_history_item(self, item: QListWidgetItem) -> None:
        conv_id = item.data(Qt.ItemDataRole.UserRole)
        if conv_id is not None and conv_id != self.conversation.id:
            self.open_conversation(int(conv_id))

    def open_conversation(self, conv_id: int) -> None:
        """Show a saved conversation (stops a streaming reply first; it is saved as stopped)."""
        if self.store is None:
            return
        self.stop()
        try:
            conv = self.store.load_conversation(conv_id)
        except KeyError:
            self.refresh_history()
            return
        self.conversation = conv
        self.chat.clear()
        self._widgets.clear()
        for m in conv.messages:
            self.chat.add(m)
        self.chat.scroll_to_bottom()
        self.input.setFocus()

    def delete_selected_chat(self) -> None:
        item = self.history.currentItem()
        if item is None or self.store is None:
            return
        conv_id = int(item.data(Qt.ItemDataRole.UserRole))
        if conv_id == self.conversation.id:
            self.new_chat()
        self.store.delete_conversation(conv_id)
        self.refresh_history()

    def _save(self, msg: Message, conv: Conversation | None = None) -> None:
        if self.store is None:
            return
        conv = conv or self.conversation
        try:
            new = conv.id is None
            if new:
                first = msg.text.strip().splitlines()[0] if msg.text.strip() else "New chat"
                conv.title = first[:60] + ("…" if len(first) > 60 else "")
            self.store.save_message(conv, msg)
            if new:
                self.refresh_history()
        except Exception as exc:  # the chat must go on even if the disk is full
            log.error("saving message %s failed: %s", msg.id, exc)
            if not self._save_warned:
                self._save_warned = True
                self.chat.add_notice(f"⚠ This chat can't be saved to the history ({exc}); it stays on screen "
                                     "until you close Brook.", "errorNotice")

    def _save_streaming(self) -> None:
        for rid in list(self._tasks):
            reply = self._replies.get(rid)
            if reply is not None and self._saved_chunks.get(rid) != reply.chunks:
                self._saved_chunks[rid] = reply.chunks
                self._save(reply, self._reply_conv.get(rid))

    # model ---------------------------------------------------------------------------------------------
    async def load_model(self) -> bool:
        """Load the engine off the loop; the window stays responsive and shows progress. Returns success."""
        self.model_state = "loading"
        self.state_label.setText("loading model…")
        self.progress.show()
        loop = asyncio.get_running_loop()

        def progress(fraction: float) -> None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._on_progress, fraction)

        loading = self.loading = loop.run_in_executor(None, self.engine.load, progress)
        from app.core.highlight import warm_up as warm_up_lexers

        self._lexers_warm = loop.run_in_executor(None, warm_up_lexers)
        self._warm_up_renderer()
        try:
            await loading
        except Exception as exc:
            self.load_error = str(exc)
            self.model_state = "error"
            log.error("model load failed: %s", exc, exc_info=not isinstance(exc, BrookError))
            self.progress.hide()
            self.state_label.setText("model failed to load")
            self.chat.add_notice(f"⚠ {exc}", "errorNotice")
            self.model_ready.emit(False)
            return False
        self.model_state = "idle"
        self.progress.hide()
        self.state_label.setText("idle")
        self.model_label.setText(self.engine.name)
        self._loaded.set()
        self.model_ready.emit(True)
        return True

    def _warm_up_renderer(self) -> None:
        """Pay the one-time costs (pygments lexer import, monospace font and layout set-up: ~30 ms here) while
        the model loads, not in the first render tick of the first reply."""
        from app.ui.markdown_view import MarkdownView

        view = MarkdownView(None)
        view.resize(400, 200)
        view.append_text("Warm **up** `x`\n\n```python\ndef f(x):\n    return x\n```\n\n| a |\n|---|\n| 1 |\n")
        view.refresh()
        view.finish()
        view.document().size()
        view.deleteLater()

    def _on_progress(self, fraction: float) -> None:
        if 0.0 < fraction < 1.0:
            self.progress.setRange(0, 100)
            self.progress.setValue(int(fraction * 100))

    # sending and stopping ------------------------------------------------------------------------------
    @property
    def generating(self) -> bool:
        return bool(self._tasks)

    def _on_send_button(self) -> None:
        if self.generating:
            self.stop()
        else:
            self.send()

    def send(self, text: str | None = None, params: GenerationParams | None = None) -> Message | None:
        """Send ``text`` (default: the input box) and start the reply. Returns the reply message, or None when
        there is nothing to send, a reply is already streaming, or the model failed to load."""
        if text is None:
            text = self.input.toPlainText()
        if not text.strip() or self.generating or self._closing:
            return None
        if self.model_state == "error":
            self.chat.add_notice(f"⚠ No model is loaded: {self.load_error}", "errorNotice")
            return None
        self.input.clear()
        user = self.conversation.add(Message(Role.USER, text))
        self.chat.add(user)
        self._save(user)
        return self._start_reply(params)

    def regenerate(self, params: GenerationParams | None = None) -> Message | None:
        """Replace the last reply with a new one (Ctrl+R). Returns the new reply, or None when the last
        message is not a finished reply."""
        msgs = self.conversation.messages
        if self.generating or self._closing or self.model_state == "error" or len(msgs) < 2 \
                or msgs[-1].role is not Role.ASSISTANT:
            return None
        old = msgs.pop()
        if self.store is not None and old.db_id is not None:
            self.store.delete_message(old.db_id)
        self.chat.remove(old)
        self._widgets.pop(old.id, None)
        return self._start_reply(params)

    def _start_reply(self, params: GenerationParams | None) -> Message:
        reply = self.conversation.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
        reply.model = self.engine.name
        self._save(reply)
        self._autosave.start()
        widget = self.chat.add(reply)
        self._widgets[reply.id] = widget
        assert widget.view is not None
        view = widget.view
        self.coalescer.attach(reply, view.append_text, view.refresh)
        self._replies[reply.id] = reply
        self._all_streams = [m for m in self._all_streams if m.stream is None or m.stream.alive]
        self._all_streams.append(reply)
        self._reply_conv[reply.id] = self.conversation
        task = asyncio.ensure_future(self._run_reply(reply, params or self.params))
        self._tasks[reply.id] = task
        self._all_tasks = [t for t in self._all_tasks if not t.done()]
        self._all_tasks.append(task)
        self._set_idle(False)
        return reply

    async def _run_reply(self, reply: Message, params: GenerationParams) -> Message:
        conv = self._reply_conv[reply.id]
        settings = StreamSettings(first_token_timeout_s=self.settings.first_token_timeout_s,
                                  total_timeout_s=self.settings.total_timeout_s)
        try:
            if not self._loaded.is_set():
                await self._loaded.wait()
            await generate(self.engine, self.scheduler, conv, reply, params,
                           settings=settings, on_update=self._on_update)
        except asyncio.CancelledError:
            reply.status, reply.stop_reason = MessageStatus.STOPPED, reply.stop_reason or "user"
            self._finish_reply(reply)
            raise
        return reply

    def stop(self) -> None:
        """Stop every streaming reply now: paint what already arrived, freeze the view, cancel the task.

        The window is idle at once (a new message can be sent right away); the worker finishes in the
        background and the engine slot is released when it returns."""
        for rid, task in list(self._tasks.items()):
            reply = self._replies[rid]
            if task.done():
                continue
            self.coalescer.flush(reply)
            self._stop_times[rid] = (now(), self.coalescer.painted_chunks(reply))
            self.coalescer.freeze(reply)
            task.cancel()
            reply.status, reply.stop_reason = MessageStatus.STOPPED, "user"
            self._finish_reply(reply)

    def chunks_painted_after_stop(self, reply: Message) -> int:
        """Chunks of ``reply`` painted after Stop was pressed (0 unless something is wrong)."""
        stop = self._stop_times.get(reply.id)
        if stop is None:
            return 0
        return self.coalescer.painted_chunks(reply) - stop[1]

    def _on_update(self, reply: Message) -> None:
        if reply.id not in self._tasks:
            # finished already: only the final figures (computed after the last paint) may still arrive
            widget = self._widgets.get(reply.id)
            if widget is not None and reply.status.final:
                widget.update_status()
            return
        widget = self._widgets.get(reply.id)
        if widget is not None:
            widget.update_status()
        if reply.status is MessageStatus.WAITING and self.scheduler.position() > 0:
            self.state_label.setText("waiting for the model…")
        elif reply.status is MessageStatus.PREFILL:
            self.state_label.setText("prefill…")
        elif reply.status is MessageStatus.STREAMING:
            self.state_label.setText("generating…")
        elif reply.status.final:
            self._finish_reply(reply)

    def _finish_reply(self, reply: Message) -> None:
        """Once per reply: final paint (unless stopped), finish the renderer, save, show the figures."""
        if self._tasks.pop(reply.id, None) is None:
            return
        stopped = reply.status is MessageStatus.STOPPED
        if not stopped:
            self.coalescer.flush(reply)
        self.coalescer.detach(reply)
        if reply.stream_metrics is not None:
            reply.metrics = reply.stream_metrics.summary().as_dict()
        widget = self._widgets.get(reply.id)
        if widget is not None:
            if widget.view is not None and not stopped:
                widget.view.finish()
            widget.update_status()
        conv = self._reply_conv.pop(reply.id, self.conversation)
        self._replies.pop(reply.id, None)
        self._saved_chunks.pop(reply.id, None)
        self._save(reply, conv)
        if not self._tasks:
            self._autosave.stop()
            self.state_label.setText("idle")
        self._show_figures(reply)
        self._set_idle(not self._tasks)
        self.reply_finished.emit(reply)

    def _on_painted(self, reply: Message, _n: int) -> None:
        """Live figures while streaming, refreshed at most 4 times a second."""
        t = now()
        if t - self._last_live < 0.25:
            return
        self._last_live = t
        m = reply.stream_metrics
        stream = reply.stream
        if m is None:
            return
        depth = stream.queue_depth if stream is not None else 0
        self.queue_label.setText(f"queue {depth} (≤{m.queue_high_water}) · waits {m.backpressure_waits}")
        if len(m.produced) > 1:
            span = m.produced[-1] - m.produced[0]
            if span > 0:
                self.rate_label.setText(f"{(len(m.produced) - 1) / span:.1f} tok/s")

    def _show_figures(self, reply: Message) -> None:
        m = reply.metrics or {}
        ttft, rate = m.get("ttft_ms"), m.get("decode_tokens_per_s")
        self.ttft_label.setText(f"TTFT {ttft:.0f} ms" if ttft is not None else "TTFT –")
        self.rate_label.setText(f"{rate:.1f} tok/s" if rate else "– tok/s")
        _line, tip = format_figures(m)
        self.ttft_label.setToolTip("Last reply\n" + tip)
        self.rate_label.setToolTip("Last reply\n" + tip)
        self.queue_label.setText(f"queue ≤{m.get('queue_high_water', 0)} · waits {m.get('backpressure_waits', 0)}")

    def _set_idle(self, idle: bool) -> None:
        if idle:
            self.send_button.setText("Send")
            self.send_button.setToolTip("Send (Enter)")
            self.send_button.setProperty("stopMode", False)
        else:
            self.send_button.setText("Stop")
            self.send_button.setToolTip("Stop generating (Esc)")
            self.send_button.setProperty("stopMode", True)
        self.send_button.style().unpolish(self.send_button)
        self.send_button.style().polish(self.send_button)

    def new_chat(self) -> None:
        """Start an empty conversation (stops a streaming reply first)."""
        self.stop()
        self.conversation = Conversation(system_prompt=self.settings.system_prompt or None)
        self.chat.clear()
        self._widgets.clear()
        self.history.clearSelection()
        self.input.setFocus()

    # shutdown ------------------------------------------------------------------------------------------
    async def shutdown(self, join_timeout_s: float = 1.5) -> None:
        """Closing: stop replies (saved as stopped), cancel their tasks, wait (without blocking the loop, at most
        ``join_timeout_s``) for the workers, then free the model. Safe to call twice."""
        self._closing = True
        self.stop()
        tasks = [t for t in self._all_tasks if not t.done()]
        await shutdown_generations(tasks, [self.engine], join_timeout_s=join_timeout_s)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._closing = True
        self.stop()
        super().closeEvent(event)
