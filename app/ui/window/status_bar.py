"""The status bar: model name, the device it runs on (a GPU's name or "CPU"), its state (loading / prefill /
generating / idle) with load progress, and the last reply's figures (TTFT, tokens/s, queue) with the full latency
breakdown in the tooltips."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QWidget

from app.core.conversation import Message
from app.core.streaming.generation import Generation
from app.core.streaming.metrics import now
from app.core.streaming.provenance import device_label, device_name, runtime_facts

#: Live figures are refreshed at most this often while a reply streams (seconds).
LIVE_INTERVAL_S = 0.25


class StatusBar(QStatusBar):
    """Labels (public, tests read them): ``model_label``, ``device_label``, ``state_label``, ``progress``,
    ``queue_label``, ``ttft_label``, ``rate_label``."""

    def __init__(self, model_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_label = QLabel(model_name)
        self.model_label.setObjectName("modelLabel")
        self.device_label = QLabel("")         # where the loaded model runs; hidden until one is loaded
        self.device_label.setObjectName("deviceLabel")
        self.device_label.hide()
        self.state_label = QLabel(self.tr("loading…"))
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(140)
        self.progress.setRange(0, 0)          # busy indicator until the engine reports progress
        self.ttft_label = QLabel("TTFT –")
        self.rate_label = QLabel("– tok/s")
        self.ttft_label.setToolTip(self.tr("Time to first token of the last reply (prefill + first paint)"))
        self.rate_label.setToolTip(self.tr("Decode speed of the last reply"))
        self.queue_label = QLabel("")
        self.queue_label.setToolTip(self.tr("Chunks waiting between the model and the window (live), and the puts "
                                            "that waited > 100 ms on a full queue (backpressure)"))
        self.queue_label.hide()      # a figure for the inspector and tooltips, not for the status line
        self.note_label = QLabel("")           # a passing note (the text size): beside the state, never over it
        self.note_label.setObjectName("statusNote")
        self.note_label.hide()
        self._note_timer = QTimer(self)
        self._note_timer.setSingleShot(True)
        self._note_timer.timeout.connect(self.note_label.hide)
        self.addWidget(self.model_label)
        self.addWidget(self.device_label)
        self.addWidget(self.state_label)
        self.addWidget(self.progress)
        self.addWidget(self.note_label)
        self.addPermanentWidget(self.queue_label)
        self.addPermanentWidget(self.ttft_label)
        self.addPermanentWidget(self.rate_label)
        self._last_live = 0.0
        self._last_reply: Message | None = None

    def note(self, text: str, ms: int = 2000) -> None:
        """Show ``text`` beside the state for ``ms`` milliseconds (``showMessage`` would paint over the model name
        and the state)."""
        self.note_label.setText(text)
        self.note_label.show()
        self._note_timer.start(ms)

    def set_model(self, name: str, engine: object = None) -> None:
        """The model's name, and the device ``engine`` runs it on (``runtime_facts``: a GPU's name or "CPU",
        the layers on it in the tooltip); no device shown without a loaded local model."""
        self.model_label.setText(name)
        facts = runtime_facts(engine) if engine is not None else {}
        short = device_name(facts)
        self.device_label.setVisible(short is not None)
        self.device_label.setText(self.tr("on %1").replace("%1", short or ""))
        self.device_label.setToolTip(self.tr("The device the model runs on: %1").replace(
            "%1", device_label(facts) or ""))

    def set_state(self, text: str) -> None:
        self.state_label.setText(text)

    def set_loading(self, loading: bool) -> None:
        self.progress.setVisible(loading)
        if loading:
            self.progress.setRange(0, 0)

    def set_progress(self, fraction: float) -> None:
        if 0.0 < fraction < 1.0:
            self.progress.setRange(0, 100)
            self.progress.setValue(int(fraction * 100))

    def show_live(self, gen: Generation) -> None:
        """Queue depth and decode rate of a streaming reply, at most every ``LIVE_INTERVAL_S``."""
        t = now()
        if t - self._last_live < LIVE_INTERVAL_S:
            return
        self._last_live = t
        m = gen.metrics
        depth = gen.stream.queue_depth if gen.stream is not None else 0
        self.queue_label.setText(self.tr("queue %1 (≤%2) · waits %3").replace("%1", str(depth))
                                 .replace("%2", str(m.queue_high_water)).replace("%3", str(m.backpressure_waits)))
        rate = m.tokens_per_s()                # the same function as the reply's summary
        if rate is not None:
            self.rate_label.setText(f"{rate:.1f} tok/s")

    def show_reply(self, reply: Message) -> None:
        """A reply ended: show its figures now, and again when its final ones come (``update_reply``)."""
        self._last_reply = reply
        self.show_figures(reply.metrics)

    def update_reply(self, reply: Message) -> None:
        """``reply`` changed. Its final figures (TTFT needs the first paint, which may come after the reply ended;
        see ``app.core.streaming.generation``) are shown when it is the last reply that ended."""
        if reply is self._last_reply and reply.status.final:
            self.show_figures(reply.metrics)

    def show_figures(self, metrics: dict[str, Any] | None) -> None:
        """The figures of a finished reply (its ``Message.metrics``; ``decode_tokens_per_s`` is
        ``StreamMetrics.tokens_per_s()``, the function of the live figure too)."""
        from app.ui.messages.widget import format_figures  # (not at start-up: it comes with the message list)

        m = metrics or {}
        ttft, rate = m.get("ttft_ms"), m.get("decode_tokens_per_s")
        self.ttft_label.setText(f"TTFT {ttft:.0f} ms" if ttft is not None else "TTFT –")
        self.rate_label.setText(f"{rate:.1f} tok/s" if rate else "– tok/s")
        _line, tip = format_figures(m)
        self.ttft_label.setToolTip(self.tr("Last reply") + "\n" + tip)
        self.rate_label.setToolTip(self.tr("Last reply") + "\n" + tip)
        self.queue_label.setText(self.tr("queue ≤%1 · waits %2").replace("%1", str(m.get("queue_high_water", 0)))
                                 .replace("%2", str(m.get("backpressure_waits", 0))))
